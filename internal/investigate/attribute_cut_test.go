package investigate

import (
	"strings"
	"testing"

	"github.com/keyguard/keyguard/internal/monitor"
)

// A MONITOR line cut short (the reader keeps its first megabyte of a
// multi-megabyte SET) still attributes the write to its key and client:
// the arguments before the cut name the key. A stand-in argument never
// becomes a key.
func TestAttributeCutLine(t *testing.T) {
	att := NewAttributor(-1, func(k string) bool { return strings.HasPrefix(k, "load:") || k == "" })
	for _, line := range []string{
		`1700000000.000001 [0 10.0.0.5:5001] "SET" "load:blob" "` + strings.Repeat("v", 4096), // cut inside the value
		`1700000000.000002 [0 10.0.0.6:5002] "SET" "load:other"`,                              // cut right after the key
		`1700000000.000003 [0 10.0.0.7:5003] "RENAME" "load:from"`,                            // the second key was cut off
	} {
		l, err := monitor.ParseCut(line)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		att.Feed(&l)
	}
	att.Flush()
	got := map[string]string{}
	for _, x := range att.Accesses() {
		if x.Key == "" {
			t.Errorf("a stand-in argument became a key: %+v", x)
		}
		got[x.Key] = x.Source
		if x.Writes != 1 {
			t.Errorf("%s: %d writes, want 1", x.Key, x.Writes)
		}
	}
	want := map[string]string{"load:blob": "10.0.0.5:5001", "load:other": "10.0.0.6:5002", "load:from": "10.0.0.7:5003"}
	for k, src := range want {
		if got[k] != src {
			t.Errorf("%s attributed to %q, want %q (all: %v)", k, got[k], src, got)
		}
	}
	if att.Matched != 3 {
		t.Errorf("%d lines matched, want 3", att.Matched)
	}
}
