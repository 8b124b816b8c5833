package jsonout

import (
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/keyguard/keyguard/internal/swar"
)

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string the way Write writes it
// (encoding/json with HTML escaping off): quotes, backslashes and control
// bytes escaped, invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		// Eight plain bytes at a time: printable ASCII but '"' and '\\'.
		for i+8 <= len(s) && plain8(s, i) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// plain8 reports whether s[i:i+8] are all printable ASCII other than '"'
// and '\\': bytes AppendString copies as they are.
func plain8(s string, i int) bool {
	x := swar.Load(s, i)
	return swar.Less(x, 0x20)|swar.Eq(x, '"')|swar.Eq(x, '\\')|swar.High(x) == 0
}

// AppendFloat appends f as encoding/json writes a float64: the shortest
// form, with an exponent below 1e-6 and from 1e21. JSON has no NaN or
// infinity, which encoding/json refuses: they are written as null.
func AppendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 as e-9, as encoding/json writes it
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// StringCache appends strings as AppendString does, keeping the encoded
// form of the last string of each of four slots: the elements of a long
// array come in runs that share a template, an owner or a node, which are
// then copied instead of escaped again.
type StringCache struct {
	last [4]string
	enc  [4][]byte
}

// Append appends s through slot i (0 to 3).
func (c *StringCache) Append(b []byte, i int, s string) []byte {
	if s == c.last[i] && c.enc[i] != nil {
		return append(b, c.enc[i]...)
	}
	start := len(b)
	b = AppendString(b, s)
	c.last[i], c.enc[i] = s, append(c.enc[i][:0], b[start:]...)
	return b
}
