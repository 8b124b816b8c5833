package investigate

import "strings"

// globMatch reports whether s matches the Redis glob pattern, as SCAN
// MATCH and PSUBSCRIBE do (the server's stringmatchlen, case-sensitive):
// '*' any run of bytes, '?' one byte, "[abc]", "[^a-z]" (a reversed range
// is swapped, an unterminated class runs to the end of the pattern), and
// '\' escaping the next byte. The capture uses it to keep watching keys
// created after the SCAN.
func globMatch(pattern, s string) bool {
	p, i := 0, 0
	starP, starI := -1, 0
	for i < len(s) {
		if p < len(pattern) {
			if pattern[p] == '*' {
				starP, starI = p, i
				p++
				continue
			}
			if n, ok := globOne(pattern, p, s[i]); ok {
				p += n
				i++
				continue
			}
		}
		if starP < 0 {
			return false
		}
		// Backtrack: the last '*' takes one more byte.
		starI++
		i, p = starI, starP+1
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// globOne matches byte c against the pattern token at pattern[p] (not a
// '*'): it returns the token's length and whether c matches it.
func globOne(pattern string, p int, c byte) (int, bool) {
	switch pattern[p] {
	case '?':
		return 1, true
	case '\\':
		if p+1 < len(pattern) {
			return 2, pattern[p+1] == c
		}
		return 1, c == '\\'
	case '[':
		return globClass(pattern, p, c)
	}
	return 1, pattern[p] == c
}

func globClass(pattern string, p int, c byte) (int, bool) {
	j := p + 1
	not := j < len(pattern) && pattern[j] == '^'
	if not {
		j++
	}
	match := false
	for {
		if j >= len(pattern) {
			j-- // unterminated: the class runs to the end of the pattern
			break
		}
		if pattern[j] == '\\' && len(pattern)-j >= 2 {
			j++
			match = match || pattern[j] == c
		} else if pattern[j] == ']' {
			break
		} else if len(pattern)-j >= 3 && pattern[j+1] == '-' {
			lo, hi := pattern[j], pattern[j+2]
			if lo > hi {
				lo, hi = hi, lo
			}
			match = match || (c >= lo && c <= hi)
			j += 2
		} else {
			match = match || pattern[j] == c
		}
		j++
	}
	return j - p + 1, match != not
}

// globEscape quotes the bytes that are special in a glob pattern, so that
// the pattern matches s literally.
func globEscape(s string) string {
	if !strings.ContainsAny(s, `*?[]\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[', ']', '\\':
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// hasSegment reports whether key holds id as a whole segment: between
// separators, the key's ends, or hash-tag braces ("{order:1001}:items"
// holds 1001).
func hasSegment(key, id string, sep byte) bool {
	if id == "" {
		return false
	}
	for from := 0; ; {
		i := strings.Index(key[from:], id)
		if i < 0 {
			return false
		}
		i += from
		end := i + len(id)
		if (i == 0 || isBoundary(key[i-1], sep)) && (end == len(key) || isBoundary(key[end], sep)) {
			return true
		}
		from = i + 1
	}
}

func isBoundary(c, sep byte) bool { return c == sep || c == '{' || c == '}' }
