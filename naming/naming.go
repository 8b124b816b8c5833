// Package naming holds the naming rules for Redis keys: case, charset,
// length, separator, leading IDs, time stamps and personal data (see
// docs/rules.md). Registry lint, check, audit and rdb share them.
//
//	r := naming.Rules{Sep: ':', MaxKeyBytes: 64}
//	r.Key("user_1024_token", func(rule string, sev finding.Severity, msg, hint string) { … })
//
// It is part of the SDK and pure: it imports only package finding.
package naming

import (
	"fmt"
	"strings"

	"github.com/keyguard/keyguard/finding"
)

// Rules carries the settings the naming rules depend on.
type Rules struct {
	Sep         byte
	MaxKeyBytes int // 0: no limit
}

// Emit receives one broken rule.
type Emit func(rule string, sev finding.Severity, msg, hint string)

// Key checks a concrete key that matches no template against every naming
// rule. start is where the domain segment begins (after an env prefix).
func (r Rules) Key(key string, start int, emit Emit) {
	r.KeyExceptPII(key, start, emit)
	r.PII(key, emit)
}

// KeyExceptPII is Key without the personal-data rule, for a caller that
// judges personal data with the evidence of many keys (InferValues).
func (r Rules) KeyExceptPII(key string, start int, emit Emit) {
	r.Length(key, emit)
	if strings.IndexByte(key, r.Sep) < 0 {
		msg, hint := separatorText(r.Sep)
		emit(finding.Separator, finding.Warning, msg, hint)
	}
	mayText, mayTimestamp := textMayBreak(key)
	if mayText {
		r.Text(key, emit)
	}
	if start <= len(key) {
		first, _, _ := strings.Cut(key[start:], string(r.Sep))
		if LooksLikeID(first) {
			emit(finding.LeadingID, finding.Warning,
				fmt.Sprintf("the first segment %s is an ID, not a domain", finding.Display(first)),
				"start with the owning domain, e.g. user:"+finding.Display(first)+":info")
		}
	}
	if !mayTimestamp {
		return
	}
	if ts, ok := FindTimestamp(key); ok {
		emit(finding.Timestamp, finding.Warning,
			fmt.Sprintf("time stamp %s in the key: a new key every period that is never reused", ts),
			"keep time out of the name, or give every such key a TTL that ends its period")
	}
}

// textMayBreak says which of the byte-by-byte rules key can break: text,
// when it has a byte outside a-z 0-9 : _ - . (case and charset);
// timestamp, when it has a run of eight digits or more (every stamp
// FindTimestamp finds). Most keys break neither.
func textMayBreak(key string) (text, timestamp bool) {
	var bits uint8
	for i := 0; i < len(key); i++ {
		bits |= textBits[key[i]]
	}
	_, _, timestamp = digitRun(key, 8)
	return bits != 0, timestamp
}

// textBits marks the bytes outside a-z 0-9 : _ - ., which Text looks at.
var textBits = func() (t [256]uint8) {
	for c := range t {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == ':', c == '_', c == '-', c == '.':
		default:
			t[c] = 1
		}
	}
	return t
}()

// Length reports a key over MaxKeyBytes.
func (r Rules) Length(key string, emit Emit) {
	if r.MaxKeyBytes > 0 && len(key) > r.MaxKeyBytes {
		emit(finding.Length, finding.Warning,
			fmt.Sprintf("%d bytes, over the %d-byte limit", len(key), r.MaxKeyBytes),
			"shorten the literal words, or move filters and paging out of the key into the value")
	}
}

// Text checks the characters of key text: upper case (naming/case) and
// characters outside a-z 0-9 : _ - . (naming/charset). Braces of a
// well-formed Cluster hash tag are allowed.
func (r Rules) Text(s string, emit Emit) {
	r.text(s, true, 0, emit)
}

// Value checks a placeholder's value: only characters that break keys
// (control, space, non-ASCII, quotes, braces, angle brackets), not case.
func (r Rules) Value(s string, emit Emit) {
	r.text(s, false, 0, emit)
}

// ValueAt is Value for a value that starts at byte at of its key: the
// message gives the byte's position in the key, where the user looks.
func (r Rules) ValueAt(s string, at int, emit Emit) {
	r.text(s, false, at, emit)
}

func (r Rules) text(s string, withCase bool, at int, emit Emit) {
	tagOpen, tagClose := hashTag(s)
	upperAt, badAt := -1, -1
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == ':', c == '_', c == '-', c == '.', c == r.Sep:
		case c >= 'A' && c <= 'Z':
			if upperAt < 0 {
				upperAt = i
			}
		case (c == '{' && i == tagOpen) || (c == '}' && i == tagClose):
		default:
			if !withCase && isPunct(c) {
				continue // values may hold any printable ASCII but the breakers
			}
			if badAt < 0 {
				badAt = i
			}
		}
	}
	if withCase && upperAt >= 0 {
		emit(finding.Case, finding.Warning,
			fmt.Sprintf("upper-case letter %q at byte %d: Redis keys are case-sensitive, User:1 and user:1 are two keys", s[upperAt], upperAt),
			"use lower case only")
	}
	if badAt >= 0 {
		emit(finding.Charset, finding.Error,
			fmt.Sprintf("%s at byte %d", describeByte(s, badAt), at+badAt),
			"keep keys to a-z 0-9 : _ - . and put user input in a {name:hash} placeholder")
	}
}

// isPunct reports the punctuation a value may hold: not quotes and braces,
// which break keys and hash tags, nor angle brackets, markup that turns a
// key shown in a dashboard or a log viewer into an injection.
func isPunct(c byte) bool {
	return c > ' ' && c < 0x7f && c != '"' && c != '\'' && c != '`' && c != '{' && c != '}' && c != '<' && c != '>'
}

func describeByte(s string, i int) string {
	c := s[i]
	switch {
	case c == '\n':
		return "newline"
	case c == ' ':
		return "space"
	case c < 0x20 || c == 0x7f:
		return fmt.Sprintf("control byte 0x%02x", c)
	case c >= 0x80:
		return fmt.Sprintf("non-ASCII byte 0x%02x", c)
	case c == '"' || c == '\'' || c == '`':
		return fmt.Sprintf("quote %q", c)
	case c == '{' || c == '}':
		return fmt.Sprintf("brace %q outside a hash tag", c)
	case c == '<' || c == '>':
		return fmt.Sprintf("angle bracket %q", c)
	default:
		return fmt.Sprintf("character %q", c)
	}
}

// hashTag returns the byte offsets of the braces of the key's Cluster
// hash tag (the first '{' and the first '}' after it, with something in
// between), or -1, -1.
func hashTag(s string) (open, close int) {
	open = strings.IndexByte(s, '{')
	if open < 0 {
		return -1, -1
	}
	c := strings.IndexByte(s[open+1:], '}')
	if c <= 0 {
		return -1, -1
	}
	return open, open + 1 + c
}

// LooksLikeID reports whether a segment is an identifier rather than a
// word: all digits, a UUID, or a long hex string.
func LooksLikeID(seg string) bool {
	if seg == "" {
		return false
	}
	if allDigits(seg) {
		return true
	}
	if len(seg) == 36 && seg[8] == '-' && seg[13] == '-' && seg[18] == '-' && seg[23] == '-' {
		return true
	}
	if len(seg) >= 16 {
		digits := 0
		for i := 0; i < len(seg); i++ {
			c := seg[i] | 0x20
			if c >= '0' && c <= '9' {
				digits++
			} else if c < 'a' || c > 'f' {
				return false
			}
		}
		return digits > 0
	}
	return false
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// separatorText is the naming/separator message; the usual ':' needs no
// formatting, which matters on a walk over millions of such keys.
func separatorText(sep byte) (msg, hint string) {
	if sep == ':' {
		return "no ':' separator: the key has no levels to group, scan or own by prefix",
			"name keys domain:entity:id:attr, e.g. user:token:1024"
	}
	return fmt.Sprintf("no %q separator: the key has no levels to group, scan or own by prefix", sep),
		fmt.Sprintf("name keys domain%[1]centity%[1]cid%[1]cattr, e.g. user%[1]ctoken%[1]c1024", sep)
}
