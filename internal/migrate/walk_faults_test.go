package migrate

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/keyslot"
	"github.com/keyguard/keyguard/internal/redistest"
)

// faultKeys is the old keys of the fault tests and the copy's rate: the
// copy takes about four seconds, so a fault lands in its middle.
func faultKeys() (n int, rate float64) {
	if testing.Short() {
		return 20_000, 5_000
	}
	return 200_000, 50_000
}

// loadStrings writes old:string:<i> for i < n, and as many keys of no
// template, which the walk lists and the copy leaves alone.
func loadStrings(t *testing.T, rdb redis.UniversalClient, n int) {
	t.Helper()
	ctx := context.Background()
	p := rdb.Pipeline()
	for i := range n {
		p.Set(ctx, fmt.Sprintf("old:string:%d", i), i, time.Hour)
		p.Set(ctx, fmt.Sprintf("other:%d", i), i, 0)
		if p.Len() >= 2000 {
			if _, err := p.Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
}

// copyDuring copies old:string:{id} to new:string:{id} and runs fault a
// quarter of the way through.
func copyDuring(t *testing.T, rdb redis.UniversalClient, n int, rate float64, fault func()) *Result {
	t.Helper()
	p := plan(t, "old:string:{id}", "new:string:{id}")
	type outcome struct {
		res *Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := p.Copy(context.Background(), rdb, Options{Rate: rate, Batch: 100})
		done <- outcome{res, err}
	}()
	time.Sleep(time.Duration(float64(n) / rate / 4 * float64(time.Second)))
	fault()
	o := <-done
	if o.err != nil {
		t.Fatalf("copy: %v (%+v)", o.err, o.res)
	}
	return o.res
}

// A failover and a slot migration while migrate copies on a 3-master
// Cluster with replicas: the copy is complete, with every old key counted
// once and copied, or names the slots it did not walk and counts exactly
// the old keys of the others; never a wrong "complete".
func TestCopyDuringClusterFaults(t *testing.T) {
	n, rate := faultKeys()
	ctx := context.Background()
	for _, fault := range []string{"failover", "migration"} {
		t.Run(fault, func(t *testing.T) {
			c := redistest.StartClusterWithReplicas(t, 3, 1)
			rdb := c.Client(t)
			loadStrings(t, rdb, n)
			res := copyDuring(t, rdb, n, rate, func() {
				switch fault {
				case "failover":
					c.Failover(t, 0)
				case "migration":
					var slots []int
					for s := 2000; s < 5000; s++ {
						slots = append(slots, s)
					}
					if c.MoveSlots(t, 0, 1, slots) == 0 {
						t.Fatal("no key moved")
					}
				}
			})
			if !strings.Contains(strings.Join(res.Notes, "\n"), "walked again") {
				t.Errorf("the %s did not reach the copy: %q", fault, res.Notes)
			}
			if res.Coverage == nil || res.Coverage.Cluster == nil {
				t.Fatalf("no Cluster coverage: %+v", res.Coverage)
			}
			notWalked := map[int]bool{}
			for _, g := range res.Coverage.NotCovered {
				if !report.ValidSlotRanges(g.Slots) {
					t.Errorf("a part not covered names no slots: %+v", g)
				}
				for _, s := range report.ParseSlotRanges(g.Slots) {
					notWalked[s] = true
				}
			}
			if res.Complete != (len(notWalked) == 0) {
				t.Errorf("complete %v, yet not covered %+v", res.Complete, res.Coverage.NotCovered)
			}
			want := 0
			for i := range n {
				old := fmt.Sprintf("old:string:%d", i)
				if notWalked[keyslot.Slot(old)] {
					continue
				}
				want++
				if rdb.Exists(ctx, fmt.Sprintf("new:string:%d", i)).Val() != 1 {
					t.Fatalf("%s was walked but not copied", old)
				}
			}
			if res.Counts.Keys != int64(want) || res.Counts.Copied != int64(want) {
				t.Errorf("complete %v: %d old keys counted, %d copied; want %d each (%d in slots not walked)", res.Complete, res.Counts.Keys, res.Counts.Copied, want, n-want)
			}
			t.Logf("complete %v, counts %+v, not covered %+v", res.Complete, res.Counts, res.Coverage.NotCovered)
		})
	}
}

// A server restarted (saved, stopped, started on its port) while migrate
// copies: its keys are walked again from the first, the counts are those
// of the walk after the restart, and every old key has its new key.
func TestCopyServerRestarted(t *testing.T) {
	n, rate := faultKeys()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	loadStrings(t, rdb, n)
	ctx := context.Background()
	res := copyDuring(t, rdb, n, rate, func() {
		if err := rdb.Save(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		srv.Restart(t)
	})
	if !res.Complete || res.Counts.Keys != int64(n) || res.Counts.Copied+res.Counts.Existing != int64(n) {
		t.Errorf("complete %v, counts %+v; want %d keys, each copied or found", res.Complete, res.Counts, n)
	}
	if !strings.Contains(strings.Join(res.Notes, "\n"), "restarted during the run") {
		t.Errorf("no note of the restart: %q", res.Notes)
	}
	for i := range n {
		if rdb.Exists(ctx, fmt.Sprintf("new:string:%d", i)).Val() != 1 {
			t.Fatalf("new:string:%d missing after the copy", i)
		}
	}
}
