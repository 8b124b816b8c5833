package naming

import "strings"

// AppendInferShape appends to dst the shape of key: a string that every
// key Infer (with separator sep) gives the same template as key shares,
// for a caller that infers millions of keys of a few families and keeps
// each shape's template. In a shape a run of five to seven digits is
// zeros, unless it follows a 'v' (a version, which stays in the
// template); every other byte is the key's own. Those runs are IDs and
// counters whose value no rule reads: they are too long for a word
// ("md5", "2fa") and too short for a date, a time stamp, a phone or an
// ID-card number.
//
// ok is false, and dst returned as it was, for a key whose template or
// values depend on more: one with an '@' or a run of eight digits or more
// (InferValues hands over such values), or when sep is a digit.
func AppendInferShape(dst []byte, key string, sep byte) (_ []byte, ok bool) {
	if isDigit(sep) || strings.IndexByte(key, '@') >= 0 {
		return dst, false
	}
	n := len(dst)
	dst = append(dst, key...)
	s := dst[n:]
	for off := 0; ; {
		i, j, found := digitRun(key[off:], 5)
		if !found {
			return dst, true
		}
		i, j = off+i, off+j
		if j-i >= 8 {
			return dst[:n], false
		}
		if i == 0 || key[i-1]|0x20 != 'v' {
			for k := i; k < j; k++ {
				s[k] = '0'
			}
		}
		off = j
	}
}
