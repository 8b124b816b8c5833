package clients

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/keyguard/keyguard/guard"
	"github.com/keyguard/keyguard/internal/guardmodel"
)

// Concurrent guarded writers in two languages, two namespaces each, on a
// few keys; porcupine checks that the recorded outcomes are those of some
// sequential order of the calls, against the model the Go guard's own
// test checks (internal/guardmodel).

var lNamespaces = [2]string{ownerA, ownerB}
var lFields = [2]string{"amount", "status"}

func TestLinearizableServer(t *testing.T) {
	tg := serverTarget(t)
	for _, langs := range [][2]string{{"python", "ts-ioredis"}, {"java", "ts-node-redis"}, {"go", "python"}} {
		t.Run(langs[0]+"+"+langs[1], func(t *testing.T) { linearizable(t, tg, langs) })
	}
}

func TestLinearizableCluster(t *testing.T) {
	tg := clusterTarget(t)
	for _, langs := range [][2]string{{"python", "java"}, {"ts-ioredis", "go"}} {
		t.Run(langs[0]+"+"+langs[1], func(t *testing.T) { linearizable(t, tg, langs) })
	}
}

const lKeys = 3

func linearizable(t *testing.T, tg *target, langs [2]string) {
	ctx := context.Background()
	keys := make([]string, lKeys)
	for i := range keys {
		keys[i] = fmt.Sprintf("lin:%s:%s:order:%d", langs[0], langs[1], i)
		tg.rdb.Del(ctx, keys[i])
	}
	ops := 400
	if testing.Short() {
		ops = 150
	}
	// Two clients per language, one per namespace: both languages write
	// both namespaces' keys.
	type client struct {
		rt runtime
		ns int8
	}
	var clients []client
	for _, l := range langs {
		for ns := range int8(2) {
			clients = append(clients, client{startRuntime(t, l, tg), ns})
		}
	}
	start := time.Now()
	now := func() int64 { return int64(time.Since(start)) }
	hists := make([][]porcupine.Operation, len(clients))
	// The script cache is flushed all along, so that every language's
	// NOSCRIPT fallback (alone and in batches) runs amid the others.
	flushes := 0
	stopFlush := make(chan struct{})
	var flusher sync.WaitGroup
	flusher.Go(func() {
		tick := time.NewTicker(25 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stopFlush:
				return
			case <-tick.C:
				if err := tg.flushScripts(ctx); err != nil {
					t.Errorf("SCRIPT FLUSH: %v", err)
				}
				flushes++
			}
		}
	})
	var wg sync.WaitGroup
	for id, c := range clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(id), 27))
			for seq := range ops {
				in := guardmodel.RandomInput(rng, lKeys, c.ns, id, seq)
				call := now()
				out := lRun(t, c.rt, keys[in.Key], in)
				hists[id] = append(hists[id], porcupine.Operation{ClientId: id, Input: in, Call: call, Output: out, Return: now()})
			}
		})
	}
	wg.Wait()
	close(stopFlush)
	flusher.Wait()

	var history []porcupine.Operation
	for _, h := range hists {
		history = append(history, h...)
	}
	t.Logf("%d script flushes", flushes)
	guardmodel.Check(t, langs[0]+" and "+langs[1], history, []string{"set", "set/conflict", "setboth", "batch", "get", "getall", "delete", "delete/conflict"})
}

// lRun runs one operation through a runtime and maps its reply.
func lRun(t testing.TB, rt runtime, key string, in guardmodel.Input) guardmodel.Output {
	owner := lNamespaces[in.NS]
	var rep reply
	switch in.Kind {
	case guardmodel.Set:
		rep = rt.Do(t, req{"op": "hset", "owner": owner, "key": key, "fields": map[string]any{lFields[in.Field]: in.Vals[in.Field]}, "ttl_ms": 3_600_000})
	case guardmodel.SetBoth:
		rep = rt.Do(t, req{"op": "hset", "owner": owner, "key": key, "fields": map[string]any{lFields[0]: in.Vals[0], lFields[1]: in.Vals[1]}, "ttl_ms": 3_600_000})
	case guardmodel.Batch:
		rep = rt.Do(t, req{"op": "batch", "owner": owner, "ttl_ms": 3_600_000, "ops": []map[string]any{{"key": key, "fields": map[string]any{lFields[in.Field]: in.Vals[in.Field]}}}})
		if rep.Err == nil {
			var b struct {
				Results []struct {
					OK  json.RawMessage `json:"ok"`
					Err *opErr          `json:"err"`
				}
			}
			if err := json.Unmarshal(rep.OK, &b); err != nil || len(b.Results) != 1 {
				t.Errorf("%s batch reply %s", rt.Name(), rep.OK)
				return guardmodel.Unexpected
			}
			rep = reply{OK: b.Results[0].OK, Err: b.Results[0].Err}
		}
	case guardmodel.Get:
		rep = rt.Do(t, req{"op": "get", "owner": owner, "key": key, "field": lFields[in.Field]})
	case guardmodel.GetAll:
		rep = rt.Do(t, req{"op": "getall", "owner": owner, "key": key})
	case guardmodel.Delete:
		rep = rt.Do(t, req{"op": "delete", "owner": owner, "key": key})
	}
	if rep.Err != nil {
		if rep.Err.Kind == "conflict" {
			for i, n := range lNamespaces {
				if n == rep.Err.Owner {
					return guardmodel.Output{Conflict: true, Owner: int8(i)}
				}
			}
		}
		t.Errorf("%s %s %s: unexpected error %s: %s", rt.Name(), in.Kind, key, rep.Err.Kind, rep.Err.Message)
		return guardmodel.Unexpected
	}
	var out guardmodel.Output
	var res setResult
	var get struct{ Value *string }
	var all struct{ Fields map[string]string }
	var del struct{ Deleted bool }
	dst := map[guardmodel.Kind]any{guardmodel.Set: &res, guardmodel.SetBoth: &res, guardmodel.Batch: &res,
		guardmodel.Get: &get, guardmodel.GetAll: &all, guardmodel.Delete: &del}[in.Kind]
	if err := json.Unmarshal(rep.OK, dst); err != nil { // Errorf: this runs on the workers' goroutines
		t.Errorf("%s %s reply %s: %v", rt.Name(), in.Kind, rep.OK, err)
		return guardmodel.Unexpected
	}
	switch in.Kind {
	case guardmodel.Set, guardmodel.SetBoth, guardmodel.Batch:
		out.Result = guard.Result(res)
	case guardmodel.Get:
		if get.Value != nil {
			out.Has[in.Field], out.Vals[in.Field] = true, *get.Value
		}
	case guardmodel.GetAll:
		for i, f := range lFields {
			out.Vals[i], out.Has[i] = all.Fields[f]
		}
	case guardmodel.Delete:
		out.Deleted = del.Deleted
	}
	return out
}
