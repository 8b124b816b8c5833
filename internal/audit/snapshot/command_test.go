package snapshot

import (
	"testing"
	"time"
)

func TestRDBProgressLine(t *testing.T) {
	const mb = 1 << 20
	for _, tc := range []struct {
		read, total int64
		elapsed     time.Duration
		done, files int
		want        string
	}{
		{50 * mb, 200 * mb, time.Second, 0, 1, "rdb [######..................]  25% 50/200 MB  50 MB/s  ETA 3s"},
		{200 * mb, 200 * mb, 2 * time.Second, 2, 3, "rdb [########################] 100% 200/200 MB  100 MB/s  ETA 0s  files 2/3"},
		{30 * mb, 0, 3 * time.Second, 0, 1, "rdb: 30 MB  10 MB/s"},
		{0, 100 * mb, 0, 0, 1, "rdb [........................]   0% 0/100 MB"},
	} {
		if got := rdbProgressLine(tc.read, tc.total, tc.elapsed, tc.done, tc.files, false); got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
	if got, want := rdbProgressLine(30*mb, 0, 3*time.Second, 1, 3, true), "snapshot: 30 MB  10 MB/s  nodes 1/3"; got != want {
		t.Errorf("a server's snapshots: got %q, want %q", got, want)
	}
}
