package naming

import "strings"

// AppendInferShape appends to dst the shape of key: a string that every
// key Infer (with separator sep) gives the same template as key shares,
// and InferValues the same values at the same offsets, for a caller that
// infers millions of keys of a few families and keeps each shape's
// template. In a shape a run of digits whose value no rule reads is
// zeros: 5 to 7 digits (too long for a word such as "md5" or "2fa", too
// short for a date), 9, 10, 12, 16, or 19 and more (IDs and Unix times:
// not a date, a time stamp, a phone or an ID-card number), unless it
// follows a 'v' (a version, which stays in the template) or a '+' (a
// phone number). Every other byte is the key's own.
//
// ok is false, and dst returned as it was, for a key with an '@' (an
// e-mail address), or when sep is a digit.
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
		if shapeless(j-i) && (i == 0 || key[i-1]|0x20 != 'v' && key[i-1] != '+') {
			for k := i; k < j; k++ {
				s[k] = '0'
			}
		}
		off = j
	}
}

// shapeless reports whether Infer reads nothing of a run of n >= 5
// digits but its length: 8 may be a date, 11, 13 and 15 a phone number,
// 14 a time stamp, 17 and 18 an ID-card number.
func shapeless(n int) bool {
	switch n {
	case 8, 11, 13, 14, 15, 17, 18:
		return false
	}
	return true
}
