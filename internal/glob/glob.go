// Package glob is Redis' glob matcher, the one SCAN MATCH, KEYS and
// PSUBSCRIBE use (stringmatchlen in the server's src/util.c,
// case-sensitive), so that a pattern keyguard applies to keys it already
// holds (a snapshot's, a capture's) selects what the server would.
//
//	glob.Match([]byte("order:*:base"), key)      // as SCAN MATCH decides
//	glob.MatchString("*"+glob.Escape(id)+"*", k) // id taken literally
//
// The tests hold it to a real server's SCAN MATCH and, fuzzed, to a
// step-by-step copy of the server's algorithm.
//
// It imports no package of this module.
package glob

import "strings"

// Match reports whether key matches pattern as SCAN MATCH decides it: *
// any run of bytes, ? one byte, [abc] [^abc] [a-z] one byte of a class, \x
// the byte x. The server's corner cases are kept on purpose:
//
//   - "*" alone matches every key, the empty one too (SCAN skips the
//     matcher); any other pattern never matches the empty key, except "".
//   - A class needs no closing bracket ("[ab" is "[ab]"); "[]" matches
//     nothing and "[^]" any byte; in "[a-]" the range runs from 'a' to ']'.
//   - Range bounds compare as C chars, signed as on x86-64: bytes >= 0x80
//     sort below 0x00, so "[\x80-a]" holds the ASCII bytes up to 'a'.
//     (A server built for arm64, where char is unsigned, differs on such
//     ranges; nothing else depends on the byte values.)
//   - Past 1000 nested stars the pattern matches nothing (the server's
//     guard against abusive patterns, CVE-2022-36021).
//
// Work is polynomial in the lengths: a star that failed at every position
// stops the outer stars from trying longer prefixes, as the server does.
func Match(pattern, key []byte) bool { return match(pattern, key) }

// MatchString is Match on strings.
func MatchString(pattern, key string) bool { return match(pattern, key) }

// text is what the matcher reads: one instance for []byte, one for string.
type text interface{ ~string | ~[]byte }

func match[T text](pattern, key T) bool {
	if len(pattern) == 1 && pattern[0] == '*' {
		return true
	}
	var failed bool
	return from(pattern, key, &failed, 0)
}

func from[T text](p, s T, starFailed *bool, nesting int) bool {
	if nesting > 1000 {
		return false
	}
	for len(p) > 0 && len(s) > 0 {
		switch p[0] {
		case '*':
			for len(p) > 1 && p[1] == '*' {
				p = p[1:]
			}
			if len(p) == 1 {
				return true
			}
			for ; len(s) > 0; s = s[1:] {
				if from(p[1:], s, starFailed, nesting+1) {
					return true
				}
				if *starFailed {
					return false
				}
			}
			*starFailed = true
			return false
		case '?':
			p = p[1:]
		case '[':
			var ok bool
			p, ok = class(p[1:], s[0])
			if !ok {
				return false
			}
		case '\\':
			if len(p) >= 2 {
				p = p[1:]
			}
			fallthrough
		default:
			if p[0] != s[0] {
				return false
			}
			p = p[1:]
		}
		s = s[1:]
		if len(s) == 0 {
			for len(p) > 0 && p[0] == '*' {
				p = p[1:]
			}
			break
		}
	}
	return len(p) == 0 && len(s) == 0
}

// class matches c against the class that starts at p (just past its '['),
// and returns the pattern past the class's ']' (or its end, for a class
// left open).
func class[T text](p T, c byte) (rest T, ok bool) {
	not := len(p) > 0 && p[0] == '^'
	if not {
		p = p[1:]
	}
	match := false
	for {
		switch {
		case len(p) >= 2 && p[0] == '\\':
			match = match || p[1] == c
			p = p[2:]
		case len(p) == 0:
			return p, match != not
		case p[0] == ']':
			return p[1:], match != not
		case len(p) >= 3 && p[1] == '-':
			lo, hi, x := int(int8(p[0])), int(int8(p[2])), int(int8(c))
			if lo > hi {
				lo, hi = hi, lo
			}
			match = match || (x >= lo && x <= hi)
			p = p[3:]
		default:
			match = match || p[0] == c
			p = p[1:]
		}
	}
}

// Escape quotes the bytes that are special in a pattern (* ? [ ] \), so
// that the pattern matches s and nothing else.
func Escape(s string) string {
	if !strings.ContainsAny(s, `*?[]\`) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 4)
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[', ']', '\\':
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
