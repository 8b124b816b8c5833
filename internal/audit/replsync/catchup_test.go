package replsync

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/plant"
	"github.com/keyguard/keyguard/internal/redistest"
)

// TestReplicaCaughtUp: the snapshot of a replica behind its master (its
// link up, its master's last writes not applied) is taken once it has
// applied what the master had when the audit asked; one that does not
// catch up in time is audited all the same, and the report says how far
// behind it was.
func TestReplicaCaughtUp(t *testing.T) {
	reg := testRegistry(t)
	m, r, link := redistest.StartHeldReplica(t)
	link.Hold()
	n := plant.Clean(t, m.Client(t), 500)
	if got := r.Client(t).DBSize(context.Background()).Val(); got != 0 {
		t.Fatalf("the held replica has %d keys: the link is not held", got)
	}

	// Let go while the audit waits: every key is in the snapshot.
	time.AfterFunc(300*time.Millisecond, link.Release)
	res, err := audit(t, reg, Options{Target: target(m.Addr, false), Replicas: true})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete || res.Report.Summary.Keys != int64(n) {
		t.Fatalf("released: complete %v, %d keys of %d: the replica's snapshot was taken before it caught up", res.Complete, res.Report.Summary.Keys, n)
	}
	for _, note := range res.Report.Notes {
		if strings.Contains(note, "not applied") {
			t.Errorf("a replica that caught up is said behind: %s", note)
		}
	}
	if !strings.Contains(strings.Join(res.Report.Notes, "\n"), r.Addr+" (replica of "+m.Addr+")") {
		t.Errorf("notes do not say the snapshot came from the replica: %q", res.Report.Notes)
	}

	// Held past the wait: audited as it is, and said so, the wait told
	// while it lasts.
	link.Hold()
	more := plant.Clean(t, m.Client(t), 1000) // the 500 again, and 500 more
	var waits []string
	var mu sync.Mutex
	res, err = audit(t, reg, Options{Target: target(m.Addr, false), Replicas: true, CatchUp: 1500 * time.Millisecond, Waiting: func(why string) {
		mu.Lock()
		waits = append(waits, why)
		mu.Unlock()
	}})
	link.Release()
	if err != nil {
		t.Fatal(err)
	}
	if len(waits) != 1 || !strings.Contains(waits[0], "replica "+r.Addr+" has not applied") {
		t.Errorf("told %q while the replica was waited for", waits)
	}
	notes := strings.Join(res.Report.Notes, "\n")
	if got := res.Report.Summary.Keys; got != int64(n) || !strings.Contains(notes, "replica "+r.Addr+" had still not applied") || !strings.Contains(notes, "drop --replicas") {
		t.Fatalf("held: %d keys (the replica held %d, its master %d), notes %q", got, n, more, res.Report.Notes)
	}
}

// TestFailedOverSaysSo: a node whose role is no longer the one it was
// planned in (its replica promoted while its snapshot was asked) is named
// as failed over, with what to do; one in its role is not.
func TestFailedOverSaysSo(t *testing.T) {
	m := redistest.Start(t, "repl-diskless-sync-delay 0")
	r := redistest.Start(t, "replicaof 127.0.0.1 "+strings.TrimPrefix(m.Addr, "127.0.0.1:"))
	r.WaitInfo(t, "replication", func(in string) bool { return strings.Contains(in, "master_link_status:up") })
	f := New(Options{Target: target(m.Addr, false), Replicas: true})
	ctx := context.Background()
	rep := node{addr: r.Addr, role: "replica", of: m.Addr}
	if why := f.failedOver(ctx, rep); why != "" {
		t.Fatalf("a replica still a replica: %q", why)
	}
	if why := f.failedOver(ctx, node{addr: m.Addr, role: "master"}); why != "" {
		t.Fatalf("a master still a master: %q", why)
	}
	if err := r.Client(t).Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	why := f.failedOver(ctx, rep)
	if !strings.Contains(why, r.Addr+" changed from replica to master") || !strings.Contains(why, "run again once the failover is done") {
		t.Fatalf("promoted replica: %q", why)
	}
}

// TestSnapshotClusterMasterDown: a master down at the start (unreachable
// while the Cluster still lists it, then marked failed) leaves its slots
// out of a partial report of the other masters' snapshots, saying why,
// rather than no report at all.
func TestSnapshotClusterMasterDown(t *testing.T) {
	reg := testRegistry(t)
	c := redistest.StartCluster(t, 3, "repl-diskless-sync-delay 0", "cluster-node-timeout 60000")
	ctx := context.Background()
	plant.Clean(t, c.Client(t), 900)
	var up int64
	for _, s := range c.Nodes[:2] {
		up += s.Client(t).DBSize(ctx).Val()
	}
	down := c.Nodes[2]
	down.Stop()
	tg := target(c.Addrs[0], true, c.Addrs[1:]...)
	tg.Conn.DB = 0
	check := func(why string) {
		t.Helper()
		res, err := audit(t, reg, Options{Target: tg})
		if err != nil {
			t.Fatalf("%s: %v", why, err)
		}
		cov := res.Report.Coverage
		if res.Complete || res.Report.Complete || res.Report.Summary.Keys != up || cov == nil || cov.Cluster == nil {
			t.Fatalf("%s: complete %v, %d keys of the %d the masters up hold, coverage %+v", why, res.Complete, res.Report.Summary.Keys, up, cov)
		}
		if cc := cov.Cluster; cc.Masters != 3 || cc.Walked != 2 || len(cov.NotCovered) != 1 {
			t.Fatalf("%s: cluster %+v, not covered %+v", why, cc, cov.NotCovered)
		}
		g := cov.NotCovered[0]
		gone := len(report.ParseSlotRanges(g.Slots))
		if g.Node != down.Addr || gone == 0 || cov.Cluster.Slots+gone != report.ClusterSlots || !strings.Contains(g.Reason, why) {
			t.Errorf("%s: gap %+v (%d slots), %d counted", why, g, gone, cov.Cluster.Slots)
		}
	}
	check("unreachable at the start")
	c.Down(t, 2)
	check("is failed")
}
