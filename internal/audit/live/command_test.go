package live

import (
	"testing"
	"time"
)

func TestAuditProgressLine(t *testing.T) {
	line := auditProgressLine(Progress{Scanned: 250000, Total: 1000000, Nodes: 3, NodesDone: 1, Elapsed: 5 * time.Second})
	if want := "audit [######..................]  25% 250,000/1,000,000 keys  50,000 keys/s  ETA 15s  nodes 1/3"; line != want {
		t.Errorf("progress line\n got %q\nwant %q", line, want)
	}
}
