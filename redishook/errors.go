package redishook

import (
	"errors"
	"fmt"
	"strings"
)

// ErrDenied matches every *DeniedError with errors.Is: the hook refused a
// command in enforce mode and nothing was sent to Redis.
var ErrDenied = errors.New("keyguard: write refused")

// Reason says why a command was refused.
type Reason uint8

// Reasons of a *DeniedError.
const (
	// ReasonNotWriter: the key's template belongs to another owner and does
	// not list this service in writers.
	ReasonNotWriter Reason = iota + 1
	// ReasonUnregistered: a write to a key that matches no template.
	ReasonUnregistered
	// ReasonNoTTL: the command would leave a key of a TTL template without
	// a TTL (SET without EX/PX/EXAT/PXAT/KEEPTTL, SETNX, GETSET, MSET,
	// PERSIST, GETEX PERSIST, RESTORE with ttl 0).
	ReasonNoTTL
	// ReasonPersistent: the command gives a key of a persistent template a TTL.
	ReasonPersistent
	// ReasonKeyspace: a write to the whole keyspace (FLUSHALL, FLUSHDB, SWAPDB).
	ReasonKeyspace
	// ReasonUnknownCommand: the command is not in keyguard's Redis 7.0
	// command table (a module command, or one newer than 7.0), so its keys
	// cannot be checked. Options.AllowUnknown lets it through.
	ReasonUnknownCommand
	// ReasonSchema: the write breaks the template's declared fields
	// (registry fields without fields_extra: allow): an HSET, HSETNX,
	// HMSET, HINCRBY, HINCRBYFLOAT or guarded write of a field the template
	// does not declare; on a template whose string values are JSON objects,
	// a value that is not one (or keys it does not declare), or an in-place
	// edit (APPEND, SETRANGE, INCR…) that keyguard cannot check.
	ReasonSchema
)

func (r Reason) String() string {
	switch r {
	case ReasonNotWriter:
		return "not-writer"
	case ReasonUnregistered:
		return "unregistered"
	case ReasonNoTTL:
		return "no-ttl"
	case ReasonPersistent:
		return "persistent"
	case ReasonKeyspace:
		return "keyspace"
	case ReasonUnknownCommand:
		return "unknown-command"
	case ReasonSchema:
		return "schema"
	}
	return "unknown"
}

// DeniedError is a command refused in enforce mode before anything was
// sent. In a refused pipeline or transaction every command carries the
// error of the offending one.
type DeniedError struct {
	Command  string // lower-case command name, "hset"
	Key      string // the offending key; "" for a keyspace or unknown command
	Template string // the key's template; "" when unregistered
	Owner    string // the template's owner; "" when unregistered
	Service  string // this service (Options.Service)
	Reason   Reason
	// Writers lists the other services the template allows (registry writers).
	Writers []string
	// Undeclared lists the fields the write names that the template does
	// not declare (ReasonSchema; at most 16). Empty when the problem is a
	// value that is not a JSON object.
	Undeclared []string
	// Declared is the template's declared field set (ReasonSchema).
	Declared []string
}

// Is makes errors.Is(err, ErrDenied) true for every *DeniedError.
func (e *DeniedError) Is(target error) bool { return target == ErrDenied }

func (e *DeniedError) Error() string {
	head := fmt.Sprintf("keyguard: %s %q by service %q refused: ", e.Command, clip(e.Key), e.Service)
	switch e.Reason {
	case ReasonNotWriter:
		shared := "has no other writers"
		if len(e.Writers) > 0 {
			shared = fmt.Sprintf("is shared only with %q", e.Writers)
		}
		return head + fmt.Sprintf("template %q belongs to %q and %s; use a template owned by %q, or ask %q to add %q to its writers",
			e.Template, e.Owner, shared, e.Service, e.Owner, e.Service)
	case ReasonUnregistered:
		return head + "the key matches no template of the registry; register its template (run 'keyguard check KEY' to see why it does not match)"
	case ReasonNoTTL:
		return head + fmt.Sprintf("template %q has a TTL and this command would leave the key without one; pass an expiration (SET … EX/PX, or EXPIRE later in the same pipeline) or write through ttlpolicy", e.Template)
	case ReasonPersistent:
		return head + fmt.Sprintf("template %q is persistent and must never get a TTL; drop the expiration", e.Template)
	case ReasonKeyspace:
		return fmt.Sprintf("keyguard: %s by service %q refused: it writes every key of the database, other teams' included; use the admin tooling, not a service client", e.Command, e.Service)
	case ReasonUnknownCommand:
		return fmt.Sprintf("keyguard: %s by service %q refused: keyguard's command table (Redis 7.0) does not know it, so its keys cannot be checked; list it in redishook.Options.AllowUnknown if it is safe", e.Command, e.Service)
	case ReasonSchema:
		return head + e.schemaText()
	}
	return head + "denied"
}

func (e *DeniedError) schemaText() string {
	fix := fmt.Sprintf("add them to its fields in the registry (owner %q)", e.Owner)
	if e.Owner == e.Service {
		fix = "add them to its fields in the registry"
	}
	switch {
	case len(e.Undeclared) > 0:
		return fmt.Sprintf("template %q declares the fields %q, not %q; write only declared fields (the generated constants name them), or %s",
			e.Template, e.Declared, e.Undeclared, fix)
	case editsInPlace(e.Command):
		return fmt.Sprintf("template %q holds JSON objects of the fields %q and %s edits the value in place, which keyguard cannot check; write the whole object with SET",
			e.Template, e.Declared, strings.ToUpper(e.Command))
	}
	return fmt.Sprintf("template %q holds JSON objects of the fields %q and the value is not one; write a JSON object of those fields", e.Template, e.Declared)
}

// clip keeps messages readable for huge keys; %q takes care of binary bytes.
func clip(s string) string {
	const max = 200
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}
