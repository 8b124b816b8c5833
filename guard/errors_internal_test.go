package guard

import (
	"encoding/hex"
	"testing"
)

func TestParseOwner(t *testing.T) {
	cases := []struct{ in, want string }{
		{"owner=order-service:order", "order-service:order"},
		{"owner_hex=610d0a62", "a\r\nb"},
		{"owner_hex=6162 truncated", "ab…(truncated)"},
		{"owner_hex=zz", "owner_hex=zz"}, // not hex: keep the raw text
		{"something else", "something else"},
	}
	for _, c := range cases {
		if got := parseOwner(c.in); got != c.want {
			t.Errorf("parseOwner(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// The error reply of the script is text from the server: any bytes must
// parse without panicking, and a hex-encoded owner must round-trip.
func FuzzParseOwner(f *testing.F) {
	f.Add("owner=a")
	f.Add("owner_hex=00ff truncated")
	f.Add("owner_hex=0")
	f.Fuzz(func(t *testing.T, s string) {
		_ = parseOwner(s)
		if got := parseOwner("owner_hex=" + hex.EncodeToString([]byte(s))); got != s {
			t.Fatalf("round trip of %q gave %q", s, got)
		}
	})
}
