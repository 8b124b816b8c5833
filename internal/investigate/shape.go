package investigate

import (
	"bytes"
	"strconv"
	"unicode/utf8"

	"github.com/keyguard/keyguard/internal/jsonkeys"
)

// maxFields bounds the field names kept from one value (hash fields or
// top-level JSON keys); a value with more is an open map, not a style.
const maxFields = 64

// String value kinds, as reported for a key or a write.
const (
	KindJSON      = "json"       // a JSON object: Fields are its top-level keys
	KindJSONArray = "json-array" // a JSON array
	KindInteger   = "integer"
	KindText      = "text"   // printable UTF-8 that is not JSON
	KindBinary    = "binary" // anything else
	KindEmpty     = "empty"
)

// stringShape tells what a string value looks like from its first bytes
// (it may be cut): a JSON object gives its top-level keys, at most
// maxFields (a key whose value the cut leaves out counts: its name is
// whole); other values give a kind only.
func stringShape(b []byte) (kind string, fields []string) {
	const space = " \t\n\r"
	v := bytes.TrimLeft(b, space)
	if len(v) == 0 {
		if len(b) == 0 {
			return KindEmpty, nil
		}
		return KindText, nil
	}
	switch v[0] {
	case '{':
		// An object that starts well: a key, or '}'.
		if keys := jsonkeys.Top(nil, v, maxFields, nil); len(keys) > 0 {
			return KindJSON, keys
		}
		if rest := bytes.TrimLeft(v[1:], space); len(rest) > 0 && rest[0] == '}' {
			return KindJSON, nil
		}
	case '[':
		return KindJSONArray, nil
	}
	if _, err := strconv.ParseInt(string(b), 10, 64); err == nil {
		return KindInteger, nil
	}
	if utf8.Valid(b) {
		for _, r := range string(b) {
			if r < 0x20 && r != '\t' && r != '\n' && r != '\r' {
				return KindBinary, nil
			}
		}
		return KindText, nil
	}
	return KindBinary, nil
}
