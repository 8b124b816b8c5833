package naming

import (
	"strings"
	"testing"

	"github.com/keyguard/keyguard/finding"
)

// inferBoth infers one segment with inferSeg's shortcuts and without them
// (inferShaped), each with a fresh count of names, with the values each
// hands over.
func inferBoth(seg string, domain bool) (short, long string, shortVals, longVals []string) {
	run := func(f func([]byte, string, *names) []byte) (string, []string) {
		var vals []string
		used := names{domain: domain, fn: func(slot int, v string) { vals = append(vals, v) }}
		return string(f(nil, seg, &used)), vals
	}
	short, shortVals = run(inferSeg)
	long, longVals = run(inferShaped)
	return
}

// shortcutSegments are segments at the edges of inferSeg's shortcuts.
var shortcutSegments = []string{
	"order", "ORDER", "Order_Info-x.y", "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", "AAAAAAAA-BBBB-CCCC-DDDD-EEEEEEEEEEEE",
	"abcdefabcdefabcdefab", "aGVsbG8gV29ybGQhISEh", "a{b}c", "{x}", "a{b", "a}b", "a@b.cn", "@", "\xff\xfe", "abcdefghijklmnopqrstuvwxyz0123456789",
	"12345678", "20240321", "20240321150322", "13812345678", "8613812345678", "008613812345678", "110105194912310021",
	"1234567890123456789012345678901234567890", "123456789012345678901234567890123456", "0", "42", "007",
	"2fa", "v2", "md5", "u123", "zadd17", "abc123xyz", "deadbeef12345678", "2024-03-21", "+8613812345678",
}

func TestInferShortcuts(t *testing.T) {
	for _, seg := range shortcutSegments {
		for _, domain := range []bool{false, true} {
			short, long, sv, lv := inferBoth(seg, domain)
			if short != long || strings.Join(sv, "\x00") != strings.Join(lv, "\x00") {
				t.Errorf("segment %q (domain %v): shortcut %q %q, the long way %q %q", seg, domain, short, sv, long, lv)
			}
		}
	}
}

// FuzzInferShortcuts: a segment inferred with the shortcuts is inferred
// as without them, values and all.
func FuzzInferShortcuts(f *testing.F) {
	for _, s := range shortcutSegments {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, seg string, domain bool) {
		if seg == "" {
			return // inferShaped is not for the empty segment
		}
		short, long, sv, lv := inferBoth(seg, domain)
		if short != long || strings.Join(sv, "\x00") != strings.Join(lv, "\x00") {
			t.Fatalf("segment %q (domain %v): shortcut %q %q, the long way %q %q", seg, domain, short, sv, long, lv)
		}
	})
}

// textShortcutKeys are keys at the edges of textMayBreak.
var textShortcutKeys = []string{
	"", "user:1:base", "User:1", "a b", "{tag}:x", "a/b", "\xff", "tmp_data_20240321", "x:1234567:y", "x:12345678:y",
	"x:1700000000123", "20240321150322", "a-b.c_d:e", "UPPER", "x:2024032", "1234567a12345678",
}

// checkTextShortcut fails when textMayBreak says a rule cannot break
// that Text or FindTimestamp finds broken.
func checkTextShortcut(t *testing.T, key string) {
	t.Helper()
	text, stamp := textMayBreak(key)
	n := 0
	Rules{Sep: ':'}.Text(key, func(string, finding.Severity, string, string) { n++ })
	if n > 0 && !text {
		t.Fatalf("textMayBreak(%q): text false, Text finds %d", key, n)
	}
	if _, ok := FindTimestamp(key); ok && !stamp {
		t.Fatalf("textMayBreak(%q): timestamp false, FindTimestamp finds one", key)
	}
}

func TestTextMayBreak(t *testing.T) {
	for _, k := range textShortcutKeys {
		checkTextShortcut(t, k)
	}
	for _, c := range []struct {
		key         string
		text, stamp bool
	}{{"user:1:base", false, false}, {"User:1", true, false}, {"x:12345678", false, true}, {"X:1234567", true, false}} {
		if text, stamp := textMayBreak(c.key); text != c.text || stamp != c.stamp {
			t.Errorf("textMayBreak(%q) = %v, %v; want %v, %v", c.key, text, stamp, c.text, c.stamp)
		}
	}
}

func FuzzTextMayBreak(f *testing.F) {
	for _, k := range textShortcutKeys {
		f.Add(k)
	}
	f.Fuzz(checkTextShortcut)
}
