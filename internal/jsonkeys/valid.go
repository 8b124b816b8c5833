package jsonkeys

import "encoding/json"

// maxDepth bounds the nesting Valid follows inside a value (the recursion
// depth of the scan). A deeper value is not taken for a JSON object.
const maxDepth = 256

// Valid reports whether s is exactly one JSON object (surrounding white
// space allowed) and calls fn with each of its top-level keys, in order,
// unescaped: what a writer that refuses invalid JSON needs, where Top
// reads what it can of a value's head. The whole value is validated as
// encoding/json.Valid does, but nothing is decoded: the scan is linear in
// len(s), recurses at most 256 deep and allocates only for a key holding
// an escape. fn may already have been called when the answer is false.
// s is a string because a write's arguments are.
func Valid(s string, fn func(key string)) bool {
	p := validator{s: s}
	p.space()
	if !p.eat('{') {
		return false
	}
	if !p.members(1, fn) {
		return false
	}
	p.space()
	return p.i == len(s)
}

// validator is a position in a JSON text.
type validator struct {
	s string
	i int
}

func (p *validator) space() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// eat consumes c after optional white space.
func (p *validator) eat(c byte) bool {
	p.space()
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

// members scans the rest of an object after its '{', through its '}'. fn,
// when not nil, receives each key.
func (p *validator) members(depth int, fn func(string)) bool {
	if p.eat('}') {
		return true
	}
	for {
		p.space()
		start := p.i
		esc, ok := p.str()
		end := p.i
		if !ok || !p.eat(':') || !p.value(depth) {
			return false
		}
		if fn != nil {
			fn(unquote(p.s[start:end], esc))
		}
		if p.eat(',') {
			continue
		}
		return p.eat('}')
	}
}

// value scans one JSON value.
func (p *validator) value(depth int) bool {
	p.space()
	if p.i >= len(p.s) {
		return false
	}
	switch c := p.s[p.i]; {
	case c == '{' || c == '[':
		if depth >= maxDepth {
			return false
		}
		p.i++
		if c == '{' {
			return p.members(depth+1, nil)
		}
		return p.elements(depth + 1)
	case c == '"':
		_, ok := p.str()
		return ok
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	case c == 't':
		return p.literal("true")
	case c == 'f':
		return p.literal("false")
	case c == 'n':
		return p.literal("null")
	}
	return false
}

// elements scans the rest of an array after its '['.
func (p *validator) elements(depth int) bool {
	if p.eat(']') {
		return true
	}
	for {
		if !p.value(depth) {
			return false
		}
		if p.eat(',') {
			continue
		}
		return p.eat(']')
	}
}

func (p *validator) literal(lit string) bool {
	if len(p.s)-p.i >= len(lit) && p.s[p.i:p.i+len(lit)] == lit {
		p.i += len(lit)
		return true
	}
	return false
}

// str scans a string literal starting at its quote; esc reports a
// backslash escape in it. Control characters are refused, other bytes
// (invalid UTF-8 included) pass, as encoding/json.Valid has it.
func (p *validator) str() (esc, ok bool) {
	if p.i >= len(p.s) || p.s[p.i] != '"' {
		return false, false
	}
	for p.i++; p.i < len(p.s); p.i++ {
		switch c := p.s[p.i]; {
		case c == '"':
			p.i++
			return esc, true
		case c < 0x20:
			return esc, false
		case c == '\\':
			esc = true
			p.i++
			if p.i >= len(p.s) {
				return esc, false
			}
			switch p.s[p.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(p.s)-p.i < 5 || !hex4(p.s[p.i+1:p.i+5]) {
					return esc, false
				}
				p.i += 4
			default:
				return esc, false
			}
		}
	}
	return esc, false
}

func hex4(s string) bool {
	for i := 0; i < 4; i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// number scans -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *validator) number() bool {
	if p.s[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(p.s) && p.s[p.i] == '0':
		p.i++
	case !p.digits():
		return false
	}
	if p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		if !p.digits() {
			return false
		}
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if !p.digits() {
			return false
		}
	}
	return true
}

// digits scans one or more decimal digits.
func (p *validator) digits() bool {
	start := p.i
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		p.i++
	}
	return p.i > start
}

// unquote returns the text of a scanned string literal q (quotes
// included). Only a literal with escapes is decoded, by encoding/json, so
// that \u escapes and surrogate pairs read as they do everywhere else.
func unquote(q string, esc bool) string {
	if !esc {
		return q[1 : len(q)-1]
	}
	var s string
	if err := json.Unmarshal([]byte(q), &s); err != nil {
		return q[1 : len(q)-1] // cannot happen: str validated it
	}
	return s
}
