package replsync

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/audit/live"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/audit/snapshot"
	"github.com/keyguard/keyguard/internal/plant"
	"github.com/keyguard/keyguard/internal/redistest"
	"github.com/keyguard/keyguard/internal/resp"
	"github.com/keyguard/keyguard/registry"
)

func testRegistry(t testing.TB) *registry.Registry {
	t.Helper()
	reg, err := registry.Load("../live/testdata/keyguard.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func target(addr string, cluster bool, seeds ...string) live.Target {
	return live.Target{Conn: live.Conn{Addr: addr, DB: live.AllDBs}, Cluster: cluster, Seeds: seeds, Display: "redis://" + addr}
}

// audit runs the snapshot audit of opts.Target as keyguard audit
// --snapshot does.
func audit(t *testing.T, reg *registry.Registry, opts Options) (*snapshot.Result, error) {
	t.Helper()
	return Run(context.Background(), reg, opts, snapshot.Options{DB: -1})
}

// visible is what a walk and a snapshot of the same keys agree on: the
// counts, the groups with their types and findings, every finding with
// its key and database. Bytes are compared apart (within 1%).
func visible(r *report.Report) string {
	var b strings.Builder
	s := r.Summary
	fmt.Fprintf(&b, "keys %d no_ttl %d unregistered %d findings %d %v %v\n", s.Keys, s.NoTTL, s.Unregistered, s.Findings, s.BySeverity, s.ByRuleSeverity)
	var lines []string
	for _, g := range r.Groups {
		db := -1
		if g.DB != nil {
			db = *g.DB
		}
		lines = append(lines, fmt.Sprintf("db %d %s %s %s keys %d no_ttl %d with_ttl %d types %v findings %d", db, g.Kind, g.Name, g.Owner, g.Keys, g.NoTTL, g.WithTTL, g.Types, g.Findings))
	}
	for _, f := range r.Findings {
		db := -1
		if f.DB != nil {
			db = *f.DB
		}
		lines = append(lines, fmt.Sprintf("finding db %d %s %s %q", db, f.Rule, f.Severity, f.Key))
	}
	slices.Sort(lines)
	b.WriteString(strings.Join(lines, "\n"))
	return b.String()
}

// sameBytes checks every group's memory within 1% of the walk's, but for
// streams (event:order), which the snapshot sizes as a server holds them
// once loaded: the server that wrote them keeps up to 4 KiB more per
// stream, its last node preallocated, and the report says so.
func sameBytes(t *testing.T, walk, snap *report.Report) {
	t.Helper()
	if !slices.ContainsFunc(snap.Notes, func(n string) bool {
		return strings.Contains(n, "streams are sized as a server holds them once it has loaded the snapshot")
	}) {
		t.Errorf("no note on the streams' size: %q", snap.Notes)
	}
	type gk struct {
		db         int
		kind, name string
	}
	at := func(g report.Group) gk {
		k := gk{-1, g.Kind, g.Name}
		if g.DB != nil {
			k.db = *g.DB
		}
		return k
	}
	byName := map[gk]int64{}
	for _, g := range walk.Groups {
		byName[at(g)] = g.Bytes
	}
	for _, g := range snap.Groups {
		if g.Name == "event:order:{shard:int}" {
			continue
		}
		w := byName[at(g)]
		if d := g.Bytes - w; d*100 > w || -d*100 > w {
			t.Errorf("group %s: %d bytes from the snapshot, %d from MEMORY USAGE: more than 1%% apart", g.Name, g.Bytes, w)
		}
	}
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d:\n walk     %s\n snapshot %s", i+1, al[i], bl[i])
		}
	}
	return fmt.Sprintf("lengths %d and %d", len(al), len(bl))
}

// A server with keys in three databases, anomalies among them: the audit
// of the snapshot it sends equals the walk's (keys, groups, findings,
// databases; memory within 1%), whether the server sends it diskless or
// writes it to its disk first, and its coverage counts every key of
// every database.
func TestSnapshotEqualsWalk(t *testing.T) {
	reg := testRegistry(t)
	s := redistest.Start(t, "repl-diskless-sync-delay 0")
	ctx := context.Background()
	per := []int{1500, 400, 60}
	if testing.Short() {
		per = []int{600, 200, 30}
	}
	want, total := plant.Databases(t, s.URL(), per)
	walk, err := live.Run(ctx, reg, target(s.Addr, false), live.Options{Seed: 1})
	if err != nil || !walk.Complete || walk.Report.Summary.Keys != total {
		t.Fatalf("walk: %v, %+v", err, walk)
	}
	for _, diskless := range []string{"yes", "no"} {
		t.Run("diskless="+diskless, func(t *testing.T) {
			if err := s.Client(t).ConfigSet(ctx, "repl-diskless-sync", diskless).Err(); err != nil {
				t.Fatal(err)
			}
			res, err := audit(t, reg, Options{Target: target(s.Addr, false)})
			if err != nil {
				t.Fatal(err)
			}
			rep := res.Report
			if !res.Complete || !rep.Complete || rep.Summary.Keys != total {
				t.Fatalf("complete %v keys %d; want %d (%+v)", res.Complete, rep.Summary.Keys, total, res.Stopped)
			}
			if got, want := visible(rep), visible(walk.Report); got != want {
				t.Errorf("the snapshot's report differs from the walk's\n%s", firstDiff(want, got))
			}
			sameBytes(t, walk.Report, rep)
			if !slices.Equal(rep.Databases, []int{0, 1, 2}) || rep.Source.Kind != "redis" || rep.Source.Target != "redis://"+s.Addr {
				t.Errorf("databases %v source %+v", rep.Databases, rep.Source)
			}
			cov := rep.Coverage
			if cov == nil || len(cov.Nodes) != 1 || cov.Share != 1 || cov.Nodes[0].Role != "snapshot" || cov.Nodes[0].Addr != s.Addr {
				t.Fatalf("coverage %+v", cov)
			}
			for _, d := range cov.Nodes[0].DBs {
				if d.Counted != want[d.DB] || !d.Complete {
					t.Errorf("db %d: %+v; want %d counted", d.DB, d, want[d.DB])
				}
			}
			how := "written to its disk first"
			if diskless == "yes" {
				how = "diskless"
			}
			if len(rep.Notes) == 0 || !strings.Contains(rep.Notes[0], "no command per key") || !strings.Contains(rep.Notes[0], s.Addr+" (master) "+how) {
				t.Errorf("notes %q; want the first to say how the snapshot came (%s)", rep.Notes, how)
			}
		})
	}
}

// The link to the server breaks while the snapshot arrives: the report
// covers the keys before the break, says it is incomplete and where the
// node stopped.
func TestSnapshotLinkLost(t *testing.T) {
	reg := testRegistry(t)
	s := redistest.Start(t, "repl-diskless-sync-delay 0")
	n := plant.Clean(t, s.Client(t), 3000)
	var cut atomic.Int64
	cut.Store(40 << 10) // bytes the proxy lets through, handshake included
	tg := target(s.Addr, false)
	tg.Conn.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &cutConn{Conn: c, left: &cut}, nil
	}
	res, err := audit(t, reg, Options{Target: tg})
	if err != nil {
		t.Fatal(err)
	}
	rep := res.Report
	if res.Complete || rep.Complete || len(res.Stopped) != 1 || res.Stopped[0].Node != s.Addr {
		t.Fatalf("complete %v stopped %+v; want the node stopped", res.Complete, res.Stopped)
	}
	if rep.Summary.Keys == 0 || rep.Summary.Keys >= int64(n) {
		t.Errorf("%d keys of %d counted; want some, not all", rep.Summary.Keys, n)
	}
	// The share is the keys counted, not the bytes read of a snapshot
	// whose length was not known.
	if cov := rep.Coverage; len(cov.NotCovered) != 1 || cov.Share > float64(rep.Summary.Keys)/float64(n)+0.01 {
		t.Errorf("coverage %+v; want the node not covered, %d of %d keys", cov, rep.Summary.Keys, n)
	}
}

// cutConn is a connection whose reads fail once left bytes were read
// (shared by every connection of a run: the snapshot's is the last).
type cutConn struct {
	net.Conn
	left *atomic.Int64
}

func (c *cutConn) Read(p []byte) (int, error) {
	l := c.left.Load()
	if l <= 0 {
		c.Conn.Close()
		return 0, errors.New("link cut by the test")
	}
	n, err := c.Conn.Read(p[:min(int64(len(p)), l)])
	c.left.Add(-int64(n))
	return n, err
}

// A user without SYNC gets an error that names what to grant and the
// audit that needs none of it; the user docs/audit-acl.md gives works.
func TestSnapshotRefused(t *testing.T) {
	reg := testRegistry(t)
	s := redistest.Start(t)
	ctx := context.Background()
	if err := s.Client(t).Do(ctx, "ACL", "SETUSER", "reader", "on", ">pw", "~*", "+@read", "+info", "+replconf", "+client").Err(); err != nil {
		t.Fatal(err)
	}
	tg := target(s.Addr, false)
	tg.Conn.Username, tg.Conn.Password = "reader", "pw"
	_, err := audit(t, reg, Options{Target: tg})
	if err == nil || !strings.Contains(err.Error(), "+replconf +sync") || !strings.Contains(err.Error(), "without --snapshot") {
		t.Fatalf("err %v; want what to grant", err)
	}
	// What docs/audit-acl.md grants a snapshot user is enough, no key
	// pattern needed.
	if err := s.Client(t).Do(ctx, "ACL", "SETUSER", "keyguard-snapshot", "on", ">pw", "+info", "+replconf", "+sync", "+cluster|nodes").Err(); err != nil {
		t.Fatal(err)
	}
	tg.Conn.Username = "keyguard-snapshot"
	if res, err := audit(t, reg, Options{Target: tg}); err != nil || !res.Complete {
		t.Errorf("the documented snapshot user: %v %+v", err, res)
	}
	_, err = audit(t, reg, Options{Target: target(s.Addr, false), Replicas: true})
	if err == nil || !strings.Contains(err.Error(), "no online replica") {
		t.Fatalf("--replicas without a replica: %v", err)
	}
}

// A server that cannot make the snapshot (here: its dir is gone, and it
// writes the snapshot file first) closes the link: the error says where
// to look and what else to run.
func TestSnapshotServerCannotSave(t *testing.T) {
	reg := testRegistry(t)
	s := redistest.Start(t, "repl-diskless-sync no", "enable-protected-configs yes")
	ctx := context.Background()
	plant.Clean(t, s.Client(t), 100)
	gone := filepath.Join(t.TempDir(), "gone")
	if err := os.Mkdir(gone, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := s.Client(t).ConfigSet(ctx, "dir", gone).Err(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	_, err := audit(t, reg, Options{Target: target(s.Addr, false)})
	if err == nil || !strings.Contains(err.Error(), s.Addr+" closed the link before its snapshot started") || !strings.Contains(err.Error(), "its log says why") || !strings.Contains(err.Error(), "without --snapshot") {
		t.Fatalf("err %v; want where to look and what else to run", err)
	}
}

// A replica that lost its master makes no snapshot: the error says
// what to audit instead.
func TestSnapshotStaleReplica(t *testing.T) {
	reg := testRegistry(t)
	m := redistest.Start(t, "repl-diskless-sync-delay 0")
	r := redistest.Start(t, "replicaof 127.0.0.1 "+strings.TrimPrefix(m.Addr, "127.0.0.1:"))
	m.Stop()
	r.WaitInfo(t, "replication", func(in string) bool { return strings.Contains(in, "master_link_status:down") })
	_, err := audit(t, reg, Options{Target: target(r.Addr, false)})
	if err == nil || !strings.Contains(err.Error(), r.Addr+" is a replica out of sync with its master (NOMASTERLINK") || !strings.Contains(err.Error(), "ask its master") {
		t.Fatalf("err %v; want the replica out of sync named", err)
	}
}

// The reply of a server whose fork failed (Redis's own words) gets the
// same advice; a link cut that is not an end of file keeps its cause.
func TestSyncErrorCannotSave(t *testing.T) {
	err := syncError("10.0.0.1:6379", resp.ServerError("ERR BGSAVE failed, replication can't continue"))
	if !strings.Contains(err.Error(), "10.0.0.1:6379 could not make the snapshot (ERR BGSAVE failed") || !strings.Contains(err.Error(), "vm.overcommit_memory") {
		t.Errorf("fork failed: %v", err)
	}
	err = syncError("10.0.0.1:6379", fmt.Errorf("read: %w", syscall.ECONNRESET))
	if !strings.Contains(err.Error(), "closed the link before its snapshot started") || !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("reset: %v", err)
	}
}

// A Cluster of three masters with a replica each: the snapshots of the
// masters (and, with Replicas, of the replicas) count every key once and
// all 16384 slots. A slot left migrating is not covered and the report
// is partial.
func TestSnapshotCluster(t *testing.T) {
	reg := testRegistry(t)
	c := redistest.StartClusterWithReplicas(t, 3, 1)
	ctx := context.Background()
	cc := c.Client(t)
	n := plant.Clean(t, cc, 2000)
	tg := target(c.Addrs[0], true, c.Addrs[1:]...)
	tg.Conn.DB = 0
	tg.Display = c.URL()
	walk, err := live.Run(ctx, reg, tg, live.Options{Seed: 1})
	if err != nil || !walk.Complete {
		t.Fatalf("walk: %v %+v", err, walk)
	}
	for _, replicas := range []bool{false, true} {
		res, err := audit(t, reg, Options{Target: tg, Replicas: replicas})
		if err != nil {
			t.Fatal(err)
		}
		rep := res.Report
		if !res.Complete || rep.Summary.Keys != int64(n) || rep.Source.Kind != "cluster" {
			t.Fatalf("replicas %v: complete %v, %d keys of %d, source %+v, %+v", replicas, res.Complete, rep.Summary.Keys, n, rep.Source, rep.Coverage)
		}
		if got, want := visible(rep), visible(walk.Report); got != want {
			t.Errorf("replicas %v: the snapshots' report differs from the walk's\n%s", replicas, firstDiff(want, got))
		}
		cov := rep.Coverage
		if cov.Cluster == nil || cov.Cluster.Slots != 16384 || cov.Cluster.Masters != 3 || len(cov.Nodes) != 3 || cov.Share != 1 {
			t.Fatalf("coverage %+v %+v", cov, cov.Cluster)
		}
		for _, nd := range cov.Nodes {
			if nd.Role != "snapshot" || nd.Slots == "" {
				t.Errorf("node %+v; want a snapshot with its slots", nd)
			}
		}
		if replicas != strings.Contains(rep.Notes[0], "(replica of ") {
			t.Errorf("replicas %v: note %q", replicas, rep.Notes[0])
		}
	}

	// One master audited without --cluster: its snapshot, and the report
	// says it is 1 of 3 masters, as the walk's does.
	one := target(c.Addrs[0], false)
	alone, err := audit(t, reg, Options{Target: one})
	if err != nil {
		t.Fatal(err)
	}
	first := redis.NewClient(&redis.Options{Addr: c.Addrs[0]})
	defer first.Close()
	keys, err := first.DBSize(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	acov := alone.Report.Coverage
	if !alone.Complete || alone.Report.Summary.Keys != keys || acov.Cluster == nil || acov.Cluster.Masters != 3 || acov.Cluster.Walked != 1 ||
		acov.Cluster.Slots < 5000 || acov.Nodes[0].Slots == "" || !strings.Contains(acov.Summary(), "add --cluster for all") {
		t.Errorf("one master alone: complete %v, %d keys of its %d, coverage %+v %+v (%s)", alone.Complete, alone.Report.Summary.Keys, keys, acov, acov.Cluster, acov.Summary())
	}

	// A key left on a master that does not serve its slot (written while
	// the slot was being imported, the import then called off): counted,
	// and named in a note.
	orphan := "orphan:1"
	oslot, err := cc.ClusterKeySlot(ctx, orphan).Result()
	if err != nil {
		t.Fatal(err)
	}
	ranges, err := cc.ClusterSlots(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	oowner := -1
	for _, r := range ranges {
		if int64(r.Start) <= oslot && oslot <= int64(r.End) {
			oowner = slices.Index(c.Addrs, r.Nodes[0].Addr)
		}
	}
	holder := redis.NewClient(&redis.Options{Addr: c.Addrs[(oowner+1)%3], PoolSize: 1})
	defer holder.Close()
	ownerc := redis.NewClient(&redis.Options{Addr: c.Addrs[oowner]})
	defer ownerc.Close()
	ownerID, err := ownerc.Do(ctx, "CLUSTER", "MYID").Text()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Do(ctx, "CLUSTER", "SETSLOT", oslot, "IMPORTING", ownerID).Err(); err != nil {
		t.Fatal(err)
	}
	pipe := holder.Pipeline()
	pipe.Do(ctx, "ASKING")
	pipe.Set(ctx, orphan, "x", 0)
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := holder.Do(ctx, "CLUSTER", "SETSLOT", oslot, "STABLE").Err(); err != nil {
		t.Fatal(err)
	}
	withOrphan, err := audit(t, reg, Options{Target: tg})
	if err != nil {
		t.Fatal(err)
	}
	wantNote := "1 key on " + c.Addrs[(oowner+1)%3] + " is in slots the node does not serve"
	if !withOrphan.Complete || withOrphan.Report.Summary.Keys != int64(n)+1 || !slices.ContainsFunc(withOrphan.Report.Notes, func(s string) bool { return strings.Contains(s, wantNote) }) {
		t.Errorf("an orphan key: complete %v, %d keys (want %d), notes %q; want %q", withOrphan.Complete, withOrphan.Report.Summary.Keys, n+1, withOrphan.Report.Notes, wantNote)
	}

	// Slot 0 half moved: MIGRATING on its owner, IMPORTING on another.
	slots, err := cc.ClusterSlots(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	owner := -1
	for _, r := range slots {
		if r.Start == 0 {
			owner = slices.Index(c.Addrs, r.Nodes[0].Addr)
		}
	}
	if owner < 0 {
		t.Fatalf("no master of %v owns slot 0: %+v", c.Addrs, slots)
	}
	other := (owner + 1) % 3
	ids := make([]string, 3)
	for i, a := range c.Addrs {
		cl := redis.NewClient(&redis.Options{Addr: a})
		ids[i], _ = cl.Do(ctx, "CLUSTER", "MYID").Text()
		cl.Close()
	}
	src := redis.NewClient(&redis.Options{Addr: c.Addrs[owner]})
	defer src.Close()
	dst := redis.NewClient(&redis.Options{Addr: c.Addrs[other]})
	defer dst.Close()
	if err := dst.Do(ctx, "CLUSTER", "SETSLOT", 0, "IMPORTING", ids[owner]).Err(); err != nil {
		t.Fatal(err)
	}
	if err := src.Do(ctx, "CLUSTER", "SETSLOT", 0, "MIGRATING", ids[other]).Err(); err != nil {
		t.Fatal(err)
	}
	res, err := audit(t, reg, Options{Target: tg})
	if err != nil {
		t.Fatal(err)
	}
	cov := res.Report.Coverage
	if res.Complete || res.Report.Complete || len(cov.NotCovered) != 1 || cov.NotCovered[0].Slots != "0" || cov.Cluster.Slots != 16383 || cov.Share >= 1 {
		t.Fatalf("slot 0 migrating: complete %v, coverage %+v %+v; want slot 0 not covered", res.Complete, cov, cov.Cluster)
	}
}

// A Cluster that changes while its snapshots arrive: a failover (the
// promoted replica holds the same keys) leaves the report complete;
// slots moved to another master are not covered, and the report is
// partial.
func TestSnapshotClusterChanges(t *testing.T) {
	reg := testRegistry(t)
	c := redistest.StartClusterWithReplicas(t, 3, 1)
	ctx := context.Background()
	n := plant.Clean(t, c.Client(t), 3000)
	tg := target(c.Addrs[0], true, c.Addrs[1:]...)
	tg.Conn.DB = 0
	during := func(change func()) *snapshot.Result {
		t.Helper()
		f := New(Options{Target: tg})
		ins, err := f.Open(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer snapshot.Close(ins)
		change() // every node has started sending
		res, err := snapshot.Run(ctx, reg, ins, snapshot.Options{DB: -1, Procs: len(ins) + 1})
		if err != nil {
			t.Fatal(err)
		}
		f.Finish(ctx, res)
		return res
	}

	res := during(func() { c.Failover(t, 1) })
	if cov := res.Report.Coverage; !res.Complete || res.Report.Summary.Keys != int64(n) || cov.Cluster.Slots != 16384 || len(cov.NotCovered) != 0 {
		t.Errorf("failover: complete %v, %d keys of %d, coverage %+v %+v; want all covered", res.Complete, res.Report.Summary.Keys, n, cov, cov.Cluster)
	}

	var moved []int
	res = during(func() {
		slots, err := c.Client(t).ClusterSlots(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		from := slices.Index(c.Addrs, slots[0].Nodes[0].Addr)
		for s := slots[0].Start; s < slots[0].Start+20; s++ {
			moved = append(moved, int(s))
		}
		c.MoveSlots(t, from, (from+1)%3, moved)
	})
	cov := res.Report.Coverage
	if res.Complete || res.Report.Complete || len(cov.NotCovered) != 1 || cov.Cluster.Slots != 16384-len(moved) {
		t.Fatalf("slots moved: complete %v, coverage %+v %+v; want %d slots not covered", res.Complete, cov, cov.Cluster, len(moved))
	}
	if got := cov.NotCovered[0]; got.Slots != fmt.Sprintf("%d-%d", moved[0], moved[len(moved)-1]) || !strings.Contains(got.Reason, "counted twice") {
		t.Errorf("not covered %+v; want slots %d-%d", got, moved[0], moved[len(moved)-1])
	}
}

// A server that is already running a child (a save, an AOF rewrite)
// makes the audit's snapshot once it ends: Waiting says so while the
// audit waits, the snapshot is whole, and the report's first note says
// how long it waited and for what. (rdb-key-save-delay makes the child
// slow: a pause per key, Redis's own test setting.)
func TestSnapshotWaitsForChild(t *testing.T) {
	reg := testRegistry(t)
	s := redistest.Start(t, "repl-diskless-sync-delay 0")
	ctx := context.Background()
	rdb := s.Client(t)
	n := plant.Clean(t, rdb, 2000)
	for _, tc := range []struct{ start, child string }{
		{"BGSAVE", "a save or a replica's sync"},
		{"BGREWRITEAOF", "an append-only file rewrite"},
	} {
		t.Run(tc.start, func(t *testing.T) {
			noChild(t, s)
			// 1 ms a key: the child runs ~2 s.
			if err := rdb.ConfigSet(ctx, "rdb-key-save-delay", "1000").Err(); err != nil {
				t.Fatal(err)
			}
			if err := rdb.Do(ctx, tc.start).Err(); err != nil {
				t.Fatal(err)
			}
			var told []string
			opts := Options{Target: target(s.Addr, false), Waiting: func(why string) {
				told = append(told, why)
				// The child at work keeps its pause; the audit's own,
				// forked after it, runs at full speed.
				if err := rdb.ConfigSet(ctx, "rdb-key-save-delay", "0").Err(); err != nil {
					t.Error(err)
				}
			}}
			res, err := audit(t, reg, opts)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Complete || res.Report.Summary.Keys != int64(n) {
				t.Fatalf("complete %v, %d keys of %d", res.Complete, res.Report.Summary.Keys, n)
			}
			if len(told) != 1 || !strings.Contains(told[0], s.Addr+" is busy with "+tc.child+" (begun ") {
				t.Errorf("waiting told %q; want the child at work named", told)
			}
			if note := res.Report.Notes[0]; !strings.Contains(note, s.Addr+" (master) diskless, after ") || !strings.Contains(note, "waiting for "+tc.child+" to end") {
				t.Errorf("first note %q; want the wait named", note)
			}
		})
	}
	// An audit whose time ends while it waits says for what.
	noChild(t, s)
	if err := rdb.ConfigSet(ctx, "rdb-key-save-delay", "1000").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.BgSave(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	// The child runs ~2 s: the audit's second ends while it waits.
	short, cancel := context.WithTimeout(ctx, time.Second)
	_, err := Run(short, reg, Options{Target: target(s.Addr, false)}, snapshot.Options{DB: -1})
	cancel()
	if err == nil || !strings.Contains(err.Error(), "before the snapshot started; the server was busy with a save or a replica's sync") {
		t.Errorf("timed out while waiting: %v; want what it waited for", err)
	}
	if err := rdb.ConfigSet(ctx, "rdb-key-save-delay", "0").Err(); err != nil {
		t.Fatal(err)
	}
	// No child at work: nothing to tell, and the snapshot starts at once
	// (repl-diskless-sync-delay 0), so the note names no wait.
	noChild(t, s)
	var told []string
	res, err := audit(t, reg, Options{Target: target(s.Addr, false), Waiting: func(why string) { told = append(told, why) }})
	if err != nil || !res.Complete || len(told) != 0 || strings.Contains(res.Report.Notes[0], ", after ") {
		t.Errorf("an idle server: %v, told %q, note %q", err, told, res.Report.Notes[0])
	}
}

// noChild waits until the server runs no child process: the one of an
// audit's snapshot may outlive the transfer by a moment, and a rewrite
// asked for meanwhile is scheduled to start after it.
func noChild(t *testing.T, s *redistest.Server) {
	t.Helper()
	s.WaitInfo(t, "persistence", func(in string) bool {
		return !strings.Contains(in, "_in_progress:1") && !strings.Contains(in, "aof_rewrite_scheduled:1")
	})
}

// A server still loading its dataset (just restarted) refuses SYNC with
// LOADING: the snapshot waits for it to load, says so, and holds every key.
func TestSnapshotWaitsForLoading(t *testing.T) {
	reg := testRegistry(t)
	s := redistest.Start(t, append(redistest.SlowLoading(300), "repl-diskless-sync-delay 0")...)
	ctx := context.Background()
	rdb := s.Client(t)
	n := plant.Clean(t, rdb, 4000)
	if err := rdb.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	loaded := s.RestartWhileLoading(t)
	var told []string
	res, err := audit(t, reg, Options{Target: target(s.Addr, false), Waiting: func(why string) { told = append(told, why) }})
	<-loaded
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete || res.Report.Summary.Keys != int64(n) {
		t.Errorf("complete %v, %d keys of %d", res.Complete, res.Report.Summary.Keys, n)
	}
	if len(told) == 0 || !strings.Contains(told[0], s.Addr+" is loading its dataset (") {
		t.Errorf("waiting told %q; want the loading named", told)
	}
}

// A diskless server that waits repl-diskless-sync-delay before it
// forks, with no child at work: Waiting is told why once the snapshot is
// slow to begin, and the report's note says how long it waited.
func TestSnapshotTellsDisklessDelay(t *testing.T) {
	reg := testRegistry(t)
	s := redistest.Start(t, "repl-diskless-sync-delay 3")
	plant.Clean(t, s.Client(t), 200)
	var mu sync.Mutex
	var told []string
	res, err := audit(t, reg, Options{Target: target(s.Addr, false), Waiting: func(why string) {
		mu.Lock()
		defer mu.Unlock()
		told = append(told, why)
	}})
	if err != nil || !res.Complete {
		t.Fatalf("%v %+v", err, res)
	}
	if len(told) != 1 || !strings.Contains(told[0], s.Addr+" has not begun it after 2s (a diskless server first waits repl-diskless-sync-delay") {
		t.Errorf("told %q; want the delay named", told)
	}
	if note := res.Report.Notes[0]; !strings.Contains(note, s.Addr+" (master) diskless, after 3s (repl-diskless-sync-delay") {
		t.Errorf("first note %q; want the wait", note)
	}
}

// Snapshots asked for at once, by two audits and a real replica's first
// sync, all arrive whole: the server makes one after the other (delay 0)
// or one for all who asked within repl-diskless-sync-delay (1 s).
func TestSnapshotsAtOnce(t *testing.T) {
	reg := testRegistry(t)
	ctx := context.Background()
	for _, delay := range []string{"0", "1"} {
		t.Run("delay="+delay, func(t *testing.T) {
			s := redistest.Start(t, "repl-diskless-sync-delay "+delay)
			n := plant.Clean(t, s.Client(t), 3000)
			replica := redistest.Start(t)
			host, port, _ := net.SplitHostPort(s.Addr)
			results := make([]*snapshot.Result, 2)
			errs := make([]error, 2)
			var wg sync.WaitGroup
			for i := range results {
				wg.Go(func() {
					results[i], errs[i] = Run(ctx, reg, Options{Target: target(s.Addr, false)}, snapshot.Options{DB: -1})
				})
			}
			if err := replica.Client(t).ReplicaOf(ctx, host, port).Err(); err != nil {
				t.Fatal(err)
			}
			wg.Wait()
			for i, res := range results {
				if errs[i] != nil || !res.Complete || res.Report.Summary.Keys != int64(n) {
					t.Fatalf("audit %d: %v, %+v", i, errs[i], res)
				}
			}
			// The replica's sync came through too.
			replica.WaitInfo(t, "", func(in string) bool {
				return strings.Contains(in, "master_link_status:up") && strings.Contains(in, fmt.Sprintf("db0:keys=%d,", n))
			})
		})
	}
}

// Real RDB files of other projects' test suites, each loaded into a real
// redis-server (those it loads): the audit of the snapshot the server
// then sends counts exactly the keys the server holds, complete. (The
// file's own audit may count a few more: keys that had not expired when
// the file was written, which the server dropped on load.)
func TestSnapshotOfRealFiles(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(redistest.RDBFixtures(t), "*.rdb"))
	if len(files) == 0 {
		t.Skip("no RDB fixtures")
	}
	reg := testRegistry(t)
	s := redistest.Start(t, "repl-diskless-sync-delay 0")
	ctx := context.Background()
	loaded := 0
	for i, f := range files {
		if testing.Short() && i%3 != 0 {
			continue
		}
		s.Stop()
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(s.Dir, "dump.rdb"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		if s.TryRestart() != nil {
			continue // a version, module or damage this redis-server refuses
		}
		loaded++
		c := redis.NewClient(&redis.Options{Addr: s.Addr})
		info, err := c.Info(ctx, "keyspace").Result()
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
		var want int64
		for line := range strings.Lines(info) {
			if _, rest, ok := strings.Cut(line, "keys="); ok {
				n, _, _ := strings.Cut(rest, ",")
				k, _ := strconv.ParseInt(n, 10, 64)
				want += k
			}
		}
		res, err := audit(t, reg, Options{Target: target(s.Addr, false)})
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
			continue
		}
		if !res.Complete || res.Report.Summary.Keys != want {
			t.Errorf("%s: complete %v, %d keys; the server holds %d (%+v)", filepath.Base(f), res.Complete, res.Report.Summary.Keys, want, res.Stopped)
		}
	}
	if loaded < len(files)/6 {
		t.Errorf("only %d of %d files loaded: is the server too old?", loaded, len(files))
	}
	t.Logf("%d files loaded and audited from the server's snapshot", loaded)
}

// A server that saves snapshots to its disk on its own (save rules), on
// Redis's defaults otherwise (diskless, repl-diskless-sync-delay 5), is
// asked for its snapshot written to disk first once a save of its own
// has worked: it forks at once instead of waiting 5 s for more replicas,
// and the report says so. Before that, without save rules, or for a
// user who may not read the configuration, the server's own choice
// stands (diskless, after the delay: 1 s here), as it does for audits on
// a schedule.
func TestSnapshotDiskFirst(t *testing.T) {
	reg := testRegistry(t)
	ctx := context.Background()
	s := redistest.Start(t, "save 3600 1", "repl-diskless-sync yes", "repl-diskless-sync-delay 5")
	n := plant.Clean(t, s.Client(t), 2000)
	file := filepath.Join(s.Dir, "dump.rdb")
	// Until a save to disk has worked on this server, it is not asked
	// for one (a failed save would make it refuse writes).
	if err := s.Client(t).ConfigSet(ctx, "repl-diskless-sync-delay", "1").Err(); err != nil {
		t.Fatal(err)
	}
	res, err := audit(t, reg, Options{Target: target(s.Addr, false)})
	if err != nil || !res.Complete {
		t.Fatalf("before any save: %v %+v", err, res)
	}
	if note := res.Report.Notes[0]; !strings.Contains(note, s.Addr+" (master) diskless") {
		t.Errorf("before any save, first note %q; want diskless", note)
	}
	noChild(t, s) // the snapshot's child may still be ending
	if err := s.Client(t).BgSave(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	s.WaitInfo(t, "persistence", func(in string) bool {
		return strings.Contains(in, "rdb_bgsave_in_progress:0") && !strings.Contains(in, "rdb_last_bgsave_time_sec:-1")
	})
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if err := s.Client(t).ConfigSet(ctx, "repl-diskless-sync-delay", "5").Err(); err != nil {
		t.Fatal(err)
	}
	var told []string
	var mu sync.Mutex
	res, err = audit(t, reg, Options{Target: target(s.Addr, false), Waiting: func(why string) {
		mu.Lock()
		defer mu.Unlock()
		told = append(told, why)
	}})
	if err != nil || !res.Complete || res.Report.Summary.Keys != int64(n) {
		t.Fatalf("%v %+v", err, res)
	}
	note := res.Report.Notes[0]
	if !strings.Contains(note, s.Addr+" (master) written to its disk first, as keyguard asked: its save rules write that file anyway, and a diskless one waits repl-diskless-sync-delay (5 s) first") {
		t.Errorf("first note %q; want the disk-first sync named", note)
	}
	if strings.Contains(note, "after 5s") || strings.Contains(note, "after 6s") || len(told) > 0 {
		t.Errorf("the snapshot waited for the diskless delay: note %q, told %q", note, told)
	}
	if _, err := os.Stat(file); err != nil {
		t.Errorf("the server wrote no snapshot file: %v", err)
	}

	// Audits on a schedule (keyguard serve) leave the server its choice:
	// the delay costs them nothing, a save to disk each time would.
	if err := s.Client(t).ConfigSet(ctx, "repl-diskless-sync-delay", "1").Err(); err != nil {
		t.Fatal(err)
	}
	res, err = audit(t, reg, Options{Target: target(s.Addr, false), Scheduled: true})
	if err != nil || !res.Complete || res.Report.Summary.Keys != int64(n) {
		t.Fatalf("scheduled: %v %+v", err, res)
	}
	if note := res.Report.Notes[0]; !strings.Contains(note, s.Addr+" (master) diskless") {
		t.Errorf("scheduled, first note %q; want the server's choice, diskless", note)
	}

	// No save rules: the file would be one the server never writes, and
	// loads on its next start.
	if err := s.Client(t).ConfigSet(ctx, "save", "").Err(); err != nil {
		t.Fatal(err)
	}
	res, err = audit(t, reg, Options{Target: target(s.Addr, false)})
	if err != nil || !res.Complete || res.Report.Summary.Keys != int64(n) {
		t.Fatalf("without save rules: %v %+v", err, res)
	}
	if note := res.Report.Notes[0]; !strings.Contains(note, s.Addr+" (master) diskless") {
		t.Errorf("without save rules, first note %q; want diskless", note)
	}

	// The documented snapshot user may not read the configuration.
	if err := s.Client(t).ConfigSet(ctx, "save", "3600 1").Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.Client(t).Do(ctx, "ACL", "SETUSER", "keyguard-snapshot", "on", ">pw", "+info", "+replconf", "+sync", "+cluster|nodes").Err(); err != nil {
		t.Fatal(err)
	}
	tg := target(s.Addr, false)
	tg.Conn.Username, tg.Conn.Password = "keyguard-snapshot", "pw"
	res, err = audit(t, reg, Options{Target: tg})
	if err != nil || !res.Complete || res.Report.Summary.Keys != int64(n) {
		t.Fatalf("a user without +config|get: %v %+v", err, res)
	}
	if note := res.Report.Notes[0]; !strings.Contains(note, s.Addr+" (master) diskless") {
		t.Errorf("a user without +config|get, first note %q; want the server's choice, diskless", note)
	}
}

// When a snapshot written to disk first comes sooner than the server's
// diskless one, and leaves the server as its own configuration would.
func TestDiskFirstRule(t *testing.T) {
	defaults := syncConfig{diskless: true, delay: 5, saves: true, savesWork: true, usedMemory: 100 << 20}
	for _, c := range []struct {
		name string
		edit func(*syncConfig)
		want bool
	}{
		{"Redis's defaults", func(*syncConfig) {}, true},
		{"repl-diskless-sync no: on disk anyway", func(s *syncConfig) { s.diskless = false }, false},
		{"no delay: diskless starts at once and is decoded as written", func(s *syncConfig) { s.delay = 0 }, false},
		{"forks for the first replica at once", func(s *syncConfig) { s.maxReplicas = 1 }, false},
		{"waits for two replicas", func(s *syncConfig) { s.maxReplicas = 2 }, true},
		{"no save rules: a file it never writes", func(s *syncConfig) { s.saves = false }, false},
		{"its saves to disk not known to work (none since it started, or the last failed)", func(s *syncConfig) { s.savesWork = false }, false},
		{"memory unknown", func(s *syncConfig) { s.usedMemory = 0 }, false},
		{"at the bound", func(s *syncConfig) { s.usedMemory = 5 * diskFirstRate }, true},
		{"past it: decoding all after the save takes longer than the delay", func(s *syncConfig) { s.usedMemory = 5*diskFirstRate + 1 }, false},
		{"a longer delay moves the bound", func(s *syncConfig) { s.delay, s.usedMemory = 20, 10*diskFirstRate }, true},
	} {
		sc := defaults
		c.edit(&sc)
		if got := sc.diskFirst(); got != c.want {
			t.Errorf("%s: diskFirst %v, want %v", c.name, got, c.want)
		}
	}
}
