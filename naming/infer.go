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
	var b strings.Builder
	used := map[string]int{}
	name := func(base string) string {
		used[base]++
		if n := used[base]; n > 1 {
			return base + strconv.Itoa(n)
		}
		return base
	}
	for i, seg := range strings.Split(key, string(sep)) {
		if i > 0 {
			b.WriteByte(sep)
		}
		if seg == "" {
			b.WriteString("{" + name("empty") + "}") // keeps the template parseable
			continue
		}
		switch {
		case len(seg) == 36 && strings.Count(seg, "-") == 4 && isHexDash(seg):
			b.WriteString("{" + name("uuid") + ":uuid}")
			continue
		case len(seg) >= 16 && isHex(seg) && !allDigits(seg) && strings.ContainsAny(seg, "0123456789"):
			b.WriteString("{" + name("hex") + ":hex}")
			continue
		}
		if isToken(seg) {
			b.WriteString("{" + name("token") + "}")
			continue
		}
		inferSegment(&b, seg, name)
	}
	return b.String()
}

func inferSegment(b *strings.Builder, seg string, name func(string) string) {
	for i := 0; i < len(seg); {
		c := seg[i]
		if !isDigit(c) {
			switch c {
			case '{':
				b.WriteString("{{")
			case '}':
				b.WriteString("}}")
			default:
				b.WriteByte(c)
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
			b.WriteString(run)
		case len(run) == 14 && isTimestamp(run):
			b.WriteString("{" + name("date") + ":date}{" + name("time") + ":int}")
		case len(run) == 8 && validDate(run, 2000, 2099):
			b.WriteString("{" + name("date") + ":date}")
		case isMobile(run):
			b.WriteString("{" + name("phone") + "}")
		default:
			b.WriteString("{" + name("id") + ":int}")
		}
		i = j
	}
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
