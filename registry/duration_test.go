package registry

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want time.Duration
	}{
		{"7d", 7 * day},
		{"1d12h", 36 * time.Hour},
		{"1.5d", 36 * time.Hour},
		{"2d3h4m5s", 51*time.Hour + 4*time.Minute + 5*time.Second},
		{"90s", 90 * time.Second},
		{"1h30m", 90 * time.Minute},
		{"250ms", 250 * time.Millisecond},
		{"0", 0},
		{"-1d", -day},
		{" 24h ", 24 * time.Hour},
	} {
		got, err := ParseDuration(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "d", "7", "3x", "1h1d", "d1h", "1d-1h", "1e3d", "infd", "0x10d", "1d1d", "106752d", "1_0d"} {
		if got, err := ParseDuration(bad); err == nil {
			t.Errorf("ParseDuration(%q) = %v, want an error", bad, got)
		}
	}
	for _, d := range []time.Duration{0, time.Second, 90 * time.Minute, day, 36 * time.Hour, 7 * day, 8*day + 5*time.Second} {
		if got, err := ParseDuration(FormatDuration(d)); err != nil || got != d {
			t.Errorf("ParseDuration(FormatDuration(%v) = %q) = %v, %v", d, FormatDuration(d), got, err)
		}
	}
	if got := FormatDuration(7 * day); got != "7d" {
		t.Errorf("FormatDuration(168h) = %q, want 7d", got)
	}
}

// FuzzParseDuration holds ParseDuration to time.ParseDuration where Go's
// form applies, and to FormatDuration's output.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"7d", "1d12h", "1.5d", "90s", "-1d", "1h1d", "0", "1d-1h", "9223372036854775807ns"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseDuration(s)
		if !strings.Contains(s, "d") {
			want, werr := time.ParseDuration(strings.TrimSpace(s))
			if (err == nil) != (werr == nil) || (err == nil && got != want) {
				t.Fatalf("ParseDuration(%q) = %v, %v; time.ParseDuration: %v, %v", s, got, err, want, werr)
			}
		}
		if err == nil && got >= 0 && got%time.Second == 0 {
			back, err := ParseDuration(FormatDuration(got))
			if err != nil || back != got {
				t.Fatalf("%q: %v formats as %q, which reads as %v, %v", s, got, FormatDuration(got), back, err)
			}
		}
	})
}

// TestTTLDays: the registry's durations take days as the command line's
// flags do, and a value that is no duration is reported where it is.
func TestTTLDays(t *testing.T) {
	r, err := Parse("k.yaml", []byte(`version: 1
domains: {order: {owner: order-team}}
keys:
  - key: "order:archive:{id:int}"
    ttl: 7d
    ttl_jitter: 0.5d
    hot: {replicas: 2, local_ttl: 1d}
  - key: "order:seconds:{id:int}"
    ttl: 600
`))
	if err != nil {
		t.Fatal(err)
	}
	e := r.Entries[0]
	if e.TTL != 168*time.Hour || e.TTLJitter != 12*time.Hour || e.Hot.LocalTTL != 24*time.Hour {
		t.Errorf("ttl %v, jitter %v, local_ttl %v; want 168h, 12h, 24h", e.TTL, e.TTLJitter, e.Hot.LocalTTL)
	}
	if got := r.Entries[1].TTL; got != 10*time.Minute {
		t.Errorf("ttl: 600 = %v, want 10m", got)
	}

	for _, tt := range []struct{ yaml, want string }{
		{"version: 1\nkeys:\n  - key: \"a:b\"\n    ttl: 7x\n", "k.yaml:4:10: ttl: \"7x\" is not a duration"},
		{"version: 1\nkeys:\n  - {key: \"a:b\", ttl: 1d-1h}\n", "k.yaml:3:23: ttl: \"1d-1h\" is not a duration"},
		{"version: 1\nkeys:\n  - key: \"a:b\"\n    ttl: -7d\n", "k.yaml:4:10: ttl: \"-7d\" is not a duration"},
		{"version: 1\nkeys:\n  - key: \"a:b\"\n    ttl: 1d\n    ttl_jitter: 99999999999999999\n", "k.yaml:5:17: ttl_jitter: \"99999999999999999\" is not a duration"},
	} {
		_, err := Parse("k.yaml", []byte(tt.yaml))
		var pe *ParseError
		if !errors.As(err, &pe) || !strings.HasPrefix(pe.Error(), tt.want) || !strings.Contains(pe.Hint, "7d") {
			t.Errorf("%q: error %v, want %s… with a hint that names 7d", tt.yaml, err, tt.want)
		}
	}
}
