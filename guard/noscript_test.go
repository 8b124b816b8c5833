package guard_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/guard"
	"github.com/keyguard/keyguard/internal/redistest"
)

func batch(prefix string, n int, value any) []guard.SetOp {
	ops := make([]guard.SetOp, n)
	for i := range ops {
		key := fmt.Sprintf("%s:%d", prefix, i)
		if i%2 == 0 { // both forms of SetOp
			ops[i] = guard.SetOp{Key: key, Field: "v", Value: value}
		} else {
			ops[i] = guard.SetOp{Key: key, Fields: map[string]any{"v": value}}
		}
	}
	return ops
}

// checkBatch asserts every op of a batch succeeded with the given counts:
// an op that ran twice (resent after it had already run) would show as
// Updated instead of Added, or without Claimed.
func checkBatch(t *testing.T, res []guard.SetResult, err error, want guard.Result) {
	t.Helper()
	if err != nil {
		t.Fatalf("SetPipelined: %v", err)
	}
	for i, r := range res {
		if r.Err != nil || r.Result != want {
			t.Fatalf("op %d = %+v %v, want %+v", i, r.Result, r.Err, want)
		}
	}
}

func scriptLoaded(t *testing.T, c redis.Scripter) bool {
	t.Helper()
	ok, err := c.ScriptExists(t.Context(), guard.ScriptSHA()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return ok[0]
}

func TestNoScriptAfterFlush(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := t.Context()
	g := guard.New(rdb, nsOrder, guard.Options{TTL: time.Hour})

	// Single calls: the first one ever finds no script, as does every call
	// after a SCRIPT FLUSH.
	for i := range 3 {
		rdb.ScriptFlush(ctx)
		key := fmt.Sprint("single:", i)
		if res, err := g.Set(ctx, key, "a", "1"); err != nil || !res.Claimed || res.Added != 1 {
			t.Fatalf("Set after flush = %+v %v", res, err)
		}
		if !scriptLoaded(t, rdb) {
			t.Error("script not cached after the fallback")
		}
		rdb.ScriptFlush(ctx)
		if ok, err := g.Delete(ctx, key); !ok || err != nil {
			t.Fatalf("Delete after flush = %v %v", ok, err)
		}
	}

	// Pipelined: every op answers NOSCRIPT, none ran; all are resent once.
	rdb.ScriptFlush(ctx)
	res, err := g.SetPipelined(ctx, batch("pipe", 100, "x"))
	checkBatch(t, res, err, guard.Result{Added: 1, Claimed: true, TTLSet: true})
	rdb.ScriptFlush(ctx)
	res, err = g.SetPipelined(ctx, batch("pipe", 100, "y"))
	checkBatch(t, res, err, guard.Result{Updated: 1})
	if v := rdb.HGet(ctx, "pipe:99", "v").Val(); v != "y" {
		t.Errorf("pipe:99 v = %q", v)
	}

	// A batch mixing a conflict, a reserved field and NOSCRIPT: each op gets
	// its own outcome.
	rdb.ScriptFlush(ctx)
	rdb.HSet(ctx, "foreign", guard.ReservedField, nsPromo)
	ops := append(batch("mixed", 3, "z"),
		guard.SetOp{Key: "foreign", Fields: map[string]any{"v": 1}},
		guard.SetOp{Key: "reserved", Fields: map[string]any{guard.ReservedField: 1}})
	res, err = g.SetPipelined(ctx, ops)
	if err == nil {
		t.Fatal("mixed batch: no error")
	}
	for i := range 3 {
		if res[i].Err != nil || !res[i].Claimed {
			t.Errorf("mixed op %d = %+v", i, res[i])
		}
	}
	if conflictOf(t, res[3].Err).Owner != nsPromo {
		t.Errorf("foreign op = %v", res[3].Err)
	}
	if !errors.Is(res[4].Err, guard.ErrReservedField) {
		t.Errorf("reserved op = %v", res[4].Err)
	}
}

func TestNoScriptAfterRestart(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	g := guard.New(rdb, nsOrder, guard.Options{TTL: time.Hour})
	if _, err := g.Set(ctx, "before", "a", "1"); err != nil {
		t.Fatal(err)
	}
	srv.Restart(t) // a restarted server has an empty script cache
	// The pooled connections died with the old process; go-redis redials.
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Logf("first command after restart: %v", err)
	}
	if scriptLoaded(t, rdb) {
		t.Fatal("script survived the restart; the test proves nothing")
	}
	res, err := g.SetPipelined(ctx, batch("after", 50, 1))
	checkBatch(t, res, err, guard.Result{Added: 1, Claimed: true, TTLSet: true})

	srv.Restart(t)
	_ = rdb.Ping(ctx).Err()
	if res, err := g.Set(ctx, "after:single", "a", "1"); err != nil || !res.Claimed {
		t.Fatalf("Set after restart = %+v %v", res, err)
	}
}

func TestCluster(t *testing.T) {
	c := redistest.StartCluster(t, 3)
	cc := c.Client(t)
	ctx := t.Context()
	order := guard.New(cc, nsOrder, guard.Options{TTL: time.Hour})
	promo := guard.New(cc, nsPromo, guard.Options{TTL: time.Hour})

	// Keys spread over every master.
	ops := batch("order:order", 60, "v")
	nodes := map[string]int{}
	for _, op := range ops {
		slot := cc.ClusterKeySlot(ctx, op.Key).Val()
		nodes[nodeFor(t, cc, slot)]++
	}
	if len(nodes) != 3 {
		t.Fatalf("keys landed on %d nodes (%v), want 3", len(nodes), nodes)
	}

	// The script is not loaded anywhere yet: the pipeline falls back.
	res, err := order.SetPipelined(ctx, ops)
	checkBatch(t, res, err, guard.Result{Added: 1, Claimed: true, TTLSet: true})
	for _, op := range ops[:10] {
		_, err := promo.Set(ctx, op.Key, "v", "x")
		if conflictOf(t, err).Owner != nsOrder {
			t.Errorf("cluster conflict = %v", err)
		}
	}

	// Lose the script on one node only (as after a failover to a replica
	// that never loaded it): only the ops routed there are resent.
	node := c.Nodes[1]
	nc := redis.NewClient(&redis.Options{Addr: node.Addr})
	t.Cleanup(func() { _ = nc.Close() })
	nc.ScriptFlush(ctx)
	res, err = order.SetPipelined(ctx, batch("order:order", 60, "w"))
	checkBatch(t, res, err, guard.Result{Updated: 1})
	if !scriptLoaded(t, nc) {
		t.Error("script not reloaded on the flushed node")
	}

	// Single calls after a cluster-wide flush.
	cc.ScriptFlush(ctx)
	for _, op := range ops {
		if res, err := order.Set(ctx, op.Key, "v", "s"); err != nil || res.Updated != 1 {
			t.Fatalf("single Set after flush = %+v %v", res, err)
		}
	}
	for _, op := range ops {
		if v, ok, err := order.Get(ctx, op.Key, "v"); v != "s" || !ok || err != nil {
			t.Fatalf("Get %s = %q %v %v", op.Key, v, ok, err)
		}
		if ok, err := order.Delete(ctx, op.Key); !ok || err != nil {
			t.Fatalf("Delete %s = %v %v", op.Key, ok, err)
		}
	}

	// Best-effort mode on Cluster: pipelines split per node too.
	be := guard.New(cc, nsOrder, guard.Options{TTL: time.Hour, BestEffort: true})
	res, err = be.SetPipelined(ctx, batch("be", 30, 1))
	checkBatch(t, res, err, guard.Result{Added: 1, Claimed: true, TTLSet: true})
}

func nodeFor(t *testing.T, cc *redis.ClusterClient, slot int64) string {
	t.Helper()
	slots, err := cc.ClusterSlots(t.Context()).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range slots {
		if int64(s.Start) <= slot && slot <= int64(s.End) {
			return s.Nodes[0].Addr
		}
	}
	t.Fatalf("slot %d not served", slot)
	return ""
}

// pipeRecorder is a go-redis hook recording the command names of every
// pipeline, and running afterLoad after each SCRIPT LOAD.
type pipeRecorder struct {
	mu        sync.Mutex
	pipes     [][]string
	afterLoad func(ctx context.Context)
}

func (r *pipeRecorder) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r *pipeRecorder) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if args := cmd.Args(); len(args) > 1 && cmd.Name() == "script" && args[1] == "load" && r.afterLoad != nil {
			r.afterLoad(ctx)
		}
		return err
	}
}

func (r *pipeRecorder) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		var names []string
		for _, c := range cmds {
			if c.Name() != "client" { // connection set-up (CLIENT SETINFO) on new connections
				names = append(names, c.Name())
			}
		}
		if len(names) == 0 {
			return next(ctx, cmds)
		}
		r.mu.Lock()
		r.pipes = append(r.pipes, names)
		r.mu.Unlock()
		return next(ctx, cmds)
	}
}

// summary renders the pipelines as "evalsha×10 eval×3 | …".
func (r *pipeRecorder) summary() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var parts []string
	for _, p := range r.pipes {
		var s []string
		for i := 0; i < len(p); {
			j := i
			for j < len(p) && p[j] == p[i] {
				j++
			}
			s = append(s, fmt.Sprintf("%s×%d", p[i], j-i))
			i = j
		}
		parts = append(parts, strings.Join(s, " "))
	}
	return strings.Join(parts, " | ")
}

// The script is flushed again right after the guard reloaded it: the resent
// EVALSHAs miss it once more, and the guard falls back to EVAL for them.
func TestNoScriptFlushRacesReload(t *testing.T) {
	srv := redistest.Start(t)
	rdb, flusher := srv.Client(t), srv.Client(t)
	rec := &pipeRecorder{afterLoad: func(ctx context.Context) { flusher.ScriptFlush(ctx) }}
	rdb.AddHook(rec)
	g := guard.New(rdb, nsOrder, guard.Options{TTL: time.Hour})
	res, err := g.SetPipelined(t.Context(), batch("race", 20, 1))
	checkBatch(t, res, err, guard.Result{Added: 1, Claimed: true, TTLSet: true})
	if got, want := rec.summary(), "evalsha×20 | evalsha×20 | eval×20"; got != want {
		t.Errorf("pipelines = %q, want %q", got, want)
	}
}

// On Cluster, losing the script on one master resends only the ops routed
// to it.
func TestClusterResendsOnlyFailedOps(t *testing.T) {
	c := redistest.StartCluster(t, 3)
	cc := c.Client(t)
	ctx := t.Context()
	g := guard.New(cc, nsOrder, guard.Options{TTL: time.Hour})
	ops := batch("resend", 60, 1)
	res, err := g.SetPipelined(ctx, ops)
	checkBatch(t, res, err, guard.Result{Added: 1, Claimed: true, TTLSet: true})

	flushed := c.Nodes[2].Addr
	onFlushed := 0
	for _, op := range ops {
		if nodeFor(t, cc, cc.ClusterKeySlot(ctx, op.Key).Val()) == flushed {
			onFlushed++
		}
	}
	nc := redis.NewClient(&redis.Options{Addr: flushed})
	t.Cleanup(func() { _ = nc.Close() })
	nc.ScriptFlush(ctx)

	rec := &pipeRecorder{}
	cc.AddHook(rec)
	res, err = g.SetPipelined(ctx, batch("resend", 60, 2))
	checkBatch(t, res, err, guard.Result{Updated: 1})
	if got, want := rec.summary(), fmt.Sprintf("evalsha×60 | evalsha×%d", onFlushed); got != want {
		t.Errorf("pipelines = %q, want %q", got, want)
	}
}
