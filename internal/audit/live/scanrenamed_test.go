package live

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/plant"
	"github.com/keyguard/keyguard/internal/redistest"
)

// TestScanRenamed: a server whose SCAN is renamed away stops the walk
// with what to do (the snapshot, or the RDB file), by the audit and by
// the other tools' walk.
func TestScanRenamed(t *testing.T) {
	reg := testRegistry(t)
	s := redistest.Start(t, `rename-command SCAN ""`)
	plant.Clean(t, s.Client(t), 20)
	ctx := context.Background()
	res, err := Run(ctx, reg, standalone(s), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Complete || len(res.Stopped) == 0 || !strings.Contains(res.Stopped[0].Reason, "the server has no SCAN (renamed or disabled with rename-command)") || !strings.Contains(res.Stopped[0].Reason, "--snapshot") {
		t.Fatalf("complete %v, stopped %+v", res.Complete, res.Stopped)
	}
	wr, err := Walk(ctx, standalone(s), WalkOptions{Visit: func(context.Context, *Batch) error { return nil }})
	if err == nil && (wr.Complete || !slices.ContainsFunc(wr.Coverage.NotCovered, func(g report.Gap) bool { return strings.Contains(g.Reason, "the server has no SCAN") })) {
		t.Fatalf("walk: complete %v, coverage %+v", wr.Complete, wr.Coverage)
	}
	if err != nil && !strings.Contains(err.Error(), "the server has no SCAN") {
		t.Fatalf("walk: %v", err)
	}
}
