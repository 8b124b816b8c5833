package naming

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Infer turns a concrete key into the template it probably came from:
// IDs, numbers glued to words ("zadd17" → "zadd{n:int}"), dates, time
// stamps, UUIDs, hex and base64 tokens become typed placeholders, words
// stay. Personal data becomes a hash placeholder ({email:hash},
// {phone:hash}, {idcard:hash}), so that no datum is kept in a family's
// name: such a template describes the keys as they should be written and
// matches them once each datum is replaced by its hash. Keys of one
// family infer to one template ("user_1024_token" and "user_7_token" →
// "user_{id:int}_token"), so unregistered keys can be grouped and a
// registry entry suggested. The result always parses as a template with
// separator sep.
func Infer(key string, sep byte) string {
	var buf [128]byte
	return string(AppendInfer(buf[:0], key, sep))
}

// AppendInfer appends Infer(key, sep) to dst and returns the extended
// buffer, for callers that reuse one buffer across many keys.
func AppendInfer(dst []byte, key string, sep byte) []byte {
	var used names
	return appendInfer(dst, key, sep, &used)
}

// InferValues appends Infer(key, sep) to dst, and calls fn with every
// value of it that may be personal data: an e-mail address, and a number
// standing as a token of its own (as FindPII reads tokens) that became a
// {phone:hash}, {idcard:hash}, {id:int} or {n:int}. slot is the
// placeholder's position in the template (0 the first), value a slice of
// key (with its '+' or trailing X). An audit weighs the values of one
// family's slot together (ValuePII) instead of judging each key alone.
func InferValues(dst []byte, key string, sep byte, fn func(slot int, value string)) []byte {
	used := names{fn: fn}
	return appendInfer(dst, key, sep, &used)
}

func appendInfer(dst []byte, key string, sep byte, used *names) []byte {
	// Segments are split at the rune sep (a byte above 0x7f is its UTF-8
	// encoding, two bytes) but joined with the byte sep, as Infer always did.
	var split string
	if sep >= utf8.RuneSelf {
		split = string(rune(sep))
	}
	for first := true; ; first = false {
		seg, rest, more := key, "", false
		if split == "" {
			if i := strings.IndexByte(key, sep); i >= 0 {
				seg, rest, more = key[:i], key[i+1:], true
			}
		} else if i := strings.Index(key, split); i >= 0 {
			seg, rest, more = key[:i], key[i+len(split):], true
		}
		if !first {
			dst = append(dst, sep)
		}
		used.domain = first
		dst = inferSeg(dst, seg, used)
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
	nameEmail
	nameIDCard
	nameN
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
	case nameEmail:
		return "email"
	case nameIDCard:
		return "idcard"
	case nameN:
		return "n"
	}
	return "id"
}

// names counts the uses of each base name within one key, and the
// placeholders so far; fn (InferValues) receives values.
type names struct {
	n      [numNames]int
	slot   int
	fn     func(slot int, value string)
	domain bool // the key's first segment is being read
}

// value hands v, the value of the placeholder put next, to fn.
func (u *names) value(v string) {
	if u.fn != nil {
		u.fn(u.slot, v)
	}
}

// digits hands the number seg[i:j] (after a '+' when plus) to fn when
// it is long enough to be personal data and stands as a token of its own.
func (u *names) digits(seg string, i, j int, plus bool) {
	if u.fn == nil || j-i < 8 || !standsAlone(seg, i, j) {
		return
	}
	if plus {
		i--
	}
	u.value(seg[i:j])
}

// put appends "{" + the next name for base + suffix.
func (u *names) put(dst []byte, base int, suffix string) []byte {
	u.n[base]++
	u.slot++
	dst = append(dst, '{')
	dst = append(dst, baseName(base)...)
	if n := u.n[base]; n > 1 {
		dst = strconv.AppendInt(dst, int64(n), 10)
	}
	return append(dst, suffix...)
}

// segBits classifies the bytes of a segment for inferSeg's shortcuts: a
// digit, a byte other than a digit, and a byte ('@', '{', '}') that makes
// Infer write something other than the byte itself.
var segBits = func() (t [256]uint8) {
	for c := range t {
		t[c] = segOther
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = segDigit
	}
	t['@'] |= segSpecial
	t['{'] |= segSpecial
	t['}'] |= segSpecial
	return t
}()

const (
	segDigit = 1 << iota
	segOther
	segSpecial
)

func inferSeg(dst []byte, seg string, used *names) []byte {
	if seg == "" {
		return used.put(dst, nameEmpty, "}") // keeps the template parseable
	}
	var bits uint8
	for i := 0; i < len(seg); i++ {
		bits |= segBits[seg[i]]
	}
	switch {
	case bits&(segDigit|segSpecial) == 0 && len(seg) != 36:
		// A word: every placeholder but {empty} and {uuid} takes a digit,
		// an e-mail an '@', and only braces are escaped.
		return append(dst, seg...)
	case bits == segDigit:
		// A number: neither a UUID, hex, a dashed date, an e-mail nor a
		// token (those take letters or punctuation).
		return inferSegment(dst, seg, used)
	}
	return inferShaped(dst, seg, used)
}

// inferShaped is inferSeg of any segment but the empty one, without the
// shortcuts: the shapes that make a whole segment one placeholder, an
// e-mail address inside it, then its numbers.
func inferShaped(dst []byte, seg string, used *names) []byte {
	switch {
	case len(seg) == 36 && strings.Count(seg, "-") == 4 && isHexDash(seg):
		return used.put(dst, nameUUID, ":uuid}")
	case len(seg) >= 16 && isHex(seg) && !allDigits(seg) && strings.ContainsAny(seg, "0123456789"):
		return used.put(dst, nameHex, ":hex}")
	case len(seg) == 10 && validDate(seg[:4]+seg[5:7]+seg[8:], 2000, 2099) && seg[4] == '-' && seg[7] == '-':
		return used.put(dst, nameDate, "}") // 2024-03-21: :date is yyyyMMdd
	}
	if at := strings.IndexByte(seg, '@'); at >= 0 {
		if l, r, ok := emailAt(seg, at); ok {
			dst = inferSegment(dst, seg[:l], used)
			used.value(seg[l:r])
			dst = used.put(dst, nameEmail, ":hash}")
			return inferSegment(dst, seg[r:], used)
		}
	}
	if isToken(seg) || isBase64Token(seg) {
		return used.put(dst, nameToken, "}")
	}
	return inferSegment(dst, seg, used)
}

// emailAt finds the e-mail address around the '@' at seg[at]: its bounds
// l and r, ok when it has a local part and a dotted domain.
func emailAt(seg string, at int) (l, r int, ok bool) {
	l = at
	for l > 0 && isEmailLocal(seg[l-1]) {
		l--
	}
	r, dot := at+1, -1
	for r < len(seg) && (isAlnum(seg[r]) || seg[r] == '-' || seg[r] == '.') {
		if seg[r] == '.' {
			dot = r
		}
		r++
	}
	for r > at+1 && seg[r-1] == '.' { // a sentence's full stop
		r--
	}
	return l, r, l < at && dot > at+1 && dot < r-1
}

// isBase64Token reports a base64 or base64url token of 16 or more
// characters: upper and lower case letters and digits mixed, maybe with
// + / - _ and = padding.
func isBase64Token(seg string) bool {
	if len(seg) < 16 {
		return false
	}
	var upper, lower, digit bool
	for i := 0; i < len(seg); i++ {
		switch c := seg[i]; {
		case c >= 'A' && c <= 'Z':
			upper = true
		case c >= 'a' && c <= 'z':
			lower = true
		case isDigit(c):
			digit = true
		case c == '+' || c == '/' || c == '-' || c == '_':
		case c == '=' && i >= len(seg)-2:
		default:
			return false
		}
	}
	return upper && lower && digit
}

func inferSegment(dst []byte, seg string, used *names) []byte {
	for i := 0; i < len(seg); {
		c := seg[i]
		if !isDigit(c) {
			switch c {
			case '{':
				dst = append(dst, "{{"...)
				i++
			case '}':
				dst = append(dst, "}}"...)
				i++
			default:
				// The bytes up to the next digit or brace, as they are.
				j := i + 1
				for j < len(seg) && segBits[seg[j]]&segDigit == 0 && seg[j] != '{' && seg[j] != '}' {
					j++
				}
				dst = append(dst, seg[i:j]...)
				i = j
			}
			continue
		}
		j := i
		for j < len(seg) && isDigit(seg[j]) {
			j++
		}
		run := seg[i:j]
		plus := len(dst) > 0 && dst[len(dst)-1] == '+' && i > 0 && seg[i-1] == '+'
		switch {
		case partOfWord(seg, i, j), used.domain && leadsWord(seg, i, j):
			dst = append(dst, run...)
		case len(run) == 14 && isTimestamp(run):
			dst = used.put(dst, nameDate, ":date}")
			dst = used.put(dst, nameTime, ":int}")
		case len(run) == 8 && validDate(run, 2000, 2099):
			dst = used.put(dst, nameDate, ":date}")
		case isPhone(run, plus):
			used.digits(seg, i, j, plus)
			if plus {
				dst = dst[:len(dst)-1] // +86…: the '+' is part of the number
			}
			dst = used.put(dst, namePhone, ":hash}")
		case isIDCard(run) || len(run) == 17 && j < len(seg) && seg[j]|0x20 == 'x' && isIDCard(seg[i:j+1]):
			if len(run) == 17 {
				j++
			}
			used.digits(seg, i, j, false)
			dst = used.put(dst, nameIDCard, ":hash}")
		case i > 0 && isLetter(seg[i-1]):
			used.digits(seg, i, j, false)
			dst = used.put(dst, nameN, ":int}") // zadd17, order123
		default:
			used.digits(seg, i, j, false)
			dst = used.put(dst, nameID, ":int}")
		}
		i = j
	}
	return dst
}

// isPhone reports a mainland mobile number, with or without the 86 or
// 0086 country code, or after a '+' an E.164 number (8 to 15 digits).
func isPhone(run string, plus bool) bool {
	switch {
	case isMobile(run):
		return true
	case len(run) == 13 && strings.HasPrefix(run, "86") && isMobile(run[2:]):
		return true
	case len(run) == 15 && strings.HasPrefix(run, "0086") && isMobile(run[4:]):
		return true
	}
	return plus && len(run) >= 8 && len(run) <= 15 && run[0] != '0'
}

// partOfWord reports whether the digits seg[i:j] belong to a word rather
// than count something: a version ("v2"), or a short run inside a word
// ("md5", "k8s", "utf8", "sha256", "ipv4", "base64", "oauth2", "x509").
func partOfWord(seg string, i, j int) bool {
	if i == 0 || !isAlnum(seg[i-1]) {
		return false
	}
	if j < len(seg) && isLetter(seg[j]) && j-i < 3 {
		return true // k8s, b2b, 3des: digits between letters
	}
	k := i
	for k > 0 && isLetter(seg[k-1]) {
		k--
	}
	word := strings.ToLower(seg[k:j])
	if word[0] == 'v' && k == i-1 {
		return true // v2, v10
	}
	switch word {
	case "md5", "sha1", "sha224", "sha256", "sha384", "sha512", "crc32", "crc64", "base32", "base64",
		"utf8", "utf16", "utf32", "ipv4", "ipv6", "int8", "int16", "int32", "int64", "uint8", "uint16",
		"uint32", "uint64", "float32", "float64", "oauth1", "oauth2", "http1", "http2", "http3", "h2", "h3",
		"s3", "x509", "l1", "l2", "l3", "p50", "p95", "p99", "i18n", "e2e":
		return true
	}
	return false
}

// leadsWord reports whether the digits seg[i:j] open a word of the key's
// first segment, its domain: one or two digits at its start glued to a
// letter ("2fa", "3des", "5g"). A domain is a name its team chose, not a
// counter; a number after letters still is one ("zadd17" → zadd{n:int}).
func leadsWord(seg string, i, j int) bool {
	return i == 0 && j-i < 3 && j < len(seg) && isLetter(seg[j])
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
