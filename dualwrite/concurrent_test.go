package dualwrite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/migrate"
)

// TestWritersDuringCopy runs writers that dual-write through the SDK while
// keyguard migrate copy runs over the same keys, then checks every key
// against the writers' log: the new key holds the latest acknowledged
// value (no lost update), the old key too, and verify finds no mismatch.
// Strings are written whole with Replace (on a Cluster across two slots),
// lists grow with Update (one slot per pair).
func testWritersDuringCopy(t *testing.T, ctx context.Context, tg target) {
	keys, writers, rate := 1500, 6, 4000.0
	if testing.Short() {
		keys, rate = 600, 2000
	}
	rdb := tg.rdb
	fill := rdb.Pipeline()
	for i := range keys {
		fill.Set(ctx, "old:s:"+strconv.Itoa(i), "init", time.Hour)
		fill.RPush(ctx, fmt.Sprintf("tag:{l%d}:old", i), "init")
	}
	if _, err := fill.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	sp := testPlan(t, "old:s:{id}", "new:s:{id}")
	lp := testPlan(t, "tag:{{l{id}}}:old", "tag:{{l{id}}}:new")
	sw, err := NewWriter(rdb, sp, Options{})
	if err != nil {
		t.Fatal(err)
	}
	lw, err := NewWriter(rdb, lp, Options{})
	if err != nil {
		t.Fatal(err)
	}

	// The writers' log: the last string and every pushed element, per key.
	last := make([]string, keys)
	pushed := make([][]string, keys)
	for i := range keys {
		last[i], pushed[i] = "init", []string{"init"}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var writes [2]atomic.Int64
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for seq := 0; ; seq++ {
				select {
				case <-stop:
					return
				default:
				}
				i := rng.IntN(keys/writers)*writers + w // this writer's keys only
				v := fmt.Sprintf("w%d-%d", w, seq)
				if seq%2 == 0 {
					if _, err := sw.Replace(ctx, "old:s:"+strconv.Itoa(i), set(v)); err != nil {
						t.Error(err)
						return
					}
					last[i] = v
				} else {
					if _, err := lw.Update(ctx, fmt.Sprintf("tag:{l%d}:old", i), func(p redis.Pipeliner, key string) { p.RPush(ctx, key, v) }); err != nil {
						t.Error(err)
						return
					}
					pushed[i] = append(pushed[i], v)
				}
				writes[seq%2].Add(1)
			}
		}()
	}
	var copies [2]*migrate.Result
	var cerr [2]error
	var cw sync.WaitGroup
	for k, p := range []*migrate.Plan{{Plan: sp}, {Plan: lp}} {
		cw.Add(1)
		go func() {
			defer cw.Done()
			copies[k], cerr[k] = p.Copy(ctx, rdb, migrate.Options{Rate: rate, Batch: 50})
		}()
	}
	cw.Wait()
	close(stop)
	wg.Wait()
	for k := range copies {
		if cerr[k] != nil || !copies[k].Complete {
			t.Fatalf("copy %d: %+v %v", k, copies[k], cerr[k])
		}
	}
	t.Logf("%d Replace and %d Update writes during the copies; copy counts %+v, %+v", writes[0].Load(), writes[1].Load(), copies[0].Counts, copies[1].Counts)
	if copies[0].Counts.Existing == 0 || copies[0].Counts.Copied == 0 {
		t.Errorf("the writers and the copy did not meet: %+v", copies[0].Counts)
	}

	for i := range keys {
		for _, k := range []string{"old:s:" + strconv.Itoa(i), "new:s:" + strconv.Itoa(i)} {
			if got := rdb.Get(ctx, k).Val(); got != last[i] {
				t.Fatalf("%s = %q, the writers' last value is %q", k, got, last[i])
			}
		}
		for _, k := range []string{fmt.Sprintf("tag:{l%d}:old", i), fmt.Sprintf("tag:{l%d}:new", i)} {
			if got := rdb.LRange(ctx, k, 0, -1).Val(); !slices.Equal(got, pushed[i]) {
				t.Fatalf("%s = %v, the writers pushed %v", k, got, pushed[i])
			}
		}
	}
	for _, p := range []*migrate.Plan{{Plan: sp}, {Plan: lp}} {
		v, err := p.Verify(ctx, rdb, migrate.Options{})
		if err != nil || v.Counts.Mismatched != 0 || v.Counts.Verified != int64(keys) {
			t.Errorf("verify %s: %+v %v", p.From, v.Counts, v.Mismatches)
		}
	}
}
