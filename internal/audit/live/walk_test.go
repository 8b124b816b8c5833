package live

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/pace"
	"github.com/keyguard/keyguard/internal/redistest"
	"github.com/keyguard/keyguard/internal/resp"
)

// seen collects what Visit was handed, per node and database, and the
// TYPE each key answered on Batch.Conn.
type seen struct {
	mu      sync.Mutex
	keys    map[string]int // "db/key" → times handed over (and kept)
	types   map[string]int // TYPE replies
	batches atomic.Int64
	restart []string
	reached chan struct{}
	at      int64
	once    sync.Once
}

func newSeen(at int64) *seen {
	return &seen{keys: map[string]int{}, types: map[string]int{}, reached: make(chan struct{}), at: at}
}

var typeCmd = resp.NewKeyCmd([]string{"TYPE"})

// visit sends TYPE for every key of b on b.Conn, gives back keys that
// answered MOVED or ASK, and keeps the others.
func (s *seen) visit(ctx context.Context, b *Batch) error {
	s.batches.Add(1)
	c := b.Conn
	if err := c.Begin(ctx); err != nil {
		return err
	}
	for _, k := range b.Keys {
		c.Key(typeCmd, k)
	}
	c.Take()
	if err := c.Flush(); err != nil {
		return err
	}
	types := make([]string, len(b.Keys))
	for i := range b.Keys {
		rp, err := c.Read()
		if err != nil {
			return err
		}
		if rp.Kind == '-' {
			if IsRedirect(resp.ServerError(rp.Str)) {
				b.Redo(i)
				continue
			}
			return resp.ServerError(rp.Str)
		}
		types[i] = string(rp.Str)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, k := range b.Keys {
		if b.Dropped(i) {
			continue
		}
		s.keys[fmt.Sprintf("%d/%s", b.DB, k)]++
		s.types[types[i]]++
	}
	if int64(len(s.keys)) >= s.at {
		s.once.Do(func() { close(s.reached) })
	}
	return nil
}

// restarted drops what was kept of node's db.
func (s *seen) restarted(node string, db int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.restart = append(s.restart, fmt.Sprintf("%s/%d", node, db))
	prefix := fmt.Sprintf("%d/", db)
	for k := range s.keys {
		if strings.HasPrefix(k, prefix) {
			delete(s.keys, k)
		}
	}
}

// twice lists keys handed over more than once.
func (s *seen) twice() []string {
	var out []string
	for k, n := range s.keys {
		if n > 1 {
			out = append(out, k)
		}
	}
	return out
}

// Every key of every database of a server is handed to Visit once, with
// a connection at its database, and the coverage counts them per database.
func TestWalkServerEveryDatabase(t *testing.T) {
	s := redistest.Start(t)
	ctx := context.Background()
	want := map[int]int{0: 3000, 1: 1200, 3: 17}
	for db, n := range want {
		c := redis.NewClient(&redis.Options{Addr: s.Addr, DB: db})
		p := c.Pipeline()
		for i := range n {
			if i%2 == 0 {
				p.Set(ctx, fmt.Sprintf("k:%d:%d", db, i), "v", 0)
			} else {
				p.RPush(ctx, fmt.Sprintf("k:%d:%d", db, i), "v")
			}
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	sn := newSeen(1 << 62)
	res, err := Walk(ctx, Target{Conn: Conn{Addr: s.Addr, DB: AllDBs}}, WalkOptions{Count: 100, Visit: sn.visit})
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for db, n := range want {
		total += n
		got := 0
		for k := range sn.keys {
			if strings.HasPrefix(k, fmt.Sprintf("%d/", db)) {
				got++
			}
		}
		if got != n {
			t.Errorf("db %d: %d keys handed over, want %d", db, got, n)
		}
	}
	if tw := sn.twice(); len(tw) > 0 {
		t.Errorf("%d keys handed over twice: %v", len(tw), tw[:min(3, len(tw))])
	}
	if sn.types["string"]+sn.types["list"] != total {
		t.Errorf("TYPE on Batch.Conn answered %v", sn.types)
	}
	if !res.Complete || res.Listed != int64(total) || res.Coverage.Share != 1 {
		t.Errorf("complete %v, listed %d of %d, coverage %+v", res.Complete, res.Listed, total, res.Coverage)
	}
	if len(res.Coverage.Nodes) != 1 || len(res.Coverage.Nodes[0].DBs) != 3 {
		t.Fatalf("coverage nodes %+v", res.Coverage.Nodes)
	}
	for _, d := range res.Coverage.Nodes[0].DBs {
		if d.Counted != int64(want[d.DB]) || d.KeysStart != d.Counted || d.KeysEnd != d.Counted || !d.Complete {
			t.Errorf("db %+v; want %d counted", d, want[d.DB])
		}
	}

	// MATCH and TYPE narrow the keys; one database only.
	sn = newSeen(1 << 62)
	res, err = Walk(ctx, Target{Conn: Conn{Addr: s.Addr, DB: 1}}, WalkOptions{Match: "k:1:1*", Type: "list", Visit: sn.visit})
	if err != nil {
		t.Fatal(err)
	}
	wantN := 0
	for i := range want[1] {
		if i%2 == 1 && strings.HasPrefix(fmt.Sprint(i), "1") {
			wantN++
		}
	}
	if len(sn.keys) != wantN || sn.types["list"] != wantN || !res.Complete {
		t.Errorf("MATCH k:1:1* TYPE list: %d keys (%v), want %d; complete %v", len(sn.keys), sn.types, wantN, res.Complete)
	}
}

// A server restarted (SHUTDOWN SAVE, started again on its port) in the
// middle of the walk: the walk starts again from its first key, the
// caller is told to drop what it kept, and every key is handed over once
// in the new life. With no restarts allowed the database is not covered.
// The server loads its keys slowly (key-load-delay, answering clients
// between them): the walk meets it
// LOADING, and the key count it reports for the new life is the one the
// server holds once loaded, not the count of the keys loaded so far.
func TestWalkServerRestartedMidWalk(t *testing.T) {
	s := redistest.Start(t, redistest.SlowLoading(200)...)
	ctx := context.Background()
	c := s.Client(t)
	n := 20_000
	if testing.Short() {
		n = 6_000
	}
	p := c.Pipeline()
	for i := range n {
		p.Set(ctx, fmt.Sprintf("r:%d", i), i, 0)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	for _, restarts := range []int{0, -1} {
		t.Run(fmt.Sprintf("restarts=%d", restarts), func(t *testing.T) {
			sn := newSeen(int64(n) / 4)
			type outcome struct {
				res *WalkResult
				err error
			}
			done := make(chan outcome, 1)
			go func() {
				// About 2 s a walk: the restart lands in its middle.
				res, err := Walk(ctx, Target{Conn: Conn{Addr: s.Addr}}, WalkOptions{Count: 50, Limiter: pace.New(float64(n)/2, 100), PerKey: 1,
					Restarts: restarts, Visit: sn.visit, Restarted: sn.restarted})
				done <- outcome{res, err}
			}()
			select {
			case <-sn.reached:
			case o := <-done:
				t.Fatalf("the walk ended before the restart: %+v %v", o.res, o.err)
			}
			s.Restart(t)
			o := <-done
			if o.err != nil {
				t.Fatal(o.err)
			}
			res := o.res
			if restarts < 0 {
				if res.Complete || len(res.Coverage.NotCovered) != 1 || !strings.Contains(res.Coverage.NotCovered[0].Reason, "restarted") || res.Coverage.Share >= 1 {
					t.Errorf("no restarts allowed: complete %v, coverage %+v; want the database not covered", res.Complete, res.Coverage)
				}
				return
			}
			if len(sn.restart) != 1 {
				t.Errorf("Restarted called %v; want once", sn.restart)
			}
			if tw := sn.twice(); len(tw) > 0 {
				t.Errorf("%d keys kept twice across the restart", len(tw))
			}
			if len(sn.keys) != n || !res.Complete || res.Listed != int64(n) {
				t.Errorf("%d keys kept of %d; complete %v, listed %d, coverage %+v", len(sn.keys), n, res.Complete, res.Listed, res.Coverage)
			}
			if !strings.Contains(strings.Join(res.Notes, "\n"), "walked again from its first key") {
				t.Errorf("no note of the restart: %q", res.Notes)
			}
			if rid := res.Coverage.Nodes[0].RunID; rid == "" {
				t.Error("no run_id in the coverage")
			}
			if d := res.Coverage.Nodes[0].DBs[0]; d.KeysStart != int64(n) || d.KeysEnd != int64(n) || d.Counted != int64(n) {
				t.Errorf("coverage of the new life %+v: want %d keys at its start, at its end and counted", d, n)
			}
		})
	}
}

// checkWalkHonest: a walk of the Cluster is complete with exactly its
// keys, each once, or names the slots it did not cover and handed over
// exactly the keys of the others.
func checkWalkHonest(t *testing.T, c *redistest.Cluster, res *WalkResult, sn *seen) {
	t.Helper()
	ctx := context.Background()
	total := clusterKeys(t, c)
	if tw := sn.twice(); len(tw) > 0 {
		t.Errorf("%d keys handed over twice: %v", len(tw), tw[:min(3, len(tw))])
	}
	cov := res.Coverage
	if cov == nil || cov.Cluster == nil {
		t.Fatalf("no Cluster coverage: %+v", cov)
	}
	if res.Complete {
		if int64(len(sn.keys)) != total || cov.Cluster.Slots != report.ClusterSlots || len(cov.NotCovered) != 0 {
			t.Errorf("complete, yet %d keys of %d, %d slots, not covered %+v", len(sn.keys), total, cov.Cluster.Slots, cov.NotCovered)
		}
		return
	}
	var missing int64
	for _, g := range cov.NotCovered {
		if !report.ValidSlotRanges(g.Slots) {
			t.Errorf("a part not covered names no slots: %+v", g)
			continue
		}
		for _, s := range report.ParseSlotRanges(g.Slots) {
			for _, m := range c.Nodes {
				k, err := m.Client(t).ClusterCountKeysInSlot(ctx, s).Result()
				if err != nil {
					t.Fatal(err)
				}
				missing += k
			}
		}
	}
	if int64(len(sn.keys)) != total-missing {
		t.Errorf("incomplete: %d keys handed over; want %d of %d less %d in the slots not covered (%+v)", len(sn.keys), total-missing, total, missing, cov.NotCovered)
	}
	t.Logf("incomplete (honestly): %+v", cov.NotCovered)
}

// walkDuring walks the Cluster, sending TYPE per key on Batch.Conn, and
// runs fault once a quarter of the keys were handed over.
func walkDuring(t *testing.T, c *redistest.Cluster, n int, rate float64, fault func()) (*WalkResult, *seen) {
	t.Helper()
	sn := newSeen(int64(n) / 4)
	type outcome struct {
		res *WalkResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := Walk(context.Background(), clusterTarget(c), WalkOptions{Limiter: pace.New(rate, int(rate/4)), PerKey: 1, Visit: sn.visit})
		done <- outcome{res, err}
	}()
	select {
	case <-sn.reached:
	case o := <-done:
		t.Fatalf("the walk ended before the fault: %+v %v", o.res, o.err)
	}
	fault()
	o := <-done
	if o.err != nil {
		t.Fatal(o.err)
	}
	return o.res, sn
}

// A failover and a slot migration during a walk of a 3-master Cluster
// with replicas: each key handed over once, on its owner of the moment,
// or its slot named as not covered.
func TestWalkClusterFaults(t *testing.T) {
	n, rate := faultKeys()
	t.Run("failover", func(t *testing.T) {
		c := redistest.StartClusterWithReplicas(t, 3, 1)
		loadScale(t, c.Client(t), n)
		res, sn := walkDuring(t, c, n, rate, func() { c.Failover(t, 0) })
		checkWalkHonest(t, c, res, sn)
		if !strings.Contains(strings.Join(res.Notes, "\n"), "walked again") {
			t.Errorf("the failover did not reach the walk: %q", res.Notes)
		}
	})
	t.Run("migration", func(t *testing.T) {
		c := redistest.StartClusterWithReplicas(t, 3, 1)
		loadScale(t, c.Client(t), n)
		var slots []int
		for s := 4999; s >= 2000; s-- { // from the end: the walk meets slots already moved
			slots = append(slots, s)
		}
		moved := 0
		res, sn := walkDuring(t, c, n, rate, func() { moved = c.MoveSlots(t, 0, 1, slots) })
		if moved == 0 {
			t.Fatal("no key moved")
		}
		checkWalkHonest(t, c, res, sn)
		if !strings.Contains(strings.Join(res.Notes, "\n"), "walked again") {
			t.Errorf("the migration did not reach the walk: %q", res.Notes)
		}
	})
}

// split keeps whole slots together, in order, with at most count keys a
// part unless one slot holds more, and loses nothing.
func TestKeyBatchSplit(t *testing.T) {
	b := &keyBatch{slots: []int{1, 2, 3, 4, 5, 6}, slotKeys: []int64{3, 0, 1, 7, 2, 2}, bad: []int{2}, next: "lost"}
	for i, s := range b.slots {
		for j := range b.slotKeys[i] {
			b.Keys = append(b.Keys, fmt.Sprintf("k%d.%d", s, j))
			b.Slots = append(b.Slots, s)
		}
		b.listed += b.slotKeys[i]
	}
	for count := 1; count <= 16; count++ {
		parts := b.split(count)
		var keys []string
		var slots []int
		var listed int64
		for i, p := range parts {
			keys = append(keys, p.Keys...)
			slots = append(slots, p.slots...)
			listed += p.listed
			if len(p.Keys) > count && len(p.slots) > 1 {
				t.Errorf("count %d: part %d holds %d keys of slots %v", count, i, len(p.Keys), p.slots)
			}
			for j, s := range p.Slots {
				if !strings.HasPrefix(p.Keys[j], fmt.Sprintf("k%d.", s)) {
					t.Errorf("count %d: key %s in slot %d", count, p.Keys[j], s)
				}
			}
			if (p.next == "lost") != (i == len(parts)-1) {
				t.Errorf("count %d: part %d next %q", count, i, p.next)
			}
		}
		if strings.Join(keys, ",") != strings.Join(b.Keys, ",") || fmt.Sprint(slots) != fmt.Sprint(b.slots) || listed != b.listed {
			t.Errorf("count %d: parts hold %v %v, want %v %v", count, keys, slots, b.Keys, b.slots)
		}
	}
}
