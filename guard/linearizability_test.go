package guard_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/guard"
	"github.com/keyguard/keyguard/internal/guardmodel"
	"github.com/keyguard/keyguard/internal/redistest"
)

// Porcupine checks that the outcomes recorded from real concurrent calls
// are those of some sequential order of the calls, against the guard's
// model in internal/guardmodel (the clients' test checks the other
// languages against the same model).

var namespaces = [2]string{nsOrder, nsPromo}

const linKeys = 3

func linKey(i int) string { return fmt.Sprintf("lin:order:%d:info", i) }

// linOps caps the operations per goroutine: the checker's time grows fast
// with the history, and the machine is shared.
func linOps() int {
	if testing.Short() {
		return 300
	}
	return 1200
}

var fieldNames = [2]string{"amount", "status"}

// linWorker runs random operations until stop and returns its history.
func linWorker(ctx context.Context, t *testing.T, id int, g *guard.Guard, ns int8, keys []string, start time.Time, stop <-chan struct{}) []porcupine.Operation {
	rng := rand.New(rand.NewPCG(uint64(id), 42))
	var hist []porcupine.Operation
	now := func() int64 { return int64(time.Since(start)) }
	record := func(in guardmodel.Input, call int64, out guardmodel.Output) {
		hist = append(hist, porcupine.Operation{ClientId: id, Input: in, Call: call, Output: out, Return: now()})
	}
	fail := func(in guardmodel.Input, err error) guardmodel.Output {
		var ce *guard.ConflictError
		if errors.As(err, &ce) && ce.Owner != "" {
			for i, n := range namespaces {
				if n == ce.Owner {
					return guardmodel.Output{Conflict: true, Owner: int8(i)}
				}
			}
		}
		t.Errorf("%s %s: unexpected error %v", in.Kind, keys[in.Key], err)
		return guardmodel.Unexpected
	}
	fromResult := func(r guard.Result) guardmodel.Output { return guardmodel.Output{Result: r} }
	for seq := 0; seq < linOps(); seq++ {
		// A random pause varies the interleavings and spreads the run over
		// its duration.
		select {
		case <-stop:
			return hist
		case <-time.After(time.Duration(rng.IntN(2000)) * time.Microsecond):
		}
		in := guardmodel.RandomInput(rng, linKeys, ns, id, seq)
		key := keys[in.Key]
		call := now()
		var out guardmodel.Output
		switch in.Kind {
		case guardmodel.Set:
			r, err := g.Set(ctx, key, fieldNames[in.Field], in.Vals[in.Field])
			if out = fromResult(r); err != nil {
				out = fail(in, err)
			}
		case guardmodel.SetBoth:
			r, err := g.SetMany(ctx, key, map[string]any{fieldNames[0]: in.Vals[0], fieldNames[1]: in.Vals[1]})
			if out = fromResult(r); err != nil {
				out = fail(in, err)
			}
		case guardmodel.Batch:
			// A pipelined batch of up to three single-field writes, one op each
			// in the history, all with the batch's call/return window.
			ins := []guardmodel.Input{in}
			for j := rng.IntN(3); j > 0; j-- {
				more := in
				more.Key, more.Field = rng.IntN(linKeys), int8(rng.IntN(2))
				ins = append(ins, more)
			}
			ops := make([]guard.SetOp, len(ins))
			for j, x := range ins {
				ops[j] = guard.SetOp{Key: keys[x.Key], Field: fieldNames[x.Field], Value: x.Vals[x.Field]}
			}
			res, _ := g.SetPipelined(ctx, ops)
			ret := now()
			for j, x := range ins {
				o := fromResult(res[j].Result)
				if res[j].Err != nil {
					o = fail(x, res[j].Err)
				}
				hist = append(hist, porcupine.Operation{ClientId: id, Input: x, Call: call, Output: o, Return: ret})
			}
			continue
		case guardmodel.Get:
			v, found, err := g.Get(ctx, key, fieldNames[in.Field])
			out.Has[in.Field], out.Vals[in.Field] = found, v
			if err != nil {
				out = fail(in, err)
			}
		case guardmodel.GetAll:
			m, err := g.GetAll(ctx, key)
			for f, name := range fieldNames {
				out.Vals[f], out.Has[f] = m[name]
			}
			if err != nil {
				out = fail(in, err)
			}
		case guardmodel.Delete:
			ok, err := g.Delete(ctx, key)
			if out.Deleted = ok; err != nil {
				out = fail(in, err)
			}
		}
		record(in, call, out)
	}
	return hist
}

// runLinearizability: 2 namespaces × 8 goroutines on linKeys keys, while
// another goroutine keeps flushing the script cache so that the NOSCRIPT
// fallbacks (single and pipelined) run concurrently with everything else.
func runLinearizability(t *testing.T, client redis.UniversalClient, keys []string, flush func(context.Context) error) {
	ctx := t.Context()
	for _, k := range keys {
		client.Del(ctx, k)
	}
	run := 3 * time.Second
	if testing.Short() {
		run = time.Second
	}
	start := time.Now()
	stop := make(chan struct{})
	timer := time.AfterFunc(run, func() { close(stop) })
	var workers, flusher sync.WaitGroup
	hists := make([][]porcupine.Operation, 16)
	for id := range hists {
		ns := int8(id % 2)
		g := guard.New(client, namespaces[ns], guard.Options{TTL: time.Hour})
		workers.Go(func() { hists[id] = linWorker(ctx, t, id, g, ns, keys, start, stop) })
	}
	flushes := 0
	flusherStop := make(chan struct{})
	flusher.Go(func() {
		tick := time.NewTicker(25 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-flusherStop:
				return
			case <-tick.C:
				if err := flush(ctx); err != nil {
					t.Errorf("SCRIPT FLUSH: %v", err)
				}
				flushes++
			}
		}
	})
	workers.Wait() // each stops after linOps operations or when run is over
	timer.Stop()
	close(flusherStop)
	flusher.Wait()

	var history []porcupine.Operation
	for _, h := range hists {
		history = append(history, h...)
	}
	t.Logf("%d script flushes", flushes)
	// Every kind of outcome must occur, or the check proves little.
	guardmodel.Check(t, "the guard", history, []string{"set", "set/conflict", "setboth", "batch", "batch/conflict", "get", "getall", "delete", "delete/conflict"})
}

func TestLinearizableStandalone(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	keys := make([]string, linKeys)
	for i := range keys {
		keys[i] = linKey(i)
	}
	runLinearizability(t, rdb, keys, func(ctx context.Context) error { return rdb.ScriptFlush(ctx).Err() })
}

func TestLinearizableCluster(t *testing.T) {
	c := redistest.StartCluster(t, 3)
	cc := c.Client(t)
	// The keys must sit on different masters for the test to mean anything
	// about Cluster routing.
	var keys []string
	seen := map[string]bool{}
	for i := 0; len(keys) < linKeys; i++ {
		k := linKey(i)
		if node := nodeFor(t, cc, cc.ClusterKeySlot(t.Context(), k).Val()); !seen[node] {
			seen[node] = true
			keys = append(keys, k)
		}
	}
	runLinearizability(t, cc, keys, func(ctx context.Context) error { return cc.ScriptFlush(ctx).Err() })
}
