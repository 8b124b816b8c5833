package keytmpl

import (
	"fmt"
	"strings"
)

// Kind is the type of a placeholder.
type Kind uint8

// Placeholder kinds.
const (
	Any Kind = iota
	Int
	Hex
	UUID
	Region
	Date
	Enum
	Hash
)

var kindNames = [...]string{Any: "", Int: "int", Hex: "hex", UUID: "uuid", Region: "region", Date: "date", Enum: "enum", Hash: "hash"}

func (k Kind) String() string {
	if k == Any {
		return "any"
	}
	return kindNames[k]
}

// HashLen is the length of the value a {name:hash} placeholder stores.
const HashLen = 16

// Part is a piece of a segment: literal text or a placeholder.
type Part struct {
	Lit  string   // literal text when Name is empty
	Name string   // placeholder name; empty for literal text
	Kind Kind     // placeholder kind
	Enum []string // allowed values when Kind is Enum
	dfa  *dfa     // language of this part alone (placeholders only)
}

// IsPlaceholder reports whether p is a placeholder.
func (p Part) IsPlaceholder() bool { return p.Name != "" }

// Segment is the text between two separators.
type Segment struct {
	Parts []Part
	dfa   *dfa
	canon string // the segment without placeholder names: equal canon, equal language
}

// Literal returns the segment text and true when it has no placeholder.
func (s *Segment) Literal() (string, bool) {
	if len(s.Parts) == 1 && !s.Parts[0].IsPlaceholder() {
		return s.Parts[0].Lit, true
	}
	return "", false
}

// Placeholder describes one placeholder of a template, in order.
type Placeholder struct {
	Name    string
	Kind    Kind
	Enum    []string
	Segment int // index of the segment that holds it
}

// Template is a parsed key template. It is immutable and safe for concurrent use.
type Template struct {
	src      string
	sep      byte
	segments []Segment
	places   []Placeholder
}

// SyntaxError is a template that does not parse. Offset is the byte offset
// in the template text.
type SyntaxError struct {
	Template string
	Offset   int
	Msg      string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("template %q: at byte %d: %s", e.Template, e.Offset, e.Msg)
}

// String returns the template as written.
func (t *Template) String() string { return t.src }

// Separator returns the segment separator.
func (t *Template) Separator() byte { return t.sep }

// Segments returns the parsed segments. The caller must not modify them.
func (t *Template) Segments() []Segment { return t.segments }

// Placeholders returns the placeholders in order of appearance.
func (t *Template) Placeholders() []Placeholder { return t.places }

// MustParse is Parse for templates known at compile time; it panics on error.
func MustParse(src string, sep byte) *Template {
	t, err := Parse(src, sep)
	if err != nil {
		panic(err)
	}
	return t
}

// Parse parses a template. sep is the segment separator (usually ':').
func Parse(src string, sep byte) (*Template, error) {
	t, err := parse(src, sep)
	if err != nil {
		return nil, err
	}
	for si := range t.segments {
		s := &t.segments[si]
		for pi := range s.Parts {
			if s.Parts[pi].IsPlaceholder() {
				s.Parts[pi].dfa = buildDFA(s.Parts[pi : pi+1])
			}
		}
		if lit, ok := s.Literal(); ok {
			s.dfa = literalDFA(lit)
		} else {
			s.dfa = buildDFA(s.Parts)
		}
		s.canon = canonical(s.Parts)
	}
	return t, nil
}

// Segments parses src as Parse does, with the same errors, and returns
// its segments alone, without the automata that matching keys needs (most
// of Parse's time): for a caller that reads a template's shape, such as a
// report's prefix tree of thousands of families.
func Segments(src string, sep byte) ([]Segment, error) {
	t, err := parse(src, sep)
	if err != nil {
		return nil, err
	}
	return t.segments, nil
}

// parse reads src's syntax: its segments and placeholders.
func parse(src string, sep byte) (*Template, error) {
	if sep == '{' || sep == '}' || sep == 0 {
		return nil, &SyntaxError{Template: src, Msg: fmt.Sprintf("separator %q cannot be used: pick ':' or another printable character that is not a brace", sep)}
	}
	t := &Template{src: src, sep: sep}
	errf := func(off int, format string, args ...any) error {
		return &SyntaxError{Template: src, Offset: off, Msg: fmt.Sprintf(format, args...)}
	}
	if src == "" {
		return nil, errf(0, "empty template")
	}
	var (
		parts []Part
		// The literal text being read: src[litFrom:] up to the next
		// separator or placeholder, a substring of src; only a run that
		// holds an escaped brace is written out, to lit.
		litFrom = -1
		litEsc  bool
		lit     strings.Builder
	)
	flushLit := func(end int) {
		if litFrom < 0 {
			return
		}
		text := src[litFrom:end]
		if litEsc {
			text = lit.String()
			lit.Reset()
		}
		parts = append(parts, Part{Lit: text})
		litFrom, litEsc = -1, false
	}
	escape := func(i int, brace byte) {
		if litFrom < 0 {
			litFrom = i
		}
		if !litEsc {
			lit.WriteString(src[litFrom:i])
			litEsc = true
		}
		lit.WriteByte(brace)
	}
	endSegment := func(off int) error {
		flushLit(off)
		if len(parts) == 0 {
			return errf(off, "empty segment: two separators in a row, or a separator at the start or end")
		}
		t.segments = append(t.segments, Segment{Parts: parts})
		parts = nil
		return nil
	}
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == sep:
			if err := endSegment(i); err != nil {
				return nil, err
			}
			i++
		case c == '{' && i+1 < len(src) && src[i+1] == '{':
			escape(i, '{')
			i += 2
		case c == '}' && i+1 < len(src) && src[i+1] == '}':
			escape(i, '}')
			i += 2
		case c == '}':
			return nil, errf(i, "unmatched '}': write '}}' for a literal brace")
		case c == '{':
			end := strings.IndexByte(src[i:], '}')
			if end < 0 {
				return nil, errf(i, "unclosed placeholder: add '}', or write '{{' for a literal brace")
			}
			p, err := parsePlaceholder(src[i+1:i+end], sep)
			if err != nil {
				return nil, errf(i+1, "%v", err)
			}
			for _, q := range t.places {
				if q.Name == p.Name {
					return nil, errf(i+1, "placeholder {%s} appears twice: give each placeholder its own name", p.Name)
				}
			}
			flushLit(i)
			if n := len(parts); n > 0 && parts[n-1].IsPlaceholder() && !fixedLength(parts[n-1].Kind) {
				return nil, errf(i, "placeholders {%s} and {%s} touch, and {%s} has no fixed length, so a key cannot tell where one ends: put literal text between them, or make the first a date, region, uuid or hash", parts[n-1].Name, p.Name, parts[n-1].Name)
			}
			t.places = append(t.places, Placeholder{Name: p.Name, Kind: p.Kind, Enum: p.Enum, Segment: len(t.segments)})
			parts = append(parts, p)
			i += end + 1
		default:
			if litFrom < 0 {
				litFrom = i
			} else if litEsc {
				lit.WriteByte(c)
			}
			i++
		}
	}
	if err := endSegment(len(src)); err != nil {
		return nil, err
	}
	return t, nil
}

// EscapeLiteral is s as literal template text: its braces doubled.
func EscapeLiteral(s string) string {
	if !strings.ContainsAny(s, "{}") {
		return s
	}
	b := make([]byte, 0, len(s)+4)
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '{' || c == '}' {
			b = append(b, c)
		}
		b = append(b, s[i])
	}
	return string(b)
}

func canonical(parts []Part) string {
	var b strings.Builder
	for _, p := range parts {
		if !p.IsPlaceholder() {
			b.WriteString(EscapeLiteral(p.Lit))
			continue
		}
		b.WriteString("{")
		b.WriteString(p.Kind.String())
		if p.Kind == Enum {
			b.WriteString("(" + strings.Join(p.Enum, ",") + ")")
		}
		b.WriteString("}")
	}
	return b.String()
}

func parsePlaceholder(body string, sep byte) (Part, error) {
	name, typ, hasType := strings.Cut(body, ":")
	if !validName(name) {
		return Part{}, fmt.Errorf("placeholder name %q: use letters, digits and '_', starting with a letter (e.g. {orderId})", name)
	}
	p := Part{Name: name}
	if !hasType {
		return p, nil
	}
	switch {
	case typ == "int":
		p.Kind = Int
	case typ == "hex":
		p.Kind = Hex
	case typ == "uuid":
		p.Kind = UUID
	case typ == "region":
		p.Kind = Region
	case typ == "date":
		p.Kind = Date
	case typ == "hash":
		p.Kind = Hash
	case strings.HasPrefix(typ, "enum(") && strings.HasSuffix(typ, ")"):
		p.Kind = Enum
		seen := map[string]bool{}
		for _, v := range strings.Split(typ[len("enum("):len(typ)-1], ",") {
			v = strings.TrimSpace(v)
			if v == "" {
				return Part{}, fmt.Errorf("placeholder {%s}: empty enum value: write enum(A,B,C)", name)
			}
			if strings.IndexByte(v, sep) >= 0 || strings.ContainsAny(v, "{}() ") {
				return Part{}, fmt.Errorf("placeholder {%s}: enum value %q may not contain the separator, braces, parentheses or spaces", name, v)
			}
			if seen[v] {
				return Part{}, fmt.Errorf("placeholder {%s}: enum value %q listed twice", name, v)
			}
			seen[v] = true
			p.Enum = append(p.Enum, v)
		}
	default:
		return Part{}, fmt.Errorf("placeholder {%s}: unknown type %q: use int, hex, uuid, region, date, hash or enum(A,B)", name, typ)
	}
	return p, nil
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// fixedLength kinds may be followed directly by another placeholder: the
// split of a key between the two is then unambiguous.
func fixedLength(k Kind) bool { return k == Date || k == Region || k == UUID || k == Hash }
