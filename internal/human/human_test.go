package human

import (
	"testing"
	"time"
)

func TestFormats(t *testing.T) {
	for _, tt := range []struct{ got, want string }{
		{Bytes(0), "0 B"}, {Bytes(1023), "1023 B"}, {Bytes(1536), "1.5 KiB"}, {Bytes(-2048), "-2.0 KiB"},
		{Bytes(12_900_000), "12.3 MiB"}, {Bytes(5 << 40), "5.0 TiB"}, {Bytes(5000 << 40), "5000.0 TiB"},
		{Count(0), "0"}, {Count(999), "999"}, {Count(1000), "1,000"}, {Count(-1234567), "-1,234,567"},
		{Duration(850 * time.Millisecond), "850ms"}, {Duration(90 * time.Second), "1m30s"},
		{Duration(time.Hour), "1h"}, {Duration(36 * time.Hour), "1d12h"}, {Duration(7 * 24 * time.Hour), "7d"},
		{Duration(-90 * time.Second), "-1m30s"}, {Duration(1499 * time.Millisecond), "1s"},
		{Plural(1, "key"), "1 key"}, {Plural(0, "key"), "0 keys"}, {Plural(int64(2), "match"), "2 matches"},
		{Plural(3, "entry"), "3 entries"}, {Plural(2, "day"), "2 days"}, {Plural(2, "info"), "2 info"},
		{Plural(2, "address"), "2 addresses"}, {Approx(3*time.Hour + 20*time.Minute + 15*time.Second), "3h20m"}, {Approx(52*time.Hour + 20*time.Minute), "2d4h"}, {Approx(15*time.Minute + 20*time.Second), "15m"}, {Plural(1, "address"), "1 address"},
		{OrDash(""), "-"}, {OrDash("team"), "team"}, {OrDash(" "), " "},
		{Article("e-mail"), "an"}, {Article("key"), "a"}, {Article("SDK"), "an"}, {Article("RDB"), "an"}, {Article("TTL"), "a"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

func TestClosest(t *testing.T) {
	cmds := []string{"audit", "merge", "migrate", "scan-code"}
	for _, tt := range []struct{ word, want string }{
		{"adit", "audit"}, {"mgirate", "migrate"}, {"AUDIT", "audit"}, {"serve", "merge"}, {"status", ""}, {"scancode", "scan-code"},
	} {
		if got := Closest(tt.word, cmds, 2); got != tt.want {
			t.Errorf("Closest(%q) = %q, want %q", tt.word, got, tt.want)
		}
	}
	// Edit distance against its definition on small cases.
	for _, tt := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"", "abc", 3}, {"kitten", "sitting", 3}, {"ab", "ba", 1}, {"abc", "abc", 0}, {"flaw", "lawn", 2}} {
		if got := EditDistance(tt.a, tt.b); got != tt.d || EditDistance(tt.b, tt.a) != tt.d {
			t.Errorf("EditDistance(%q, %q) = %d, want %d (both ways)", tt.a, tt.b, got, tt.d)
		}
	}
}

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{"1048576": 1 << 20, "500KB": 500_000, "64MiB": 64 << 20, " 1GiB ": 1 << 30, "12 B": 12, "3 MB": 3_000_000, "2 GiB": 2 << 30, "10B": 10} {
		if got, err := ParseBytes(in); err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-5", "-5MB", "MiB", "1.5MiB", "lots", "99999999999GiB"} {
		if _, err := ParseBytes(in); err == nil {
			t.Errorf("ParseBytes(%q) accepted", in)
		}
	}
}
