// Package jsonkeys reads the top-level keys of a JSON object: what the
// live audit and investigate read from the head of a string value and the
// snapshot audit from the whole value, so all see the same field names;
// and, for a writer that refuses invalid JSON, the keys of a value
// validated whole.
//
//	var in jsonkeys.Interner
//	keys := jsonkeys.Top(nil, value, 32, &in)          // ["name", "price", …]
//	ok := jsonkeys.Valid(s, func(k string) { use(k) }) // false: not exactly one JSON object
//
// Top is a speed kernel (eight bytes at a time, names interned): its
// reference, a byte-at-a-time scanner, is in the tests, which hold the
// two to each other. Valid is a plain recursive scan, held to
// encoding/json.
//
// It imports only internal/swar.
package jsonkeys

import (
	"encoding/binary"
	"encoding/json"
	"math/bits"

	"github.com/keyguard/keyguard/internal/swar"
)

// Top appends up to max top-level keys of the JSON object in s to dst. s
// may be the head of the value: scanning stops quietly at the end of s
// (keeping a key whose value s cuts) or at the first byte that is not
// JSON, keeping the keys seen so far. intern, when not nil, turns
// repeated key names into one string.
func Top(dst []string, s []byte, max int, intern *Interner) []string {
	i := skipWS(s, 0)
	if i >= len(s) || s[i] != '{' {
		return dst
	}
	i++
	for n := 0; n < max; n++ {
		i = skipWS(s, i)
		if i >= len(s) || s[i] != '"' {
			return dst
		}
		var key string
		end := -1
		if intern != nil && n < len(intern.last) {
			// The key the last object had here, if it is the same: a
			// plain name followed by the closing quote.
			k := intern.last[n]
			if e := i + 1 + len(k); e < len(s) && s[e] == '"' && string(s[i+1:e]) == k {
				key, end = k, e+1
			}
		}
		if end < 0 {
			var plain, ok bool
			if end, plain = scanJSONString(s, i); end < 0 {
				return dst
			}
			if key, ok = jsonKey(s[i:end], plain, n, intern); !ok {
				return dst
			}
		}
		i = skipWS(s, end)
		if i >= len(s) || s[i] != ':' {
			return dst
		}
		// skipJSONValue, with strings, numbers and literals done here:
		// the scan is in the same state (depth 0) when it hands over.
		i++
		dst = append(dst, key) // known now, even if s cuts its value
		if i < len(s) && s[i] == '"' {
			if i = skipJSONString(s, i); i < 0 {
				return dst
			}
		}
		for i < len(s) && !jsonInValue[s[i]] {
			i++
		}
		if i >= len(s) || s[i] != ',' && s[i] != '}' {
			if i = skipJSONValue(s, i); i < 0 {
				return dst
			}
		}
		if s[i] == '}' {
			return dst
		}
		i++ // ','
	}
	return dst
}

func skipWS(s []byte, i int) int {
	for i < len(s) && s[i] <= ' ' && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// Byte classes for the scanners: inside a string, the bytes that end it,
// escape or make it not plain; between values, the bytes that matter to
// skipJSONValue. Read-only tables.
var (
	jsonInString = [256]bool{'"': true, '\\': true,
		0x00: true, 0x01: true, 0x02: true, 0x03: true, 0x04: true, 0x05: true, 0x06: true, 0x07: true,
		0x08: true, 0x09: true, 0x0a: true, 0x0b: true, 0x0c: true, 0x0d: true, 0x0e: true, 0x0f: true,
		0x10: true, 0x11: true, 0x12: true, 0x13: true, 0x14: true, 0x15: true, 0x16: true, 0x17: true,
		0x18: true, 0x19: true, 0x1a: true, 0x1b: true, 0x1c: true, 0x1d: true, 0x1e: true, 0x1f: true}
	jsonInValue = [256]bool{'"': true, '{': true, '[': true, ']': true, '}': true, ',': true}
)

// The string scanners look at eight bytes at a time (package swar): only
// the lowest flagged byte is exact, and the lowest one is all they use.

// skipJSONString returns the index after the closing quote of the string
// starting at s[i] == '"', or -1.
func skipJSONString(s []byte, i int) int {
	j := i + 1
	for {
		for j+8 <= len(s) {
			x := binary.LittleEndian.Uint64(s[j:])
			if m := swar.Eq(x, '"') | swar.Eq(x, '\\'); m != 0 {
				j += bits.TrailingZeros64(m) >> 3
				break
			}
			j += 8
		}
		for j < len(s) && !jsonInString[s[j]] {
			j++
		}
		if j >= len(s) {
			return -1
		}
		switch s[j] {
		case '"':
			return j + 1
		case '\\':
			j++
		}
		j++
	}
}

// scanJSONString is skipJSONString also reporting whether the string is
// plain: no escapes, no control characters, its bytes are its value.
func scanJSONString(s []byte, i int) (int, bool) {
	j := i + 1
	for j+8 <= len(s) {
		x := binary.LittleEndian.Uint64(s[j:])
		if m := swar.Eq(x, '"') | swar.Eq(x, '\\') | swar.Less(x, 0x20); m != 0 {
			j += bits.TrailingZeros64(m) >> 3
			break
		}
		j += 8
	}
	for ; j < len(s); j++ {
		switch c := s[j]; {
		case c == '"':
			return j + 1, true
		case jsonInString[c]:
			// An escape or a control character: finish the slow way.
			end := skipJSONString(s, j-1)
			return end, false
		}
	}
	return -1, false
}

func jsonKey(quoted []byte, plain bool, pos int, intern *Interner) (string, bool) {
	if plain {
		raw := quoted[1 : len(quoted)-1]
		if intern != nil {
			return intern.get(raw, pos), true
		}
		return string(raw), true
	}
	var k string
	if err := json.Unmarshal(quoted, &k); err != nil {
		return "", false
	}
	return k, true
}

// skipJSONValue skips one value starting at or after s[i] and returns the
// index of the ',' or '}' that ends it at the top level, or -1.
func skipJSONValue(s []byte, i int) int {
	depth := 0
	for i < len(s) {
		c := s[i]
		if !jsonInValue[c] {
			i++
			continue
		}
		switch c {
		case '"':
			i = skipJSONString(s, i)
			if i < 0 {
				return -1
			}
			continue
		case '{', '[':
			depth++
		case ']':
			depth--
			if depth < 0 {
				return -1
			}
		case '}':
			if depth == 0 {
				return i
			}
			depth--
		case ',':
			if depth == 0 {
				return i
			}
		}
		i++
	}
	return -1
}

// Interner hands out shared strings for JSON key names, so names repeated
// across values cost one allocation. Values written by one program list
// the same keys in the same order, so the names of the last object are
// tried first, by position, before the (bounded) table.
type Interner struct {
	last []string // keys of the last object, by position
	m    map[string]string
}

const (
	maxInterned     = 4096
	maxInternedLen  = 64
	maxInternedLast = 64
)

// Intern returns a shared string for b, the name at position pos of its
// object (a hash's field names, read live): what Top does with its keys.
func (in *Interner) Intern(b []byte, pos int) string { return in.get(b, pos) }

// get returns a shared string for b, the key at position pos of its object.
func (in *Interner) get(b []byte, pos int) string {
	if pos < len(in.last) && in.last[pos] == string(b) {
		return in.last[pos]
	}
	if len(b) > maxInternedLen {
		return string(b)
	}
	s, ok := in.m[string(b)]
	if !ok {
		if in.m == nil || len(in.m) >= maxInterned {
			in.m = make(map[string]string, 256)
		}
		s = string(b)
		in.m[s] = s
	}
	switch {
	case pos < len(in.last):
		in.last[pos] = s
	case pos == len(in.last) && pos < maxInternedLast:
		in.last = append(in.last, s)
	}
	return s
}

// Object reports whether s (the head of a value) may start a JSON
// object: its first byte after white space is '{', or it is all white
// space.
func Object(s []byte) bool {
	i := skipWS(s, 0)
	return i >= len(s) || s[i] == '{'
}
