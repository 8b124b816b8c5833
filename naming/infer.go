package naming

import (
	"strconv"
	"strings"
)

// Infer turns a concrete key into the template it probably came from:
// IDs, dates, time stamps, UUIDs, long hex strings and phone-like runs
// become typed placeholders, words stay. Keys of one family infer to one
// template ("user_1024_token" and "user_7_token" → "user_{id:int}_token"),
// so unregistered keys can be grouped and a registry entry suggested.
// The result always parses as a template with separator sep.
func Infer(key string, sep byte) string {
	var buf [128]byte
	return string(AppendInfer(buf[:0], key, sep))
}

// AppendInfer appends Infer(key, sep) to dst and returns the extended
// buffer, for callers that reuse one buffer across many keys.
func AppendInfer(dst []byte, key string, sep byte) []byte {
	var used names
	// Segments are split at the rune sep (a byte above 0x7f is its UTF-8
	// encoding, two bytes) but joined with the byte sep, as Infer always did.
	split := string(rune(sep))
	for first := true; ; first = false {
		seg, rest, more := key, "", false
		if i := strings.Index(key, split); i >= 0 {
			seg, rest, more = key[:i], key[i+len(split):], true
		}
		if !first {
			dst = append(dst, sep)
		}
		dst = inferSeg(dst, seg, &used)
		if !more {
			return dst
		}
		key = rest
	}
}

// The placeholder base names Infer uses; a second use of one in a key is
// numbered ("id", "id2", ...).
const (
	nameEmpty = iota
	nameUUID
	nameHex
	nameToken
	nameDate
	nameTime
	namePhone
	nameID
	numNames
)

func baseName(base int) string {
	switch base {
	case nameEmpty:
		return "empty"
	case nameUUID:
		return "uuid"
	case nameHex:
		return "hex"
	case nameToken:
		return "token"
	case nameDate:
		return "date"
	case nameTime:
		return "time"
	case namePhone:
		return "phone"
	}
	return "id"
}

// names counts the uses of each base name within one key.
type names [numNames]int

// put appends "{" + the next name for base + suffix.
func (u *names) put(dst []byte, base int, suffix string) []byte {
	u[base]++
	dst = append(dst, '{')
	dst = append(dst, baseName(base)...)
	if n := u[base]; n > 1 {
		dst = strconv.AppendInt(dst, int64(n), 10)
	}
	return append(dst, suffix...)
}

func inferSeg(dst []byte, seg string, used *names) []byte {
	if seg == "" {
		return used.put(dst, nameEmpty, "}") // keeps the template parseable
	}
	switch {
	case len(seg) == 36 && strings.Count(seg, "-") == 4 && isHexDash(seg):
		return used.put(dst, nameUUID, ":uuid}")
	case len(seg) >= 16 && isHex(seg) && !allDigits(seg) && strings.ContainsAny(seg, "0123456789"):
		return used.put(dst, nameHex, ":hex}")
	}
	if isToken(seg) {
		return used.put(dst, nameToken, "}")
	}
	return inferSegment(dst, seg, used)
}

func inferSegment(dst []byte, seg string, used *names) []byte {
	for i := 0; i < len(seg); {
		c := seg[i]
		if !isDigit(c) {
			switch c {
			case '{':
				dst = append(dst, "{{"...)
			case '}':
				dst = append(dst, "}}"...)
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		j := i
		for j < len(seg) && isDigit(seg[j]) {
			j++
		}
		run := seg[i:j]
		wordy := i > 0 && isAlnum(seg[i-1]) && len(run) < 3 // "v2", "md5": part of a word
		switch {
		case wordy:
			dst = append(dst, run...)
		case len(run) == 14 && isTimestamp(run):
			dst = used.put(dst, nameDate, ":date}")
			dst = used.put(dst, nameTime, ":int}")
		case len(run) == 8 && validDate(run, 2000, 2099):
			dst = used.put(dst, nameDate, ":date}")
		case isMobile(run):
			dst = used.put(dst, namePhone, "}")
		default:
			dst = used.put(dst, nameID, ":int}")
		}
		i = j
	}
	return dst
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i] | 0x20
		if !(isDigit(s[i]) || (c >= 'a' && c <= 'f')) {
			return false
		}
	}
	return true
}

func isHexDash(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '-' && !isHex(s[i:i+1]) {
			return false
		}
	}
	return true
}

// isToken reports a random-looking token: eight or more letters and digits
// with digits between letters ("abc123xyz"), unlike "order123" or "v2".
func isToken(seg string) bool {
	if len(seg) < 8 {
		return false
	}
	letterAfterDigit, letters, digits := false, 0, 0
	for i := 0; i < len(seg); i++ {
		switch c := seg[i]; {
		case isDigit(c):
			digits++
		case isAlnum(c):
			letters++
			if i > 0 && isDigit(seg[i-1]) && letters > 1 {
				letterAfterDigit = true
			}
		default:
			return false
		}
	}
	return letterAfterDigit && letters > 0 && digits > 0
}
