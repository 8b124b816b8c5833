package migrate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestCleanupNeverLosesBothCopies runs cleanup while a second client
// deletes and rewrites random new keys, a few thousand times a second. On
// one server a key's delete and the check of its new key are one script;
// across Cluster slots the old key goes to a tombstone. Afterwards no key
// may have both copies gone (a tombstone counts), and on the Cluster every
// tombstone must come back with Restore, value and expiry intact.
func TestCleanupNeverLosesBothCopies(t *testing.T) {
	ctx := context.Background()
	n := 4000
	if testing.Short() {
		n = 1500
	}
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			flush(t, ctx, tg.rdb)
			rdb := tg.rdb
			fill(t, ctx, rdb, "string", n)
			p := plan(t, "old:string:{id}", "new:string:{id}")
			if res, err := p.Copy(ctx, rdb, Options{}); err != nil || res.Counts.Copied != int64(n) {
				t.Fatalf("copy: %+v %v", res, err)
			}
			deadline := make([]int64, n)
			for i := range n {
				deadline[i] = pexpiretime(ctx, rdb, fmt.Sprintf("old:string:%d", i))
			}

			stop := make(chan struct{})
			var dels, puts atomic.Int64
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				adversary(ctx, rdb, tg.cluster, n, deadline, stop, &dels, &puts)
			}()
			res, err := p.Cleanup(ctx, rdb, Options{Rate: 2000})
			close(stop)
			wg.Wait()
			if err != nil || !res.Complete {
				t.Fatalf("cleanup: %+v %v", res, err)
			}
			t.Logf("cleanup %+v; the other client deleted %d and rewrote %d new keys", res.Counts, dels.Load(), puts.Load())
			if dels.Load() == 0 || res.Counts.Removed == 0 || res.Counts.Mismatched+res.Counts.Changed == 0 {
				t.Fatalf("the run did not race: %d deletes, counts %+v", dels.Load(), res.Counts)
			}
			if tg.cluster != (res.Counts.Tombstoned > 0) {
				t.Errorf("tombstoned %d on cluster=%v", res.Counts.Tombstoned, tg.cluster)
			}
			var c cleaner
			tombs := 0
			for i := range n {
				old, nw := fmt.Sprintf("old:string:%d", i), fmt.Sprintf("new:string:%d", i)
				tomb := c.tombs.name(old, false, deadline[i])
				e := rdb.Exists(ctx, old).Val() + rdb.Exists(ctx, nw).Val()
				if tg.cluster {
					tb := rdb.Exists(ctx, tomb).Val()
					tombs += int(tb)
					e += tb
				}
				if e == 0 {
					t.Errorf("%s: both copies are gone", old)
				}
			}
			if !tg.cluster {
				return
			}
			if tombs == 0 || int64(tombs) > res.Counts.Tombstoned {
				t.Errorf("%d tombstones on the Cluster, cleanup counted %d", tombs, res.Counts.Tombstoned)
			}
			if v, err := p.Verify(ctx, rdb, Options{}); err != nil || v.Tombstones != int64(tombs) {
				t.Errorf("verify counts %d tombstones, there are %d (%v)", v.Tombstones, tombs, err)
			}
			rres, err := p.Restore(ctx, rdb, Options{})
			if err != nil || rres.Counts.Restored != int64(tombs) || rres.Counts.Existing+rres.Counts.Expired != 0 {
				t.Fatalf("restore of %d tombstones: %+v %v", tombs, rres.Counts, err)
			}
			for i := range n {
				old := fmt.Sprintf("old:string:%d", i)
				if rdb.Exists(ctx, old).Val() == 0 {
					continue
				}
				if v := rdb.Get(ctx, old).Val(); v != fmt.Sprintf("value-%d", i) {
					t.Errorf("%s restored as %q", old, v)
				}
				if d := pexpiretime(ctx, rdb, old); d != deadline[i] {
					t.Errorf("%s restored with expiry %d, had %d", old, d, deadline[i])
				}
			}
			if left := scanCount(t, ctx, rdb, TombPrefix+"*"); left != 0 {
				t.Errorf("%d tombstones left after restore", left)
			}
		})
	}
}

// adversary deletes a random new key or writes it again (the old key's
// value and expiry), in pipelines of 8, until stop. On one node a delete
// happens only while the old key exists (one script), so a key found with
// both copies gone afterwards was lost by cleanup, not by this client.
func adversary(ctx context.Context, rdb redis.UniversalClient, cluster bool, n int, deadline []int64, stop chan struct{}, dels, puts *atomic.Int64) {
	const script = `if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if ARGV[1] == 'del' then return redis.call('DEL', KEYS[2]) end
return redis.call('COPY', KEYS[1], KEYS[2], 'REPLACE')`
	r := rand.New(rand.NewPCG(1, 2))
	for {
		select {
		case <-stop:
			return
		default:
		}
		pipe := rdb.Pipeline()
		for range 16 {
			i := r.IntN(n)
			old, nw := fmt.Sprintf("old:string:%d", i), fmt.Sprintf("new:string:%d", i)
			del := r.IntN(3) > 0
			switch {
			case !cluster && del:
				pipe.Eval(ctx, script, []string{old, nw}, "del")
			case !cluster:
				pipe.Eval(ctx, script, []string{old, nw}, "put")
			case del:
				pipe.Del(ctx, nw)
			case deadline[i] > 0:
				pipe.Set(ctx, nw, fmt.Sprintf("value-%d", i), 0)
				pipe.PExpireAt(ctx, nw, time.UnixMilli(deadline[i]))
			default:
				pipe.Set(ctx, nw, fmt.Sprintf("value-%d", i), 0)
			}
			if del {
				dels.Add(1)
			} else {
				puts.Add(1)
			}
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// pexpiretime is PEXPIRETIME as the server answers it (-1 no expiry, -2
// no key); go-redis's DurationCmd turns those into nanoseconds.
func pexpiretime(ctx context.Context, rdb redis.UniversalClient, key string) int64 {
	v, _ := rdb.Do(ctx, "pexpiretime", key).Int64()
	return v
}

func flush(t *testing.T, ctx context.Context, rdb redis.UniversalClient) {
	t.Helper()
	nodes, err := discover(ctx, rdb)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if err := n.c.FlushAll(ctx).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

func scanCount(t *testing.T, ctx context.Context, rdb redis.UniversalClient, match string) int {
	t.Helper()
	nodes, err := discover(ctx, rdb)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, n := range nodes {
		iter := n.c.Scan(ctx, 0, match, 1000).Iterator()
		for iter.Next(ctx) {
			total++
		}
		if err := iter.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return total
}

// testCleanupNewKeyChanged deletes, rewrites and re-expires new keys
// between the check and the delete: the old keys stay (on one node the
// script sees it; across slots the second check puts them back from
// their tombstones, with their expiry).
func testCleanupNewKeyChanged(t *testing.T, ctx context.Context, tg target) {
	rdb := tg.rdb
	for i := 1; i <= 3; i++ {
		rdb.Set(ctx, fmt.Sprintf("old:string:%d", i), i, time.Duration(i)*time.Hour)
	}
	rdb.HSet(ctx, "promo:sku:1", "couponAmount", "1", "x", "y")
	rdb.PExpire(ctx, "promo:sku:1", 10*time.Minute)
	p := plan(t, "old:string:{id}", "new:string:{id}")
	fp := plan(t, "promo:sku:{skuId:int}", "order:sku:{skuId:int}:settle-preview", "couponAmount")
	for _, p := range []*Plan{p, fp} {
		if _, err := p.Copy(ctx, rdb, Options{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		p     *Plan
		pairs []pair
		spoil func()
	}{
		{p, []pair{{old: "old:string:1", new: "new:string:1"}, {old: "old:string:2", new: "new:string:2"}, {old: "old:string:3", new: "new:string:3"}}, func() {
			rdb.Del(ctx, "new:string:1")
			rdb.Set(ctx, "new:string:2", "other", redis.KeepTTL)
			rdb.PExpire(ctx, "new:string:3", time.Minute)
		}},
		{fp, []pair{{old: "promo:sku:1", new: "order:sku:1:settle-preview"}}, func() {
			rdb.HSet(ctx, "order:sku:1:settle-preview", "couponAmount", "9")
		}},
	} {
		c := &cleaner{v: newVerifier(newJob(opCleanup, tc.p, rdb, Options{}))}
		c.v.j.opts.defaults()
		for i := range tc.pairs {
			tc.pairs[i].same = !tg.cluster
		}
		var before []int64
		for _, pr := range tc.pairs {
			before = append(before, pexpiretime(ctx, rdb, pr.old))
		}
		// What batch does, with the new keys spoilt between the check and
		// the delete.
		vs, err := c.v.check(ctx, tc.pairs)
		if err != nil {
			t.Fatal(err)
		}
		tc.spoil()
		var n Counts
		if err := c.retire(ctx, tc.pairs, vs, &n); err != nil {
			t.Fatal(err)
		}
		if n.Removed != 0 || n.Changed != int64(len(tc.pairs)) {
			t.Errorf("%s: %+v, want every key left as changed", tc.p.From, n)
		}
		for i, pr := range tc.pairs {
			if rdb.Exists(ctx, pr.old).Val() != 1 {
				t.Errorf("%s is gone although its new key changed", pr.old)
			} else if d := pexpiretime(ctx, rdb, pr.old); d != before[i] {
				t.Errorf("%s expires at %d, before at %d", pr.old, d, before[i])
			}
		}
		if tc.p.Fields != nil && rdb.HGet(ctx, "promo:sku:1", "couponAmount").Val() != "1" {
			t.Error("the moved field is not back in the old hash")
		}
	}
	if left := scanCount(t, ctx, rdb, TombPrefix+"*"); left != 0 {
		t.Errorf("%d tombstones left", left)
	}
}
