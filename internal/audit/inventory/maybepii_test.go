package inventory

import (
	"strings"
	"testing"
)

// mayBePIIByRule is keyMayBePII as its comment states it, one condition
// at a time.
func mayBePIIByRule(key string) bool {
	if strings.IndexByte(key, '@') >= 0 {
		return true
	}
	for i := 0; i < len(key); {
		j := i
		for j < len(key) && key[j] >= '0' && key[j] <= '9' {
			j++
		}
		if j-i >= 11 || j-i >= 8 && i > 0 && key[i-1] == '+' {
			return true
		}
		i = max(j, i+1)
	}
	return false
}

func TestKeyMayBePII(t *testing.T) {
	for _, c := range []struct {
		key  string
		want bool
	}{
		{"", false}, {"user:1:base", false}, {"a@b", true}, {"@", true},
		{"tel:1381234567", false}, {"tel:13812345678", true}, {"tel:+1234567", false}, {"tel:+12345678", true},
		{"+x12345678", false}, {"+1234567a8", false}, {"1234567890" + "1", true}, {"12345+678901234", true},
		{"++12345678", true}, {"+:12345678", false}, {"x+1234567:12345678", false},
	} {
		if got := keyMayBePII(c.key); got != c.want || mayBePIIByRule(c.key) != c.want {
			t.Errorf("keyMayBePII(%q) = %v, by the rule %v, want %v", c.key, got, mayBePIIByRule(c.key), c.want)
		}
	}
}

func FuzzKeyMayBePII(f *testing.F) {
	for _, s := range []string{"tel:+8613812345678", "a@b.cn", "u:123456789012", "x+1234567:12345678"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		if got, want := keyMayBePII(key), mayBePIIByRule(key); got != want {
			t.Fatalf("keyMayBePII(%q) = %v, by the rule %v", key, got, want)
		}
	})
}
