// Package valueform tells what a string value holds from its first
// bytes: a JSON object, or another format (a number, text, a JSON array,
// Java serialization, gzip…). A template that declares fields holds JSON
// objects; a value of another format in one of its keys was written by
// something else. The audits read a value's head anyway (for the JSON
// keys), so Of looks at no more than they read: a few bytes, in O(1).
//
// It imports nothing of this module.
package valueform

import "unicode/utf8"

// Form is the format of a string value. The zero Form is Unknown: the
// value was not read.
type Form uint8

// The forms Of tells apart. Reports' state keeps sets of them by number
// (bit n: Form n): a new form goes at the end.
const (
	Unknown Form = iota
	Object       // a JSON object, '{' first (also what a head too short to tell starts like)
	Empty        // no bytes, or white space only
	Null         // JSON null: a cache's "nothing here" mark
	Number       // digits (a counter, an integer Redis stores as such, a JSON number)
	Bool         // JSON true or false
	Array        // a JSON array
	String       // a JSON string, quoted
	Text         // printable text that is none of the above
	Java         // Java serialization (0xAC 0xED), as JdkSerializationRedisSerializer writes
	Gzip         // gzip (0x1F 0x8B)
	Pickle       // Python pickle, protocol 2 or later (0x80, then the protocol)
	Binary       // other bytes
)

var names = [...]string{
	Unknown: "unknown", Object: "a JSON object", Empty: "empty", Null: "JSON null",
	Number: "a number", Bool: "true or false", Array: "a JSON array", String: "a JSON string",
	Text: "text", Java: "Java serialized data", Gzip: "gzip data", Pickle: "Python pickle data",
	Binary: "binary data",
}

// String describes f for a message: "a number", "text", "gzip data".
func (f Form) String() string {
	if int(f) < len(names) {
		return names[f]
	}
	return "unknown"
}

// Foreign reports whether a value of form f breaks a template that holds
// JSON objects: it was read, and it is neither an object nor the empty
// and null marks a cache writes for "nothing here".
func (f Form) Foreign() bool { return f > Null }

// Of returns the form of a string value from its head, the first bytes
// the caller read (all of them for a short value). It looks at no more
// than headBytes past the leading white space, so any head that long
// gives the form the whole value would: "12ab" is text, "12" a number,
// "[" an array.
func Of(head []byte) Form {
	i := 0
	for i < len(head) && isSpace(head[i]) {
		i++
	}
	if i == len(head) {
		return Empty
	}
	s := head[i:min(len(head), i+headBytes)]
	switch c := s[0]; {
	case c == '{':
		return Object
	case c == '[':
		return Array
	case c == '"':
		return String
	case c == '-' || c >= '0' && c <= '9':
		if number(s) {
			return Number
		}
	case c == 0xAC && len(s) > 1 && s[1] == 0xED:
		return Java
	case c == 0x1F && len(s) > 1 && s[1] == 0x8B:
		return Gzip
	case c == 0x80 && len(s) > 1 && s[1] >= 2 && s[1] <= 5:
		return Pickle
	}
	if word(s, "null") {
		return Null
	}
	if word(s, "true") || word(s, "false") {
		return Bool
	}
	if text(s) {
		return Text
	}
	return Binary
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// number reports whether s, up to trailing white space, is made of a
// number's bytes (digits, sign, point, exponent): a counter or a JSON
// number, not a word that starts with a digit.
func number(s []byte) bool {
	digit := false
	for i, c := range s {
		switch {
		case c >= '0' && c <= '9':
			digit = true
		case c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E':
		case isSpace(c):
			return digit && rest(s[i:])
		default:
			return false
		}
	}
	return digit
}

// word reports whether s is w, up to trailing white space.
func word(s []byte, w string) bool {
	return len(s) >= len(w) && string(s[:len(w)]) == w && rest(s[len(w):])
}

// rest reports whether s is white space only.
func rest(s []byte) bool {
	for _, c := range s {
		if !isSpace(c) {
			return false
		}
	}
	return true
}

// headBytes is how much of a value Of looks at: the RDB reader inflates
// 16 bytes of a compressed string to see whether it is JSON.
const headBytes = 16

// text reports whether s reads as text: no control bytes but white
// space, and UTF-8 (a character cut at the end counts).
func text(s []byte) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < ' ' && !isSpace(c) || c == 0x7F {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			return !utf8.FullRune(s[i:])
		}
		i += size
	}
	return true
}
