package guard_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/guard"
	"github.com/keyguard/keyguard/internal/redistest"
)

// The model of the guard, per key: the owner (none, namespace 0 or 1) and the
// two business fields. Porcupine checks that the outcomes recorded from real
// concurrent calls are those of some sequential order of the calls.

type opKind uint8

const (
	opSet     opKind = iota // Set one field
	opSetBoth               // SetMany of both fields
	opBatch                 // Set one field through SetPipelined
	opGet
	opGetAll
	opDelete
)

var opNames = [...]string{"set", "setboth", "batch", "get", "getall", "delete"}

type lInput struct {
	kind  opKind
	key   int
	ns    int8 // index into namespaces
	field int8 // 0 or 1
	vals  [2]string
}

type lOutput struct {
	conflict bool
	owner    int8 // on conflict: the owner reported
	added    int
	updated  int
	claimed  bool
	ttlSet   bool
	has      [2]bool   // get / getall: fields present
	vals     [2]string // get / getall: their values
	deleted  bool
}

type lState struct {
	owner int8 // -1: no owner (the key does not exist)
	has   [2]bool
	vals  [2]string
}

var namespaces = [2]string{nsOrder, nsPromo}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func stepGuard(state, input, output any) (bool, any) {
	s, in, out := state.(lState), input.(lInput), output.(lOutput)
	if s.owner >= 0 && s.owner != in.ns {
		return out.conflict && out.owner == s.owner, s
	}
	if out.conflict {
		return false, s
	}
	fresh := s.owner < 0
	next := s
	next.owner = in.ns
	switch in.kind {
	case opSet, opBatch:
		f := in.field
		ok := out.added == b2i(!s.has[f]) && out.updated == b2i(s.has[f]) &&
			out.claimed == fresh && out.ttlSet == fresh // the TTL is set by the creating write only
		next.has[f], next.vals[f] = true, in.vals[f]
		return ok, next
	case opSetBoth:
		ok := out.added == b2i(!s.has[0])+b2i(!s.has[1]) && out.updated == b2i(s.has[0])+b2i(s.has[1]) &&
			out.claimed == fresh && out.ttlSet == fresh
		next.has, next.vals = [2]bool{true, true}, in.vals
		return ok, next
	case opGet:
		f := in.field
		return out.has[f] == s.has[f] && out.vals[f] == s.vals[f], s
	case opGetAll:
		return out.has == s.has && out.vals == s.vals, s
	case opDelete:
		return out.deleted == !fresh, lState{owner: -1}
	}
	return false, s
}

var guardModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[int][]porcupine.Operation{}
		for _, op := range history {
			k := op.Input.(lInput).key
			byKey[k] = append(byKey[k], op)
		}
		var out [][]porcupine.Operation
		for _, ops := range byKey {
			out = append(out, ops)
		}
		return out
	},
	Init: func() any { return lState{owner: -1} },
	Step: stepGuard,
	DescribeOperation: func(input, output any) string {
		in, out := input.(lInput), output.(lOutput)
		if out.conflict {
			return fmt.Sprintf("%s k%d ns%d -> conflict(ns%d)", opNames[in.kind], in.key, in.ns, out.owner)
		}
		return fmt.Sprintf("%s k%d ns%d f%d %v -> %+v", opNames[in.kind], in.key, in.ns, in.field, in.vals, out)
	},
	DescribeState: func(state any) string { return fmt.Sprintf("%+v", state.(lState)) },
}

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
	record := func(in lInput, call int64, out lOutput) {
		hist = append(hist, porcupine.Operation{ClientId: id, Input: in, Call: call, Output: out, Return: now()})
	}
	fail := func(in lInput, err error) lOutput {
		var ce *guard.ConflictError
		if errors.As(err, &ce) && ce.Owner != "" {
			for i, n := range namespaces {
				if n == ce.Owner {
					return lOutput{conflict: true, owner: int8(i)}
				}
			}
		}
		t.Errorf("%s %s: unexpected error %v", opNames[in.kind], keys[in.key], err)
		return lOutput{conflict: true, owner: -2} // never legal: fails the check too
	}
	fromResult := func(r guard.Result) lOutput {
		return lOutput{added: r.Added, updated: r.Updated, claimed: r.Claimed, ttlSet: r.TTLSet}
	}
	for seq := 0; seq < linOps(); seq++ {
		// A random pause varies the interleavings and spreads the run over
		// its duration.
		select {
		case <-stop:
			return hist
		case <-time.After(time.Duration(rng.IntN(2000)) * time.Microsecond):
		}
		in := lInput{
			key:   rng.IntN(linKeys),
			ns:    ns,
			field: int8(rng.IntN(2)),
			vals:  [2]string{fmt.Sprintf("%d.%d.a", id, seq), fmt.Sprintf("%d.%d.b", id, seq)},
		}
		key := keys[in.key]
		switch p := rng.IntN(100); {
		case p < 30:
			in.kind = opSet
		case p < 40:
			in.kind = opSetBoth
		case p < 50:
			in.kind = opBatch
		case p < 70:
			in.kind = opGet
		case p < 85:
			in.kind = opGetAll
		default:
			in.kind = opDelete
		}
		call := now()
		var out lOutput
		switch in.kind {
		case opSet:
			r, err := g.Set(ctx, key, fieldNames[in.field], in.vals[in.field])
			if out = fromResult(r); err != nil {
				out = fail(in, err)
			}
		case opSetBoth:
			r, err := g.SetMany(ctx, key, map[string]any{fieldNames[0]: in.vals[0], fieldNames[1]: in.vals[1]})
			if out = fromResult(r); err != nil {
				out = fail(in, err)
			}
		case opBatch:
			// A pipelined batch of up to three single-field writes, one op each
			// in the history, all with the batch's call/return window.
			ins := []lInput{in}
			for j := rng.IntN(3); j > 0; j-- {
				more := in
				more.key, more.field = rng.IntN(linKeys), int8(rng.IntN(2))
				ins = append(ins, more)
			}
			ops := make([]guard.SetOp, len(ins))
			for j, x := range ins {
				ops[j] = guard.SetOp{Key: keys[x.key], Field: fieldNames[x.field], Value: x.vals[x.field]}
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
		case opGet:
			v, found, err := g.Get(ctx, key, fieldNames[in.field])
			out.has[in.field], out.vals[in.field] = found, v
			if err != nil {
				out = fail(in, err)
			}
		case opGetAll:
			m, err := g.GetAll(ctx, key)
			for f, name := range fieldNames {
				out.vals[f], out.has[f] = m[name]
			}
			if err != nil {
				out = fail(in, err)
			}
		case opDelete:
			ok, err := g.Delete(ctx, key)
			if out.deleted = ok; err != nil {
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
	counts := map[string]int{}
	for _, h := range hists {
		history = append(history, h...)
		for _, op := range h {
			name := opNames[op.Input.(lInput).kind]
			if op.Output.(lOutput).conflict {
				name += "/conflict"
			}
			counts[name]++
		}
	}
	t.Logf("%d operations, %d script flushes: %v", len(history), flushes, counts)
	// Every kind of outcome must occur, or the check proves little.
	for _, name := range []string{"set", "set/conflict", "setboth", "batch", "batch/conflict", "get", "getall", "delete", "delete/conflict"} {
		if counts[name] == 0 {
			t.Errorf("no %q operation in the history", name)
		}
	}

	res, info := porcupine.CheckOperationsVerbose(guardModel, history, 2*time.Minute)
	if res != porcupine.Ok {
		path := filepath.Join(t.ArtifactDir(), "guard-linearizability.html")
		if f, err := os.Create(path); err == nil {
			if res == porcupine.Illegal {
				_ = porcupine.Visualize(guardModel, info, f)
			}
			_ = f.Close()
		}
		t.Fatalf("history of %d operations: %v (visualization: %s)", len(history), res, path)
	}
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
