package keybuild

import (
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Kind is the type of a placeholder. The names are those of the template
// language ({x:int}, {x:hash}, …).
type Kind uint8

// Placeholder kinds.
const (
	KindAny Kind = iota
	KindInt
	KindHex
	KindUUID
	KindRegion
	KindDate
	KindEnum
	KindHash
)

var kindNames = [...]string{"any", "int", "hex", "uuid", "region", "date", "enum", "hash"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// SupportPackageIsVersion1 is referenced by generated code: a generated
// package that needs a newer keybuild fails to compile with this name in
// the error, instead of misbehaving.
const SupportPackageIsVersion1 = true

// HashLen is the length of the text a {x:hash} placeholder stores.
const HashLen = 16

// Part is literal text or a placeholder of a template. Literal text may
// span segments ("promo:sku:"); its braces are real braces.
type Part struct {
	Lit  string   // literal text when Name is empty
	Name string   // placeholder name
	Kind Kind     // placeholder kind
	Enum []string // allowed values of an enum placeholder
}

// Spec is one template of a registry with its policy: what a builder
// needs to build a key and what a key carries with it. Generated packages
// hold one Spec per template and list them all in Templates().
type Spec struct {
	Name        string // builder name (registry "name:" or derived)
	Template    string // the template, env prefix included, as the matcher reads it
	Separator   byte
	MaxKeyBytes int    // longest key in bytes; 0 means no limit
	Parts       []Part // the template, parsed
	Type        string // Redis type: string, hash, list, set, zset, stream
	TTL         time.Duration
	TTLJitter   time.Duration
	Persistent  bool // no TTL by design
	Owner       string
	Writers     []string // services besides the owner that may write
	Readers     []string // services that may read
	Guard       bool     // namespace-guarded hash
	HotReplicas int      // hot-key replicas; 0 when not hot
	HotLocalTTL time.Duration
	Desc        string
	// Fields is the value's declared field set (hash field names, or the
	// top-level keys of a JSON string value), in registry order; nil when
	// the registry declares none. FieldsExtra: values may hold others too
	// (fields_extra: allow).
	Fields      []string
	FieldsExtra bool
}

// Placeholders returns the number of placeholders in s.
func (s *Spec) Placeholders() int {
	n := 0
	for i := range s.Parts {
		if s.Parts[i].Name != "" {
			n++
		}
	}
	return n
}

// Key is a concrete key built from a Spec. The zero Key is empty and has
// no Spec.
type Key struct {
	s    string
	spec *Spec
}

// String returns the key.
func (k Key) String() string { return k.s }

// IsZero reports whether k is the zero Key.
func (k Key) IsZero() bool { return k.spec == nil }

// Spec returns the template k was built from, nil for the zero Key. The
// caller must not modify it.
func (k Key) Spec() *Spec { return k.spec }

// Template returns the template k was built from.
func (k Key) Template() string {
	if k.spec == nil {
		return ""
	}
	return k.spec.Template
}

// Type returns the Redis type the registry declares for k.
func (k Key) Type() string {
	if k.spec == nil {
		return ""
	}
	return k.spec.Type
}

// Owner returns the team that owns k's template.
func (k Key) Owner() string {
	if k.spec == nil {
		return ""
	}
	return k.spec.Owner
}

// Persistent reports whether k has no TTL by design.
func (k Key) Persistent() bool { return k.spec != nil && k.spec.Persistent }

// TTL returns the registry TTL of k, 0 when it is persistent.
func (k Key) TTL() time.Duration {
	if k.spec == nil {
		return 0
	}
	return k.spec.TTL
}

// RandomTTL returns the TTL plus a uniformly random extra in [0, jitter]
// at millisecond granularity, so keys written together do not expire
// together (a cache avalanche). It is the TTL when there is no
// jitter, and 0 for persistent keys.
func (k Key) RandomTTL() time.Duration {
	if k.spec == nil || k.spec.TTLJitter < time.Millisecond {
		return k.TTL()
	}
	ms := int64(k.spec.TTLJitter / time.Millisecond)
	return k.spec.TTL + time.Duration(rand.Int64N(ms+1))*time.Millisecond
}

// Arg is a value for one placeholder.
type Arg struct {
	s     string
	n     int64
	isInt bool
}

// String is a text value. It is checked against its placeholder's kind.
func String(s string) Arg { return Arg{s: s} }

// Int is an integer value, written in decimal. It suits {x:int} and {x}
// placeholders.
func Int(n int64) Arg { return Arg{n: n, isInt: true} }

// maxInt64Len is the longest decimal int64: "-9223372036854775808".
const maxInt64Len = 20

// Build builds a key of spec from one Arg per placeholder, in order. It
// checks every value (see the package doc for the rules), hashes {x:hash}
// values, and allocates once: the key. A value that breaks a rule is a
// *Error naming the template and the placeholder.
func Build(spec *Spec, args ...Arg) (Key, error) {
	n, err := measure(spec, args)
	if err != nil {
		return Key{}, err
	}
	var b strings.Builder
	b.Grow(n)
	var scratch [maxInt64Len]byte
	ai := 0
	for i := range spec.Parts {
		p := &spec.Parts[i]
		if p.Name == "" {
			b.WriteString(p.Lit)
			continue
		}
		a := &args[ai]
		ai++
		switch {
		case p.Kind == KindHash:
			var hx [HashLen]byte
			hashInto(&hx, a)
			b.Write(hx[:])
		case a.isInt:
			b.Write(strconv.AppendInt(scratch[:0], a.n, 10))
		default:
			b.WriteString(a.s)
		}
	}
	return Key{s: b.String(), spec: spec}, nil
}

// measure checks every value and returns the key's length.
func measure(spec *Spec, args []Arg) (int, error) {
	n, ai := 0, 0
	for i := range spec.Parts {
		p := &spec.Parts[i]
		if p.Name == "" {
			n += len(p.Lit)
			continue
		}
		if ai >= len(args) {
			return 0, arity(spec, len(args))
		}
		a := &args[ai]
		ai++
		switch {
		case p.Kind == KindHash:
			if !a.isInt {
				if r := checkHashInput(a.s); r != 0 {
					return 0, newError(spec, p, r, "")
				}
			}
			n += HashLen
		case a.isInt:
			if p.Kind != KindInt && p.Kind != KindAny {
				return 0, newError(spec, p, ReasonKind, strconv.FormatInt(a.n, 10))
			}
			n += intLen(a.n)
		default:
			if r := check(a.s, spec.Separator, p); r != 0 {
				return 0, newError(spec, p, r, a.s)
			}
			n += len(a.s)
		}
	}
	if ai != len(args) {
		return 0, arity(spec, len(args))
	}
	if spec.MaxKeyBytes > 0 && n > spec.MaxKeyBytes {
		return 0, &Error{Template: spec.Template, Reason: ReasonTooLong, Len: n, Max: spec.MaxKeyBytes}
	}
	return n, nil
}

func arity(spec *Spec, got int) error {
	return &Error{Template: spec.Template, Reason: ReasonArity, Len: got, Max: spec.Placeholders()}
}

func intLen(v int64) int {
	n := 1
	u := uint64(v)
	if v < 0 {
		n++
		u = uint64(-v) // -MinInt64 wraps to itself, which is right as uint64
	}
	for u >= 10 {
		u /= 10
		n++
	}
	return n
}

func checkHashInput(s string) Reason {
	switch {
	case s == "":
		return ReasonEmpty
	case !utf8.ValidString(s):
		return ReasonEncoding
	}
	return 0
}

// hashInto writes the hash of a's value. Values up to 32 bytes hash
// without allocating (the compiler keeps the []byte copy on the stack).
func hashInto(dst *[HashLen]byte, a *Arg) {
	var sum [sha256.Size]byte
	if a.isInt {
		var scratch [maxInt64Len]byte
		sum = sha256.Sum256(strconv.AppendInt(scratch[:0], a.n, 10))
	} else {
		sum = sha256.Sum256([]byte(a.s))
	}
	hex.Encode(dst[:], sum[:HashLen/2])
}

// HashValue returns what a {x:hash} placeholder stores for value: the
// first 8 bytes of its SHA-256 in lower-case hex.
func HashValue(value string) string {
	sum := sha256.Sum256([]byte(value))
	return hex.EncodeToString(sum[:HashLen/2])
}

// Check reports why value cannot fill placeholder p of a template with
// separator sep, or 0 when it can. Hash placeholders accept any non-empty
// UTF-8 text.
func Check(value string, sep byte, p Part) Reason {
	if p.Kind == KindHash {
		return checkHashInput(value)
	}
	return check(value, sep, &p)
}

func check(s string, sep byte, p *Part) Reason {
	if s == "" {
		return ReasonEmpty
	}
	var control, hasSep, brace, nonASCII bool
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c == 0x7f:
			control = true
		case c == sep:
			hasSep = true
		case c == '{' || c == '}':
			brace = true
		case c >= utf8.RuneSelf:
			nonASCII = true
		}
	}
	switch {
	case nonASCII && !utf8.ValidString(s):
		return ReasonEncoding
	case control:
		return ReasonControl
	case hasSep:
		return ReasonSeparator
	case brace:
		return ReasonBrace
	case !kindOK(s, p):
		return ReasonKind
	}
	return 0
}

func kindOK(s string, p *Part) bool {
	switch p.Kind {
	case KindInt:
		d := s
		if d[0] == '-' {
			d = d[1:]
		}
		return d != "" && allDigits(d)
	case KindHex:
		return allHex(s)
	case KindUUID:
		if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
			return false
		}
		return allHex(s[:8]) && allHex(s[9:13]) && allHex(s[14:18]) && allHex(s[19:23]) && allHex(s[24:])
	case KindRegion:
		return len(s) == 6 && s[0] >= '1' && s[0] <= '9' && allDigits(s)
	case KindDate:
		if len(s) != 8 || !allDigits(s) {
			return false
		}
		m := int(s[4]-'0')*10 + int(s[5]-'0')
		d := int(s[6]-'0')*10 + int(s[7]-'0')
		return m >= 1 && m <= 12 && d >= 1 && d <= 31
	case KindEnum:
		for _, v := range p.Enum {
			if s == v {
				return true
			}
		}
		return false
	case KindAny:
		return true
	}
	return false // hash is handled by the caller; unknown kinds build nothing
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func allHex(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}
