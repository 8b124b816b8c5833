package naming

import (
	"fmt"
	"strings"

	"github.com/keyguard/keyguard/finding"
)

// PII reports phone numbers, e-mail addresses and ID-card numbers in s.
func (r Rules) PII(s string, emit Emit) {
	if what, ok := FindPII(s); ok {
		emit(finding.PII, finding.Error,
			fmt.Sprintf("%s in the key: keys show up in SCAN, MONITOR, slow logs and dashboards", what),
			"store a hash of it with a {name:hash} placeholder, or mark the template pii: allow after review")
	}
}

// FindPII looks for a mainland mobile number (also with a 86, +86 or
// 0086 prefix), an e-mail address or an 18-digit ID-card number (checksum
// and birth date valid) and describes the first found without repeating
// it in full.
//
// A number counts only when it stands as a token of its own: between
// separators or other punctuation, or after a word such as "u", "tel" or
// "mobile". Digits inside a longer alphanumeric token (an md5 or other hex
// string, "a18812345678b") are part of an identifier, not a phone number.
func FindPII(s string) (string, bool) {
	for i := 0; i < len(s); {
		if !isDigit(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		run := s[i:j]
		if j < len(s) && len(run) == 17 && (s[j] == 'X' || s[j] == 'x') {
			run = s[i : j+1]
		}
		if standsAlone(s, i, i+len(run)) {
			switch {
			case isMobile(run):
				return "mobile number " + mask(run), true
			case len(run) == 13 && strings.HasPrefix(run, "86") && isMobile(run[2:]):
				return "mobile number " + mask(run), true
			case len(run) == 15 && strings.HasPrefix(run, "0086") && isMobile(run[4:]):
				return "mobile number " + mask(run), true
			case isIDCard(run):
				return "ID-card number " + mask(run), true
			}
		}
		i = j
	}
	if at := strings.IndexByte(s, '@'); at > 0 {
		l := at
		for l > 0 && isEmailLocal(s[l-1]) {
			l--
		}
		r := at + 1
		dot := -1
		for r < len(s) && (isAlnum(s[r]) || s[r] == '-' || s[r] == '.') {
			if s[r] == '.' {
				dot = r
			}
			r++
		}
		if l < at && dot > at+1 && r-dot > 2 {
			return "e-mail address " + mask(s[l:r]), true
		}
	}
	return "", false
}

// standsAlone reports whether s[i:j] is a token of its own: nothing
// alphanumeric follows it, and what precedes it is either not
// alphanumeric or a word of letters that starts the token and is not all
// hex digits ("u", "tel", "mobile" but not "ab", which may be the head of
// a hex string).
func standsAlone(s string, i, j int) bool {
	if j < len(s) && isAlnum(s[j]) {
		return false
	}
	if i == 0 || !isAlnum(s[i-1]) {
		return true
	}
	k, word := i, false
	for k > 0 && isLetter(s[k-1]) {
		k--
		word = word || s[k]|0x20 > 'f'
	}
	return word && (k == 0 || !isAlnum(s[k-1]))
}

func isMobile(run string) bool {
	return len(run) == 11 && run[0] == '1' && run[1] >= '3' && run[1] <= '9'
}

// isIDCard checks the GB 11643 18-digit citizen number: a valid birth
// date at 6..14 and the ISO 7064 MOD 11-2 check digit.
func isIDCard(run string) bool {
	if len(run) != 18 || !allDigits(run[:17]) || !validDate(run[6:14], 1900, 2099) {
		return false
	}
	weights := [17]int{7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2}
	sum := 0
	for i := 0; i < 17; i++ {
		sum += int(run[i]-'0') * weights[i]
	}
	last := run[17]
	if last == 'x' {
		last = 'X'
	}
	return "10X98765432"[sum%11] == last
}

func mask(s string) string {
	if len(s) <= 4 {
		return "****"
	}
	return s[:3] + strings.Repeat("*", len(s)-5) + s[len(s)-2:]
}

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isAlnum(c byte) bool  { return isDigit(c) || isLetter(c) }
func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isEmailLocal(c byte) bool {
	return isAlnum(c) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-'
}

// PIIName reports whether a placeholder name says it holds personal data
// (phone, mobile, email, idcard…), and which kind.
func PIIName(name string) (string, bool) {
	// Lower case without '_', on the stack: checks call this per key.
	var buf [64]byte
	b := buf[:0]
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c == '_' {
			continue
		}
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	n := string(b) // does not escape: strings.Contains and friends do not keep it
	switch {
	case strings.Contains(n, "phone") || strings.Contains(n, "mobile") || strings.HasPrefix(n, "tel"):
		return "phone number", true
	case strings.Contains(n, "email") || strings.HasSuffix(n, "mail"):
		return "e-mail address", true
	case strings.Contains(n, "idcard") || strings.Contains(n, "idno") || strings.Contains(n, "identity") || strings.Contains(n, "passport"):
		return "ID number", true
	}
	return "", false
}

// FindTimestamp finds a date or time stamp written as digits: yyyyMMdd,
// yyyyMMddHH, yyyyMMddHHmm, yyyyMMddHHmmss (years 2000-2099), or a
// 13-digit Unix time in milliseconds between 2001 and 2040.
func FindTimestamp(s string) (string, bool) {
	for i := 0; i < len(s); {
		if !isDigit(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if run := s[i:j]; isTimestamp(run) {
			return run, true
		}
		i = j
	}
	return "", false
}

func isTimestamp(run string) bool {
	switch len(run) {
	case 8:
		return validDate(run, 2000, 2099)
	case 10, 12, 14:
		if !validDate(run[:8], 2000, 2099) {
			return false
		}
		limits := []int{23, 59, 59}
		for k := 0; 8+2*k < len(run); k++ {
			if num(run[8+2*k:10+2*k]) > limits[k] {
				return false
			}
		}
		return true
	case 13:
		return run >= "1000000000000" && run <= "2208988800000"
	}
	return false
}

func validDate(s string, minYear, maxYear int) bool {
	if len(s) != 8 || !allDigits(s) {
		return false
	}
	y, m, d := num(s[:4]), num(s[4:6]), num(s[6:8])
	return y >= minYear && y <= maxYear && m >= 1 && m <= 12 && d >= 1 && d <= 31
}

func num(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

// PIIKind is a kind of personal datum a whole placeholder value can be.
type PIIKind uint8

// Kinds of personal data ValuePII tells.
const (
	NoPII  PIIKind = iota
	Mobile         // a mainland mobile number, maybe with 86 or 0086
	E164           // an international number: '+', 8 to 15 digits
	IDCard         // an 18-digit resident ID with a valid birth date and check digit
	Card           // a payment card number: 13 to 19 digits passing Luhn
	Email          // an e-mail address
	NumPIIKinds
)

// String names the kind in the plural, as messages use it.
func (k PIIKind) String() string {
	switch k {
	case Mobile:
		return "mobile numbers"
	case E164:
		return "international phone numbers"
	case IDCard:
		return "resident ID numbers"
	case Card:
		return "card numbers"
	case Email:
		return "e-mail addresses"
	}
	return "no personal data"
}

// PIIMask is a set of kinds (bit 1<<kind).
type PIIMask uint8

// Has reports whether k is in m.
func (m PIIMask) Has(k PIIKind) bool { return m&(1<<k) != 0 }

// MayHoldValuePII reports whether key can hold a value ValuePII judges
// personal data: an '@', a run of 11 or more digits, or 8 or more after a
// '+'. Most keys hold none, and an audit asks it of every key.
func MayHoldValuePII(key string) bool {
	if strings.IndexByte(key, '@') >= 0 {
		return true
	}
	for off := 0; ; {
		i, j, ok := digitRun(key[off:], 8)
		if !ok {
			return false
		}
		i, j = off+i, off+j
		if j-i >= 11 || i > 0 && key[i-1] == '+' {
			return true
		}
		off = j
	}
}

// digitRun finds the first whole run of n or more digits in s (n >= 1),
// s[i:j], looking at every n-th byte: a run that long holds one of them.
// Where s is a part of a longer string, the run is whole when s starts
// and ends at non-digits or at the string's ends.
func digitRun(s string, n int) (i, j int, ok bool) {
	for p := n - 1; p < len(s); {
		if !isDigit(s[p]) {
			p += n
			continue
		}
		i, j = p, p+1
		for i > 0 && isDigit(s[i-1]) {
			i--
		}
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if j-i >= n {
			return i, j, true
		}
		p = j + n // a run after s[j], not a digit, that long holds s[j+n]
	}
	return 0, 0, false
}

// ValuePII judges a whole placeholder value: the kind of personal datum
// it is (hit), and the kinds whose shape it has without being one (miss:
// an 11-character value that is not a mobile number, 13 to 19 that fail
// Luhn, 18 that are not a resident ID). A caller that sees many values
// of one placeholder weighs the hits against the misses: numbers that
// only happen to pass a check come with many that fail it.
func ValuePII(v string) (hit PIIKind, miss PIIMask) {
	if strings.IndexByte(v, '@') >= 0 {
		if _, ok := FindPII(v); ok && isEmailValue(v) {
			return Email, 0
		}
		return NoPII, 0
	}
	if len(v) > 1 && v[0] == '+' {
		d := v[1:]
		if allDigits(d) && len(d) >= 8 && len(d) <= 15 && d[0] != '0' {
			return E164, 0
		}
		return NoPII, 0
	}
	n := len(v)
	if n < 11 || n > 19 || !alnumWithDigit(v) {
		return NoPII, 0
	}
	digits := allDigits(v)
	switch {
	case n == 11:
		if digits && isMobile(v) {
			return Mobile, 0
		}
		return NoPII, 1 << Mobile
	case n == 13 && digits && strings.HasPrefix(v, "86") && isMobile(v[2:]),
		n == 15 && digits && strings.HasPrefix(v, "0086") && isMobile(v[4:]):
		return Mobile, 0
	case n == 18 && isIDCard(v):
		return IDCard, 0
	}
	if n == 18 {
		miss |= 1 << IDCard
	}
	if n >= 13 {
		if digits && luhn(v) && v[0] >= '2' && v[0] <= '6' {
			return Card, miss
		}
		miss |= 1 << Card
	}
	return NoPII, miss
}

// isEmailValue reports whether the whole of v is one e-mail address.
func isEmailValue(v string) bool {
	at := strings.IndexByte(v, '@')
	if at <= 0 || strings.IndexByte(v[at+1:], '@') >= 0 {
		return false
	}
	for i := 0; i < at; i++ {
		if !isEmailLocal(v[i]) {
			return false
		}
	}
	dot := strings.LastIndexByte(v, '.')
	for i := at + 1; i < len(v); i++ {
		if c := v[i]; !isAlnum(c) && c != '-' && c != '.' {
			return false
		}
	}
	return dot > at+1 && len(v)-dot > 2
}

func alnumWithDigit(s string) bool {
	digit := false
	for i := 0; i < len(s); i++ {
		if !isAlnum(s[i]) {
			return false
		}
		digit = digit || isDigit(s[i])
	}
	return digit
}

// luhn checks the Luhn (mod 10) check digit of a run of digits.
func luhn(s string) bool {
	sum, double := 0, false
	for i := len(s) - 1; i >= 0; i-- {
		d := int(s[i] - '0')
		if double {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return sum%10 == 0
}

// Mask shows a personal datum without repeating it: its first three and
// last two characters.
func Mask(s string) string { return mask(s) }
