package live

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/redistest"
)

// faultKeys is the keyspace of the Cluster fault tests; -short shrinks
// it (and the rate with it, so the faults still land mid-walk).
func faultKeys() (keys int, rate float64) {
	if testing.Short() {
		return 60_000, 25_000
	}
	return 240_000, 100_000
}

// clusterKeys is the keys the masters hold.
func clusterKeys(t *testing.T, c *redistest.Cluster) int64 {
	t.Helper()
	var n int64
	for _, s := range c.Nodes {
		k, err := s.Client(t).DBSize(context.Background()).Result()
		if err != nil {
			t.Fatal(err)
		}
		n += k
	}
	return n
}

// checkHonest: the report is complete with exactly the keys the Cluster
// holds, or incomplete, naming the slots it did not count, and counting
// exactly the keys of the others. Never complete with a wrong count.
func checkHonest(t *testing.T, c *redistest.Cluster, res *Result) {
	t.Helper()
	total := clusterKeys(t, c)
	rep := res.Report
	cov := rep.Coverage
	if cov == nil || cov.Cluster == nil {
		t.Fatalf("no Cluster coverage: %+v", cov)
	}
	if rep.Complete {
		if rep.Summary.Keys != total || cov.Cluster.Slots != report.ClusterSlots || cov.Share != 1 || len(cov.NotCovered) != 0 || !res.Complete {
			t.Errorf("complete, yet %d keys of %d, %d slots, share %v, not covered %+v", rep.Summary.Keys, total, cov.Cluster.Slots, cov.Share, cov.NotCovered)
		}
		return
	}
	var missing int64
	for _, g := range cov.NotCovered {
		if !report.ValidSlotRanges(g.Slots) {
			t.Errorf("a part not covered names no slots: %+v", g)
			continue
		}
		for _, m := range c.Nodes {
			// one pipeline per master: thousands of slots not covered
			// took a round trip each
			p := m.Client(t).Pipeline()
			var counts []*redis.IntCmd
			for _, s := range report.ParseSlotRanges(g.Slots) {
				counts = append(counts, p.ClusterCountKeysInSlot(context.Background(), s))
			}
			if _, err := p.Exec(context.Background()); err != nil {
				t.Fatal(err)
			}
			for _, k := range counts {
				missing += k.Val()
			}
		}
	}
	if rep.Summary.Keys != total-missing || len(res.Stopped) == 0 {
		t.Errorf("incomplete: %d keys counted; want %d of the Cluster's %d less %d in the slots not covered (%+v)", rep.Summary.Keys, total-missing, total, missing, cov.NotCovered)
	}
	t.Logf("incomplete (honestly): %+v", cov.NotCovered)
}

// runDuring audits the Cluster and runs fault once a quarter of its keys
// were listed.
func runDuring(t *testing.T, c *redistest.Cluster, n int, rate float64, fault func()) *Result {
	t.Helper()
	return runDuringWith(t, c, n, Options{Rate: rate}, fault)
}

// runDuringWith is runDuring with the audit's options.
func runDuringWith(t *testing.T, c *redistest.Cluster, n int, opts Options, fault func()) *Result {
	t.Helper()
	reg := testRegistry(t)
	progress, reached := progressAt(int64(n) / 4)
	opts.Progress, opts.ProgressEvery = progress, 10*time.Millisecond
	type outcome struct {
		res *Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := Run(context.Background(), reg, clusterTarget(c), opts)
		done <- outcome{res, err}
	}()
	select {
	case <-reached:
	case o := <-done:
		t.Fatalf("the audit ended before the fault: %+v %v", o.res, o.err)
	}
	fault()
	var o outcome
	select {
	case o = <-done:
	default:
		t.Log("the fault ended while the audit ran")
		o = <-done
	}
	if o.err != nil {
		t.Fatal(o.err)
	}
	return o.res
}

// A replica promoted (CLUSTER FAILOVER) while the audit walks its
// master: the slots the old master no longer serves are walked again on
// the new one, and the report counts every key once.
func TestClusterFailoverDuringAudit(t *testing.T) {
	c := redistest.StartClusterWithReplicas(t, 3, 1)
	n, rate := faultKeys()
	loadScale(t, c.Client(t), n)
	res := runDuring(t, c, n, rate, func() { c.Failover(t, 0) })
	checkHonest(t, c, res)
	if !hasNote(res.Report, "walked again") {
		t.Errorf("the failover did not reach the walk (no slot walked again): %q", res.Report.Notes)
	}
	if hasNote(res.Report, "slots migrating during the audit") {
		t.Errorf("a failover reported as a migration: %q", res.Report.Notes)
	}
}

// --replicas: a replica first met in a later round of the walk (the
// replica of its master walked first went down mid-walk) is asked who it
// is before it is walked. One whose listed address leads to another node
// (it announces another replica's port) is passed over: the master's
// slots still to count are reported not covered, not counted on the node
// that answers there (which holds none of their keys: the report said
// complete with a third of the keys missing).
func TestClusterReplicaMetMidWalk(t *testing.T) {
	ctx := context.Background()
	c := redistest.StartClusterWithReplicas(t, 3, 2, "shutdown-timeout 0")
	n, rate := faultKeys()
	loadScale(t, c.Client(t), n)
	// The first master's replicas: the audit probes them in the order
	// the first seed lists them and walks the first that answers; the
	// other is met only once that one is down.
	first, later := c.Replicas[0], c.Replicas[1]
	nodes := c.Nodes[0].Client(t).ClusterNodes(ctx).Val()
	if strings.Index(nodes, later.Addr+"@") < strings.Index(nodes, first.Addr+"@") {
		first, later = later, first
	}
	other := c.Replicas[2] // a replica of the second master
	if err := later.Client(t).ConfigSet(ctx, "cluster-announce-port", strconv.Itoa(other.Port)).Err(); err != nil {
		t.Fatal(err)
	}
	listed := " " + other.Addr + "@"
	deadline := time.Now().Add(30 * time.Second)
	for _, node := range c.Nodes {
		// listed twice (other and later), every link connected
		for text := ""; strings.Count(text, listed) < 2 || strings.Contains(text, "disconnected"); text = node.Client(t).ClusterNodes(ctx).Val() {
			if time.Now().After(deadline) {
				t.Fatalf("%s does not list %s twice:\n%s", node.Addr, other.Addr, node.Client(t).ClusterNodes(ctx).Val())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	res := runDuringWith(t, c, n, Options{Rate: rate, Replicas: true, RetryFor: 3 * time.Second}, first.Kill)
	checkHonest(t, c, res)
	if res.Report.Complete {
		t.Fatalf("complete with %d keys; the first master's replica left answers as another node", res.Report.Summary.Keys)
	}
	found := false
	for _, s := range res.Stopped {
		found = found || strings.Contains(s.Reason, "no replica of master "+c.Addrs[0]+" could be read") && strings.Contains(s.Reason, other.Addr+": it answers as node")
	}
	if !found {
		t.Errorf("no stop says the replica at %s answers as another node: %+v", other.Addr, res.Stopped)
	}
}

// 3000 slots moved between masters while the audit walks: a slot is
// counted on the node that serves it whole, once.
func TestClusterSlotMigrationDuringAudit(t *testing.T) {
	c := redistest.StartClusterWithReplicas(t, 3, 1)
	n, rate := faultKeys()
	loadScale(t, c.Client(t), n)
	// The second half of the first master's slots: its walker reaches
	// them while they move.
	var slots []int
	for s := 2000; s < 5000; s++ {
		slots = append(slots, s)
	}
	moved := 0
	res := runDuring(t, c, n, rate, func() { moved = c.MoveSlots(t, 0, 1, slots) })
	if moved == 0 {
		t.Fatal("no key moved")
	}
	checkHonest(t, c, res)
	if !hasNote(res.Report, "walked again") {
		t.Errorf("the migration did not reach the walk (no slot walked again): %q", res.Report.Notes)
	}
}

// A master restarted (from its RDB) while the audit walks it, and again
// between an interrupted audit and its --resume: slots are counted whole,
// each in one life of the server, and the resumed report counts every
// key of the Cluster once.
func TestClusterRestartDuringAuditAndResume(t *testing.T) {
	c := redistest.StartClusterWithReplicas(t, 3, 1)
	n, rate := faultKeys()
	loadScale(t, c.Client(t), n)
	ctx := context.Background()
	for _, s := range c.Nodes {
		if err := s.Client(t).Save(ctx).Err(); err != nil {
			t.Fatal(err)
		}
	}
	res := runDuring(t, c, n, rate, func() { c.Nodes[0].Restart(t) })
	checkHonest(t, c, res)
	if !hasNote(res.Report, "restarted during the audit") {
		t.Errorf("no note of the restart: %q", res.Report.Notes)
	}

	// Interrupted, a master restarted, resumed.
	reg := testRegistry(t)
	cctx, cancel := context.WithCancel(ctx)
	progress, reached := progressAt(int64(n) / 3)
	go func() {
		<-reached
		cancel()
	}()
	first, err := Run(cctx, reg, clusterTarget(c), Options{Rate: rate, Progress: progress, ProgressEvery: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if first.Complete || len(first.Stopped) == 0 {
		t.Fatalf("the first run was not interrupted: %+v", first.Stopped)
	}
	for _, s := range first.Stopped {
		if !report.ValidSlotRanges(s.Slots) || s.Reason != "interrupted" {
			t.Errorf("stop %+v; want the slots left, interrupted", s)
		}
	}
	c.Nodes[1].Restart(t)
	second, err := Run(ctx, reg, clusterTarget(c), Options{Resume: viaJSON(t, first.Report)})
	if err != nil {
		t.Fatal(err)
	}
	checkHonest(t, c, second)
	if !second.Complete || second.Report.Summary.Keys != clusterKeys(t, c) {
		t.Errorf("resumed: complete %v, %d keys of %d", second.Complete, second.Report.Summary.Keys, clusterKeys(t, c))
	}
	if cl := second.Report.Coverage.Cluster; cl == nil || cl.Slots != report.ClusterSlots {
		t.Errorf("resumed coverage %+v", second.Report.Coverage)
	}
}

// A Cluster down (a master failed, the others refusing every key with
// CLUSTERDOWN): the audit says so, counts nothing it did not read, and
// waits between its rounds of asking again rather than asking at once
// in a loop (which read the slot map some 130 times a second and then
// said that millions of slots "were walked again").
func TestClusterDownAudit(t *testing.T) {
	reg := testRegistry(t)
	c := redistest.StartCluster(t, 3)
	ctx := context.Background()
	cc := c.Client(t)
	for i := range 300 {
		cc.Set(ctx, "order:misc:"+strconv.Itoa(i), "x", time.Hour)
	}
	c.Nodes[2].Stop()
	c.Down(t, 2)
	up := c.Nodes[0].Client(t)
	calls := func() int {
		t.Helper()
		in, err := up.Info(ctx, "commandstats").Result()
		if err != nil {
			t.Fatal(err)
		}
		v := InfoField(in, "cmdstat_cluster|nodes")
		n, _ := strconv.Atoi(strings.TrimPrefix(strings.Split(v, ",")[0], "calls="))
		return n
	}
	before := calls()
	tg := Target{Conn: Conn{Addr: c.Addrs[0]}, Cluster: true, Seeds: c.Addrs[1:2], Display: "redis://" + c.Addrs[0]}
	started := time.Now()
	res, err := Run(ctx, reg, tg, Options{RetryFor: 2 * time.Second, IOTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(started)
	if res.Complete || res.Report.Summary.Keys != 0 || len(res.Report.Coverage.NotCovered) == 0 {
		t.Fatalf("complete %v, %d keys, not covered %+v", res.Complete, res.Report.Summary.Keys, res.Report.Coverage.NotCovered)
	}
	if hasNote(res.Report, "walked again") {
		t.Errorf("slots no walk counted are said walked again: %q", res.Report.Notes)
	}
	// The command's message says what still works.
	msg := (&incompleteError{stops: res.Stopped, gaps: res.Report.Coverage, out: "a.json", json: true}).Error()
	if !strings.Contains(msg, "CLUSTERDOWN The cluster is down") || !strings.Contains(msg, "--snapshot reads the keys of the masters up") {
		t.Errorf("message %q", msg)
	}
	for _, n := range res.Report.Notes {
		if !strings.HasPrefix(n, "hot-key data unavailable on ") {
			continue
		}
		for _, a := range c.Addrs {
			if strings.Count(n, a+" (") > 1 {
				t.Errorf("%s named twice: %s", a, n)
			}
		}
	}
	// A round every 200 ms at most (each reads the slot map a few times):
	// a few dozen reads over the run, not hundreds (760 in 2 s when the
	// walk asked again at once).
	if n, most := calls()-before, 5*int(took/(200*time.Millisecond))+20; n > most {
		t.Errorf("audit: CLUSTER NODES sent %d times to one node in %s (at most %d): the run asks again without waiting", n, took.Round(time.Millisecond), most)
	}

	// The walk of the other tools (hotkeys, investigate, migrate).
	before, started = calls(), time.Now()
	var listed atomic.Int64
	wr, err := Walk(ctx, tg, WalkOptions{RetryFor: 2 * time.Second, IOTimeout: time.Second,
		Visit: func(ctx context.Context, b *Batch) error {
			// What hotkeys sends for each key (OBJECT FREQ): a key
			// command, which the Cluster refuses with CLUSTERDOWN.
			if len(b.Keys) > 0 {
				if _, err := b.Conn.Simple(ctx, "TYPE", b.Keys[0]); err != nil {
					return err
				}
			}
			listed.Add(int64(len(b.Keys)))
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	took = time.Since(started)
	if wr.Complete || slices.ContainsFunc(wr.Notes, func(s string) bool { return strings.Contains(s, "walked again") }) {
		t.Errorf("walk: complete %v, %d keys listed, notes %q", wr.Complete, listed.Load(), wr.Notes)
	}
	if n, most := calls()-before, 5*int(took/(200*time.Millisecond))+20; n > most {
		t.Errorf("walk: CLUSTER NODES sent %d times to one node in %s (at most %d): the walk asks again without waiting", n, took.Round(time.Millisecond), most)
	}
}
