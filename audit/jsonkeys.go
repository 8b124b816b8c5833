package audit

import "strconv"

// maxJSONKeys bounds the field names taken from one string value.
const maxJSONKeys = 32

// jsonKeys returns the top-level keys of a JSON object at the start of b,
// which may be cut anywhere (the walker reads only the first bytes of a
// value). It returns nil when b does not start with an object. It never
// fails: it stops at the first thing it cannot read.
func jsonKeys(b []byte) []string {
	p := jsonScanner{b: b}
	p.space()
	if !p.eat('{') {
		return nil
	}
	keys := []string{}
	for len(keys) < maxJSONKeys {
		p.space()
		if p.i >= len(p.b) || p.b[p.i] == '}' {
			break
		}
		if len(keys) > 0 {
			if !p.eat(',') {
				break
			}
			p.space()
		}
		k, ok := p.str()
		if !ok {
			break
		}
		p.space()
		if !p.eat(':') {
			break
		}
		keys = append(keys, k) // the value may be cut: the key is still known
		if !p.value() {
			break
		}
	}
	return keys
}

type jsonScanner struct {
	b []byte
	i int
}

func (p *jsonScanner) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\r', '\n':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonScanner) eat(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// str reads a complete string and returns it unquoted.
func (p *jsonScanner) str() (string, bool) {
	if !p.eat('"') {
		return "", false
	}
	start := p.i - 1
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case '\\':
			p.i += 2
		case '"':
			p.i++
			raw := p.b[start:p.i]
			s, err := strconv.Unquote(string(raw))
			if err != nil {
				// JSON escapes Go does not know (\/): keep the raw text.
				return string(raw[1 : len(raw)-1]), true
			}
			return s, true
		default:
			p.i++
		}
	}
	return "", false
}

// value skips one complete value; false when it is cut or malformed.
func (p *jsonScanner) value() bool {
	p.space()
	if p.i >= len(p.b) {
		return false
	}
	switch p.b[p.i] {
	case '"':
		_, ok := p.str()
		return ok
	case '{', '[':
		depth := 0
		for p.i < len(p.b) {
			switch p.b[p.i] {
			case '{', '[':
				depth++
				p.i++
			case '}', ']':
				depth--
				p.i++
				if depth == 0 {
					return true
				}
			case '"':
				if _, ok := p.str(); !ok {
					return false
				}
			default:
				p.i++
			}
		}
		return false
	default: // number, true, false, null
		start := p.i
		for p.i < len(p.b) {
			switch p.b[p.i] {
			case ',', '}', ' ', '\t', '\r', '\n', ']':
				return p.i > start
			}
			p.i++
		}
		return false
	}
}
