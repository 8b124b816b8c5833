package migrate

import (
	"testing"
	"time"
)

func TestProgressLine(t *testing.T) {
	got := progressLine(Progress{Op: "cleanup", From: "a:{id}", Done: 0.5, Elapsed: 2 * time.Second,
		Counts: Counts{Scanned: 3000, Keys: 2000, Removed: 1500}, RunKeys: 2000})
	want := "cleanup a:{id} [############............]  50%  3,000 scanned, 2,000 keys, 1,500 done  1,000 keys/s"
	if got != want {
		t.Errorf("progress line\n got %q\nwant %q", got, want)
	}
	// Resumed: the counts hold the earlier run's 1,500 keys, the speed
	// only this run's 500 over its 2 s.
	got = progressLine(Progress{Op: "copy", From: "a:{id}", Done: 0.5, Elapsed: 2 * time.Second,
		Counts: Counts{Scanned: 3000, Keys: 2000, Copied: 2000}, RunKeys: 500})
	want = "copy a:{id} [############............]  50%  3,000 scanned, 2,000 keys, 2,000 done  250 keys/s"
	if got != want {
		t.Errorf("resumed progress line\n got %q\nwant %q", got, want)
	}
}
