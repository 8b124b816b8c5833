package redishook

import (
	"strings"

	"github.com/keyguard/keyguard/guard"
	"github.com/keyguard/keyguard/internal/jsonkeys"
	"github.com/keyguard/keyguard/internal/rediscmd"
	"github.com/keyguard/keyguard/registry"
)

// maxUndeclared bounds the undeclared fields a DeniedError or a log line
// lists.
const maxUndeclared = 16

// fieldSet is a template's declared value format, as the hot path checks it.
type fieldSet struct {
	kind  uint8 // fieldsNone, fieldsHash or fieldsJSON
	names []string
	set   map[string]struct{} // for long lists; nil for short ones
	extra bool                // fields_extra: allow
	guard bool                // a guarded hash: HSETNX of the owner field (the guard's claim) passes
}

const (
	fieldsNone = iota
	fieldsHash // hash field names
	fieldsJSON // top-level keys of a JSON object held in a string
)

// linearFields is the longest list searched without a map.
const linearFields = 12

func newFieldSet(e *registry.Entry) fieldSet {
	if len(e.Fields) == 0 {
		return fieldSet{}
	}
	fs := fieldSet{names: e.Fields, extra: e.FieldsExtra, guard: e.Guard}
	switch e.Type {
	case "hash":
		fs.kind = fieldsHash
	case "string":
		fs.kind = fieldsJSON
	default:
		return fieldSet{} // the registry refuses fields on other types
	}
	if len(e.Fields) > linearFields {
		fs.set = make(map[string]struct{}, len(e.Fields))
		for _, f := range e.Fields {
			fs.set[f] = struct{}{}
		}
	}
	return fs
}

// allows reports whether a write of field by the command named cmd keeps
// to the declared set.
func (fs *fieldSet) allows(field, cmd string) bool {
	if fs.extra {
		return true
	}
	if fs.set != nil {
		if _, ok := fs.set[field]; ok {
			return true
		}
	} else {
		for _, f := range fs.names {
			if f == field {
				return true
			}
		}
	}
	return fs.guard && field == registry.NSField && cmd == "hsetnx"
}

// broken reports whether the write of the key at args[pos] by the command
// named cmd breaks the declared format: it names an undeclared field, or it
// puts something other than a JSON object into a JSON template. collect,
// when not nil, receives the undeclared fields (at most maxUndeclared).
func (fs *fieldSet) broken(cmd string, args []any, pos int, guardSHA string, collect func(string)) bool {
	n := 0
	ok := writtenFields(fs.kind, cmd, args, pos, guardSHA, func(f string) {
		if fs.allows(f, cmd) {
			return
		}
		if collect != nil && n < maxUndeclared {
			collect(f)
		}
		n++
	})
	return !ok || n > 0
}

// writtenFields calls fn with each field the command named cmd writes into
// the key at args[pos], for a template of kind. ok is false when the write
// cannot hold a declared JSON format at all: a value that is not a JSON
// object, or a command that edits the value in place (APPEND, INCR…).
// Commands that write no fields (DEL, EXPIRE, HDEL…) and scripts other than
// the guard's report nothing: their effect on the fields is not in their
// arguments.
func writtenFields(kind uint8, cmd string, args []any, pos int, guardSHA string, fn func(string)) (ok bool) {
	switch kind {
	case fieldsHash:
		from, step := pos+1, 2
		switch cmd {
		case "hset", "hmset":
		case "hsetnx", "hincrby", "hincrbyfloat":
			step = len(args) // one field
		case "eval", "evalsha":
			pairs, isGuard := guard.SetPairs(args, guardSHA)
			if !isGuard {
				return true
			}
			args, from = pairs, 0
		default:
			return true
		}
		for i := from; i < len(args); i += step {
			if s, ok := rediscmd.ArgText(args[i]); ok {
				fn(s)
			}
		}
		return true
	case fieldsJSON:
		at := pos + 1
		switch cmd {
		case "set", "setnx", "getset", "mset", "msetnx":
		case "setex", "psetex":
			at = pos + 2
		default:
			return !editsInPlace(cmd)
		}
		if at >= len(args) {
			return true // the server refuses the arity
		}
		s, ok := rediscmd.ArgText(args[at])
		return ok && jsonkeys.Valid(s, fn)
	}
	return true
}

// editsInPlace reports whether a string command changes part of a value or
// computes it (APPEND, SETRANGE, INCR…, SETBIT, BITFIELD, BITOP), so that
// the result cannot be checked against a JSON format before it is sent.
func editsInPlace(cmd string) bool {
	switch cmd {
	case "append", "setrange", "incr", "decr", "incrby", "decrby", "incrbyfloat", "setbit", "bitfield", "bitop":
		return true
	}
	return false
}

// undeclared lists the fields of the offending write that the template does
// not declare, clipped and copied (a []byte argument aliases the caller's
// memory).
func (fs *fieldSet) undeclared(cmd string, args []any, pos int, guardSHA string) []string {
	var out []string
	fs.broken(cmd, args, pos, guardSHA, func(f string) { out = append(out, strings.Clone(clip(f))) })
	return out
}
