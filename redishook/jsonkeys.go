package redishook

import "github.com/keyguard/keyguard/internal/jsonkeys"

// jsonObjectKeys reports whether s is exactly one JSON object and calls
// fn with each of its top-level keys: jsonkeys.Valid, where the scanner
// and its fuzz test against encoding/json live.
func jsonObjectKeys(s string, fn func(key string)) bool { return jsonkeys.Valid(s, fn) }
