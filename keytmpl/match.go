package keytmpl

import "strings"

// Capture is the value a placeholder took in a concrete key.
type Capture struct {
	Name  string
	Value string
}

// Matches reports whether key matches t. It does not allocate.
func (t *Template) Matches(key string) bool {
	for i := range t.segments {
		seg, rest, last := cutSep(key, t.sep)
		if last != (i == len(t.segments)-1) {
			return false
		}
		if !t.segments[i].dfa.match(seg) {
			return false
		}
		key = rest
	}
	return true
}

func cutSep(key string, sep byte) (seg, rest string, last bool) {
	if i := strings.IndexByte(key, sep); i >= 0 {
		return key[:i], key[i+1:], false
	}
	return key, "", true
}

// Match reports whether key matches t and returns the placeholder values
// in order of appearance.
func (t *Template) Match(key string) ([]Capture, bool) {
	return t.AppendMatch(nil, key)
}

// AppendMatch is Match appending the captures to dst.
func (t *Template) AppendMatch(dst []Capture, key string) ([]Capture, bool) {
	if !t.Matches(key) {
		return dst, false
	}
	for i := range t.segments {
		seg, rest, _ := cutSep(key, t.sep)
		var ok bool
		dst, ok = capture(dst, t.segments[i].Parts, seg)
		if !ok { // unreachable: the segment DFA accepted seg
			return dst, false
		}
		key = rest
	}
	return dst, true
}

// AppendCaptures is AppendMatch for a key the caller expects to match t
// (a Matcher's Lookup named t): it leaves out the automaton pass that
// turns other keys away fast, and splits the key at once. Its answer and
// captures are AppendMatch's for any key; only a key that does not match
// costs more (the split backtracks before it fails).
func (t *Template) AppendCaptures(dst []Capture, key string) ([]Capture, bool) {
	n := len(dst)
	for i := range t.segments {
		seg, rest, last := cutSep(key, t.sep)
		if last != (i == len(t.segments)-1) {
			return dst[:n], false
		}
		var ok bool
		if dst, ok = capture(dst, t.segments[i].Parts, seg); !ok {
			return dst[:n], false
		}
		key = rest
	}
	return dst, true
}

// capture splits seg among parts by backtracking; each placeholder is
// checked with its own automaton, so the split agrees with the segment's.
func capture(dst []Capture, parts []Part, seg string) ([]Capture, bool) {
	if len(parts) == 0 {
		return dst, seg == ""
	}
	p := &parts[0] // not a copy: a part is 72 bytes
	if !p.IsPlaceholder() {
		if !strings.HasPrefix(seg, p.Lit) {
			return dst, false
		}
		return capture(dst, parts[1:], seg[len(p.Lit):])
	}
	if len(parts) == 1 {
		if p.dfa.match(seg) {
			return append(dst, Capture{p.Name, seg}), true
		}
		return dst, false
	}
	// Try the shortest value first: "u{id}x" style segments then split at the
	// first place that works, which is deterministic.
	for n := 1; n <= len(seg); n++ {
		if !p.dfa.match(seg[:n]) {
			continue
		}
		if out, ok := capture(append(dst, Capture{p.Name, seg[:n]}), parts[1:], seg[n:]); ok {
			return out, true
		}
	}
	return dst, false
}

// Example returns a key with a typical value for every placeholder, as a
// real key would carry: ten-digit numbers for int, a 24-digit hex id, a
// full UUID. It is what naming/length measures for templates.
func (t *Template) Example() string {
	var b strings.Builder
	for i, s := range t.segments {
		if i > 0 {
			b.WriteByte(t.sep)
		}
		for _, p := range s.Parts {
			if !p.IsPlaceholder() {
				b.WriteString(p.Lit)
				continue
			}
			b.WriteString(ExampleValue(p.Kind, p.Enum))
		}
	}
	return b.String()
}

// ExampleValue is a typical value of a placeholder kind.
func ExampleValue(k Kind, enum []string) string {
	switch k {
	case Int:
		return "1234567890"
	case Hex:
		return "65f1a2b3c4d5e6f708192a3b"
	case UUID:
		return "123e4567-e89b-12d3-a456-426614174000"
	case Region:
		return "110101"
	case Date:
		return "20240321"
	case Hash:
		return "9f86d081884c7d65"
	case Enum:
		longest := ""
		for _, v := range enum {
			if len(v) > len(longest) {
				longest = v
			}
		}
		return longest
	default:
		return "1234567890"
	}
}
