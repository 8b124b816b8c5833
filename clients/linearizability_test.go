package clients

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// Concurrent guarded writers in two languages, two namespaces each, on a
// few keys; porcupine (the checker of the Go guard's own test) checks that
// the recorded outcomes are those of some sequential order of the calls.
// The model, per key: the owner and the two business fields.

type lKind uint8

const (
	lSet     lKind = iota // hset of one field
	lSetBoth              // hset of both fields
	lBatch                // one field through the pipelined batch
	lGet
	lGetAll
	lDelete
)

var lNames = [...]string{"set", "setboth", "batch", "get", "getall", "delete"}

type lIn struct {
	kind  lKind
	key   int
	ns    int8
	field int8
	vals  [2]string
}

type lOut struct {
	conflict bool
	owner    int8 // the owner a conflict reported; -2 for an unexpected error
	res      setResult
	has      [2]bool
	vals     [2]string
	deleted  bool
}

type lState struct {
	owner int8 // -1: the key does not exist
	has   [2]bool
	vals  [2]string
}

var lNamespaces = [2]string{ownerA, ownerB}
var lFields = [2]string{"amount", "status"}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func lStep(state, input, output any) (bool, any) {
	s, in, out := state.(lState), input.(lIn), output.(lOut)
	if s.owner >= 0 && s.owner != in.ns {
		return out.conflict && out.owner == s.owner, s
	}
	if out.conflict {
		return false, s
	}
	fresh := s.owner < 0
	next := s
	next.owner = in.ns
	r := out.res
	switch in.kind {
	case lSet, lBatch:
		f := in.field
		ok := r.Added == b2i(!s.has[f]) && r.Updated == b2i(s.has[f]) && r.Claimed == fresh && !r.Adopted && r.TTLSet == fresh
		next.has[f], next.vals[f] = true, in.vals[f]
		return ok, next
	case lSetBoth:
		ok := r.Added == b2i(!s.has[0])+b2i(!s.has[1]) && r.Updated == b2i(s.has[0])+b2i(s.has[1]) &&
			r.Claimed == fresh && !r.Adopted && r.TTLSet == fresh
		next.has, next.vals = [2]bool{true, true}, in.vals
		return ok, next
	case lGet:
		f := in.field
		return out.has[f] == s.has[f] && out.vals[f] == s.vals[f], s
	case lGetAll:
		return out.has == s.has && out.vals == s.vals, s
	case lDelete:
		return out.deleted == !fresh, lState{owner: -1}
	}
	return false, s
}

var lModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[int][]porcupine.Operation{}
		for _, op := range history {
			k := op.Input.(lIn).key
			byKey[k] = append(byKey[k], op)
		}
		var out [][]porcupine.Operation
		for _, ops := range byKey {
			out = append(out, ops)
		}
		return out
	},
	Init: func() any { return lState{owner: -1} },
	Step: lStep,
	DescribeOperation: func(input, output any) string {
		in, out := input.(lIn), output.(lOut)
		if out.conflict {
			return fmt.Sprintf("%s k%d ns%d -> conflict(ns%d)", lNames[in.kind], in.key, in.ns, out.owner)
		}
		return fmt.Sprintf("%s k%d ns%d f%d %v -> %+v", lNames[in.kind], in.key, in.ns, in.field, in.vals, out)
	},
	DescribeState: func(state any) string { return fmt.Sprintf("%+v", state.(lState)) },
}

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
				in := lIn{key: rng.IntN(lKeys), ns: c.ns, field: int8(rng.IntN(2)),
					vals: [2]string{fmt.Sprintf("%d.%d.a", id, seq), fmt.Sprintf("%d.%d.b", id, seq)}}
				switch p := rng.IntN(100); {
				case p < 30:
					in.kind = lSet
				case p < 40:
					in.kind = lSetBoth
				case p < 50:
					in.kind = lBatch
				case p < 70:
					in.kind = lGet
				case p < 85:
					in.kind = lGetAll
				default:
					in.kind = lDelete
				}
				call := now()
				out := lRun(t, c.rt, keys[in.key], in)
				hists[id] = append(hists[id], porcupine.Operation{ClientId: id, Input: in, Call: call, Output: out, Return: now()})
			}
		})
	}
	wg.Wait()
	close(stopFlush)
	flusher.Wait()

	var history []porcupine.Operation
	counts := map[string]int{}
	for _, h := range hists {
		history = append(history, h...)
		for _, op := range h {
			name := lNames[op.Input.(lIn).kind]
			if op.Output.(lOut).conflict {
				name += "/conflict"
			}
			counts[name]++
		}
	}
	t.Logf("%d operations, %d script flushes: %v", len(history), flushes, counts)
	for _, name := range []string{"set", "set/conflict", "setboth", "batch", "get", "getall", "delete", "delete/conflict"} {
		if counts[name] == 0 {
			t.Errorf("no %q operation in the history; the check proves little", name)
		}
	}
	res, info := porcupine.CheckOperationsVerbose(lModel, history, 2*time.Minute)
	if res != porcupine.Ok {
		path := filepath.Join(t.TempDir(), "clients-linearizability.html")
		if f, err := os.Create(path); err == nil && res == porcupine.Illegal {
			_ = porcupine.Visualize(lModel, info, f)
			f.Close()
		}
		t.Fatalf("history of %s and %s is not linearizable (%v); see %s", langs[0], langs[1], res, path)
	}
}

// lRun runs one operation through a runtime and maps its reply.
func lRun(t testing.TB, rt runtime, key string, in lIn) lOut {
	owner := lNamespaces[in.ns]
	var rep reply
	switch in.kind {
	case lSet:
		rep = rt.Do(t, req{"op": "hset", "owner": owner, "key": key, "fields": map[string]any{lFields[in.field]: in.vals[in.field]}, "ttl_ms": 3_600_000})
	case lSetBoth:
		rep = rt.Do(t, req{"op": "hset", "owner": owner, "key": key, "fields": map[string]any{lFields[0]: in.vals[0], lFields[1]: in.vals[1]}, "ttl_ms": 3_600_000})
	case lBatch:
		rep = rt.Do(t, req{"op": "batch", "owner": owner, "ttl_ms": 3_600_000, "ops": []map[string]any{{"key": key, "fields": map[string]any{lFields[in.field]: in.vals[in.field]}}}})
		if rep.Err == nil {
			var b struct {
				Results []struct {
					OK  json.RawMessage `json:"ok"`
					Err *opErr          `json:"err"`
				}
			}
			if err := json.Unmarshal(rep.OK, &b); err != nil || len(b.Results) != 1 {
				t.Errorf("%s batch reply %s", rt.Name(), rep.OK)
				return lOut{conflict: true, owner: -2}
			}
			rep = reply{OK: b.Results[0].OK, Err: b.Results[0].Err}
		}
	case lGet:
		rep = rt.Do(t, req{"op": "get", "owner": owner, "key": key, "field": lFields[in.field]})
	case lGetAll:
		rep = rt.Do(t, req{"op": "getall", "owner": owner, "key": key})
	case lDelete:
		rep = rt.Do(t, req{"op": "delete", "owner": owner, "key": key})
	}
	if rep.Err != nil {
		if rep.Err.Kind == "conflict" {
			for i, n := range lNamespaces {
				if n == rep.Err.Owner {
					return lOut{conflict: true, owner: int8(i)}
				}
			}
		}
		t.Errorf("%s %s %s: unexpected error %s: %s", rt.Name(), lNames[in.kind], key, rep.Err.Kind, rep.Err.Message)
		return lOut{conflict: true, owner: -2} // never legal: fails the check too
	}
	var out lOut
	var get struct{ Value *string }
	var all struct{ Fields map[string]string }
	var del struct{ Deleted bool }
	dst := map[lKind]any{lSet: &out.res, lSetBoth: &out.res, lBatch: &out.res, lGet: &get, lGetAll: &all, lDelete: &del}[in.kind]
	if err := json.Unmarshal(rep.OK, dst); err != nil { // Errorf: this runs on the workers' goroutines
		t.Errorf("%s %s reply %s: %v", rt.Name(), lNames[in.kind], rep.OK, err)
		return lOut{conflict: true, owner: -2}
	}
	switch in.kind {
	case lGet:
		if get.Value != nil {
			out.has[in.field], out.vals[in.field] = true, *get.Value
		}
	case lGetAll:
		for i, f := range lFields {
			out.vals[i], out.has[i] = all.Fields[f]
		}
	case lDelete:
		out.deleted = del.Deleted
	}
	return out
}

// TestModelRejects: the model refuses the histories the guard exists to
// prevent, so a passing check means something.
func TestModelRejects(t *testing.T) {
	op := func(client int, in lIn, out lOut, call, ret int64) porcupine.Operation {
		return porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret}
	}
	claim := setResult{Added: 1, Claimed: true, TTLSet: true}
	for name, h := range map[string][]porcupine.Operation{
		"two owners claim one key": {
			op(0, lIn{kind: lSet, ns: 0, vals: [2]string{"a", ""}}, lOut{res: claim}, 0, 1),
			op(1, lIn{kind: lSet, ns: 1, vals: [2]string{"b", ""}}, lOut{res: claim}, 2, 3),
		},
		"the TTL set again by a later write": {
			op(0, lIn{kind: lSet, ns: 0, vals: [2]string{"a", ""}}, lOut{res: claim}, 0, 1),
			op(0, lIn{kind: lSet, ns: 0, field: 1, vals: [2]string{"", "b"}}, lOut{res: setResult{Added: 1, TTLSet: true}}, 2, 3),
		},
		"a conflict naming no owner": {
			op(0, lIn{kind: lGet, ns: 1}, lOut{conflict: true, owner: 0}, 0, 1),
		},
		"a refused write that was applied": {
			op(0, lIn{kind: lSet, ns: 0, vals: [2]string{"a", ""}}, lOut{res: claim}, 0, 1),
			op(1, lIn{kind: lSet, ns: 1, vals: [2]string{"b", ""}}, lOut{conflict: true, owner: 0}, 2, 3),
			op(0, lIn{kind: lGet, ns: 0}, lOut{has: [2]bool{true, false}, vals: [2]string{"b", ""}}, 4, 5),
		},
	} {
		if porcupine.CheckOperations(lModel, h) {
			t.Errorf("%s: the model accepts it", name)
		}
	}
}
