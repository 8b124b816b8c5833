package live

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/keyguard/keyguard/internal/plant"
	"github.com/keyguard/keyguard/internal/redistest"
)

// TestReplicaCaughtUpBeforeWalk: with --replicas, a replica behind its
// master (its link up, the master's last writes not applied) is walked
// once it has applied what the master had when the run began, by the
// audit and by the other tools' walk; one that does not catch up in time
// is walked as it is, and the report says by how much it was behind.
func TestReplicaCaughtUpBeforeWalk(t *testing.T) {
	reg := testRegistry(t)
	m, r, link := redistest.StartHeldReplica(t)
	ctx := context.Background()
	link.Hold()
	n := plant.Clean(t, m.Client(t), 500)
	if got := r.Client(t).DBSize(ctx).Val(); got != 0 {
		t.Fatalf("the held replica has %d keys: the link is not held", got)
	}

	// Let go while the audit waits: every key is walked.
	time.AfterFunc(300*time.Millisecond, link.Release)
	res, err := Run(ctx, reg, standalone(m), Options{Replicas: true})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete || res.Report.Summary.Keys != int64(n) || !hasNote(res.Report, "walked replica "+r.Addr) {
		t.Fatalf("released: complete %v, %d keys of %d, notes %q: the replica was walked before it caught up", res.Complete, res.Report.Summary.Keys, n, res.Report.Notes)
	}
	if hasNote(res.Report, "not applied") {
		t.Errorf("a replica that caught up is said behind: %q", res.Report.Notes)
	}

	// The walk of the other tools (investigate, migrate, hotkeys) waits too.
	link.Hold()
	more := plant.Clean(t, m.Client(t), 800) // the 500 again, and 300 more
	time.AfterFunc(300*time.Millisecond, link.Release)
	var listed atomic.Int64
	wr, err := Walk(ctx, standalone(m), WalkOptions{Replicas: true,
		Visit: func(_ context.Context, b *Batch) error { listed.Add(int64(len(b.Keys))); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if listed.Load() != int64(more) || !wr.Complete {
		t.Fatalf("walk: %d keys of %d, complete %v, notes %q", listed.Load(), more, wr.Complete, wr.Notes)
	}

	// Held past the wait: walked as it is, and said so, the wait told
	// while it lasts.
	link.Hold()
	most := plant.Clean(t, m.Client(t), 1200)
	var waits []string
	var mu sync.Mutex
	res, err = Run(ctx, reg, standalone(m), Options{Replicas: true, CatchUp: 1500 * time.Millisecond, Waiting: func(why string) {
		mu.Lock()
		waits = append(waits, why)
		mu.Unlock()
	}})
	link.Release()
	if err != nil {
		t.Fatal(err)
	}
	if len(waits) != 1 || !strings.Contains(waits[0], "waiting for replica "+r.Addr+" to apply") {
		t.Errorf("told %q while the replica was waited for", waits)
	}
	behind := "replica " + r.Addr + " had still not applied"
	if got := res.Report.Summary.Keys; got != int64(more) || !hasNote(res.Report, behind) || !hasNote(res.Report, "drop --replicas") {
		t.Fatalf("held: %d keys (the replica held %d, its master %d), notes %q", got, more, most, res.Report.Notes)
	}
	if !slices.ContainsFunc(res.Report.Notes, func(s string) bool { return strings.Contains(s, behind) && strings.Contains(s, "its master "+m.Addr) }) {
		t.Errorf("the note does not name the master: %q", res.Report.Notes)
	}
}
