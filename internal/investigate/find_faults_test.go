package investigate

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/redistest"
	"github.com/keyguard/keyguard/registry"
)

// faultKeys is the keyspace of the fault tests and the search's rate:
// the search takes about four seconds, so a fault lands in its middle.
func faultKeys() (keys int, rate float64) {
	if testing.Short() {
		return 60_000, 15_000
	}
	return 240_000, 60_000
}

// loadOrders writes n keys order:<i>:total, a tenth of them holding the
// ID 77 as a segment (order:77<i>… do not).
func loadOrders(t *testing.T, c redis.Cmdable, n int) {
	t.Helper()
	ctx := context.Background()
	p := c.Pipeline()
	for i := range n {
		k := fmt.Sprintf("order:%d:total", i)
		if i%10 == 0 {
			k = fmt.Sprintf("order:%d:77:total", i)
		}
		p.Set(ctx, k, i, 0)
		if p.Len() == 2000 {
			if _, err := p.Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
}

// clusterHas lists the keys of every master that hold the segment 77, by
// slot.
func clusterHas(t *testing.T, c *redistest.Cluster) map[string]int {
	t.Helper()
	ctx := context.Background()
	out := map[string]int{}
	for _, s := range c.Nodes {
		sc := s.Client(t)
		role, err := sc.Do(ctx, "ROLE").Slice()
		if err != nil {
			t.Fatal(err)
		}
		if role[0] != "master" {
			continue
		}
		iter := sc.Scan(ctx, 0, "*:77:*", 1000).Iterator()
		for iter.Next(ctx) {
			out[iter.Val()] = int(sc.ClusterKeySlot(ctx, iter.Val()).Val())
		}
		if err := iter.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// A failover and a slot migration during the key search of a 3-master
// Cluster with replicas: the search finds exactly the keys the Cluster
// holds, or names the slots it did not search and finds exactly the keys
// of the others; never a wrong "complete".
func TestFindDuringClusterFaults(t *testing.T) {
	n, rate := faultKeys()
	for _, fault := range []string{"failover", "migration"} {
		t.Run(fault, func(t *testing.T) {
			c := redistest.StartClusterWithReplicas(t, 3, 1)
			rdb := c.Client(t)
			loadOrders(t, rdb, n)
			ctx := context.Background()
			nodes, err := nodesOf(ctx, rdb)
			if err != nil {
				t.Fatal(err)
			}
			type outcome struct {
				s   *search
				err error
			}
			done := make(chan outcome, 1)
			go func() {
				s, err := find(ctx, rdb, nodes, Target{ID: "77"}, ':', 1<<30, DefaultSelf, rate)
				done <- outcome{s, err}
			}()
			// A quarter of the way through the search.
			time.Sleep(time.Duration(float64(n) / rate / 4 * float64(time.Second)))
			switch fault {
			case "failover":
				c.Failover(t, 0)
			case "migration":
				var slots []int
				for s := 4999; s >= 2000; s-- { // from the end: the walk meets slots already moved
					slots = append(slots, s)
				}
				if c.MoveSlots(t, 0, 1, slots) == 0 {
					t.Fatal("no key moved")
				}
			}
			o := <-done
			if o.err != nil {
				t.Fatal(o.err)
			}
			s := o.s
			if !strings.Contains(strings.Join(s.notes, "\n"), "walked again") {
				t.Errorf("the %s did not reach the search: %q", fault, s.notes)
			}
			want := clusterHas(t, c)
			notSearched := map[int]bool{}
			for _, g := range s.coverage.NotCovered {
				if !report.ValidSlotRanges(g.Slots) {
					t.Errorf("a part not searched names no slots: %+v", g)
				}
				for _, sl := range report.ParseSlotRanges(g.Slots) {
					notSearched[sl] = true
				}
			}
			complete := len(s.coverage.NotCovered) == 0
			if complete && (s.coverage.Cluster == nil || s.coverage.Cluster.Slots != report.ClusterSlots) {
				t.Errorf("complete, yet coverage %+v", s.coverage.Cluster)
			}
			got := map[string]bool{}
			for _, f := range s.keys {
				if got[f.key] {
					t.Errorf("%s found twice", f.key)
				}
				got[f.key] = true
				if f.node == nil || f.node.addr == "" {
					t.Errorf("%s found on no node", f.key)
				}
			}
			missing := 0
			for k, slot := range want {
				switch {
				case notSearched[slot]:
					missing++
					if got[k] {
						t.Errorf("%s found in slot %d, named as not searched", k, slot)
					}
				case !got[k]:
					t.Errorf("%s (slot %d) not found, though its slot was searched", k, slot)
				}
			}
			if len(got) != len(want)-missing {
				t.Errorf("complete %v: %d keys found, want %d of %d less %d not searched", complete, len(got), len(want)-missing, len(want), missing)
			}
			t.Logf("complete %v, %d keys, not searched %+v; notes %q", complete, len(got), s.coverage.NotCovered, s.notes)
		})
	}
}

// A server restarted during the key search: the search starts again
// and finds every key once.
func TestFindServerRestarted(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	n, rate := faultKeys()
	n /= 4
	loadOrders(t, rdb, n)
	ctx := context.Background()
	if err := rdb.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	nodes, err := nodesOf(ctx, rdb)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan *search, 1)
	go func() {
		s, err := find(ctx, rdb, nodes, Target{ID: "77"}, ':', 1<<30, DefaultSelf, rate/4)
		if err != nil {
			t.Error(err)
		}
		done <- s
	}()
	time.Sleep(time.Duration(float64(n) / (rate / 4) / 4 * float64(time.Second)))
	srv.Restart(t)
	s := <-done
	if s == nil {
		return
	}
	t.Logf("coverage %+v notes %q", s.coverage.Nodes, s.notes)
	want := n/10 + 1 // and order:77:total
	if len(s.keys) != want || len(s.coverage.NotCovered) != 0 {
		t.Errorf("%d keys found of %d; not covered %+v", len(s.keys), want, s.coverage.NotCovered)
	}
	if !strings.Contains(strings.Join(s.notes, "\n"), "walked again from its first key") {
		t.Errorf("the restart did not reach the search: %q", s.notes)
	}
}

// TestInvestigateClusterMasterDown: a master down (unreachable while the
// Cluster lists it, then marked failed, the Cluster then refusing every
// key with CLUSTERDOWN) leaves a report of what could be seen, not an
// error: the search says what it did not cover, the down node's slow log
// is said unread, and keys the server refused to read are said so,
// never "gone", nor concluded "nothing suspicious".
func TestInvestigateClusterMasterDown(t *testing.T) {
	c := redistest.StartCluster(t, 3, "cluster-node-timeout 60000")
	ctx := context.Background()
	cc := c.Client(t)
	loadOrders(t, cc, 3000)
	down := c.Nodes[2]
	down.Stop()
	reg, err := registry.Parse("keyguard.yaml", []byte("version: 1\nseparator: \":\"\nkeys: []\n"))
	if err != nil {
		t.Fatal(err)
	}
	run := func() *Report {
		t.Helper()
		cl := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs[:2]})
		defer cl.Close()
		rep, err := Run(ctx, reg, cl, Options{Target: Target{ID: "77"}, Watch: 200 * time.Millisecond, SearchRate: 0})
		if err != nil {
			t.Fatalf("no report: %v", err)
		}
		if gaps := rep.NotSearched(); len(gaps) != 1 || !strings.Contains(gaps[0], down.Addr) {
			t.Fatalf("not searched %q", gaps)
		}
		if len(rep.SlowLogNotRead) != 1 || !strings.HasPrefix(rep.SlowLogNotRead[0], down.Addr+": ") {
			t.Errorf("slow log not read: %q", rep.SlowLogNotRead)
		}
		if len(rep.Keys) == 0 {
			t.Fatal("no key found on the masters up")
		}
		return rep
	}
	rep := run()
	for _, k := range rep.Keys {
		if k.Type != "string" || k.NotRead != "" {
			t.Fatalf("a key on a master up, the Cluster up: %+v", k)
		}
	}
	c.Down(t, 2)
	rep = run()
	for _, k := range rep.Keys {
		if !strings.Contains(k.NotRead, "CLUSTERDOWN") || k.Type != "" {
			t.Fatalf("a key the Cluster refused to read: %+v", k)
		}
	}
	var text strings.Builder
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text.String(), "gone") || !strings.Contains(text.String(), "  not read on "+down.Addr+": ") || strings.Contains(text.String(), "nothing suspicious") || !strings.Contains(text.String(), "the server refused to read the "+strconv.Itoa(len(rep.Keys))+" keys found (CLUSTERDOWN") {
		t.Errorf("the text claims what it did not read:\n%s", text.String())
	}
}
