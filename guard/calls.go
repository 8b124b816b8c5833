package guard

import "strings"

// SetPairs reports whether args, the arguments of a go-redis command, call
// the guard's "set" operation (EVALSHA of sha, or EVAL of Script, on one
// key), and returns the field/value pairs it writes: ARGV[4..] of
// guard.lua, the fields the script sets besides ReservedField. sha is
// ScriptSHA(), computed once by the caller. It does not allocate.
//
// It lets a command hook (package redishook) check a guarded write's fields
// against the registry like an HSET's, without knowing the script.
func SetPairs(args []any, sha string) (pairs []any, ok bool) {
	// evalsha sha numkeys key op ns ttl field value …
	const first = 7
	if len(args) < first {
		return nil, false
	}
	name, _ := args[0].(string)
	body, _ := args[1].(string)
	switch {
	case strings.EqualFold(name, "evalsha"):
		if !strings.EqualFold(body, sha) {
			return nil, false
		}
	case strings.EqualFold(name, "eval"):
		if body != scriptSrc {
			return nil, false
		}
	default:
		return nil, false
	}
	if !isOne(args[2]) {
		return nil, false
	}
	if op, _ := args[4].(string); op != "set" {
		return nil, false
	}
	return args[first:], true
}

// isOne reports whether a numkeys argument is 1.
func isOne(a any) bool {
	switch v := a.(type) {
	case int:
		return v == 1
	case int64:
		return v == 1
	case string:
		return v == "1"
	}
	return false
}
