package keybuild

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Reason is why a value or a key was refused. Its String form is the
// error class every generated language reports ("empty", "brace", …).
type Reason uint8

// Reasons, in the order the checks run.
const (
	ReasonEmpty     Reason = iota + 1 // empty value
	ReasonEncoding                    // not valid UTF-8
	ReasonControl                     // control character
	ReasonSeparator                   // contains the separator
	ReasonBrace                       // contains '{' or '}'
	ReasonKind                        // not a value of the placeholder's type
	ReasonTooLong                     // key over max_key_bytes
	ReasonArity                       // wrong number of values (Build misuse)
)

var reasonNames = [...]string{"", "empty", "encoding", "control", "separator", "brace", "kind", "too-long", "arity"}

func (r Reason) String() string {
	if int(r) < len(reasonNames) && r != 0 {
		return reasonNames[r]
	}
	return "reason(" + strconv.Itoa(int(r)) + ")"
}

// ErrInvalid is matched by every *Error (errors.Is).
var ErrInvalid = errors.New("keybuild: invalid key value")

// Error is a key that could not be built.
type Error struct {
	Template    string // the template, as in the registry
	Placeholder string // the placeholder at fault; empty for too-long and arity
	Kind        Kind   // the placeholder's kind
	Enum        []string
	Reason      Reason
	Value       string // the refused value; empty for {x:hash} placeholders (personal data)
	Len, Max    int    // too-long: key bytes and the limit; arity: values given and wanted
}

func newError(spec *Spec, p *Part, r Reason, value string) *Error {
	e := &Error{Template: spec.Template, Placeholder: p.Name, Kind: p.Kind, Enum: p.Enum, Reason: r}
	if p.Kind != KindHash {
		e.Value = value
	}
	return e
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *Error) Is(target error) bool { return target == ErrInvalid }

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "key %q: ", e.Template)
	if e.Placeholder != "" {
		fmt.Fprintf(&b, "{%s}: ", e.Placeholder)
	}
	shown := strconv.Quote(e.Value)
	if len(e.Value) > 40 {
		shown = strconv.Quote(e.Value[:40]) + "…"
	}
	switch e.Reason {
	case ReasonEmpty:
		b.WriteString("empty value\n\tTry: pass the value; an empty segment would make a different key")
	case ReasonEncoding:
		b.WriteString("value is not valid UTF-8\n\tTry: decode the input first, or use a {x:hash} placeholder for raw bytes")
	case ReasonControl:
		fmt.Fprintf(&b, "value %s holds a control character\n\tTry: strip or reject it where the input enters the program", shown)
	case ReasonSeparator:
		fmt.Fprintf(&b, "value %s holds the separator, which would add a segment and make the key match another template\n\tTry: use an id, or declare the placeholder as {%s:hash}", shown, e.Placeholder)
	case ReasonBrace:
		fmt.Fprintf(&b, "value %s holds a brace, which would give the key a Cluster hash tag and move it to another slot\n\tTry: use an id, or declare the placeholder as {%s:hash}", shown, e.Placeholder)
	case ReasonKind:
		fmt.Fprintf(&b, "value %s is not %s", shown, kindPhrase(e.Kind, e.Enum))
	case ReasonTooLong:
		fmt.Fprintf(&b, "key is %d bytes, over max_key_bytes %d\n\tTry: shorten the value (a {x:hash} placeholder stores 16 bytes), or raise policy.max_key_bytes", e.Len, e.Max)
	case ReasonArity:
		fmt.Fprintf(&b, "%d values for %d placeholders", e.Len, e.Max)
	default:
		b.WriteString(e.Reason.String())
	}
	return b.String()
}

func kindPhrase(k Kind, enum []string) string {
	switch k {
	case KindInt:
		return "an integer (-?[0-9]+)"
	case KindHex:
		return "hex digits"
	case KindUUID:
		return "a UUID (8-4-4-4-12 hex digits)"
	case KindRegion:
		return "a 6-digit region code"
	case KindDate:
		return "a date in yyyyMMdd form"
	case KindEnum:
		return "one of " + strings.Join(enum, ", ")
	}
	return "a value of kind " + k.String()
}
