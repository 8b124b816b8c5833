package guard_test

import (
	"context"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/guard"
	"github.com/keyguard/keyguard/internal/redistest"
)

// argsHook records the arguments of every command a client sends.
type argsHook struct {
	mu   sync.Mutex
	seen [][]any
}

func (h *argsHook) add(cmds ...redis.Cmder) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, c := range cmds {
		h.seen = append(h.seen, slices.Clone(c.Args()))
	}
}

func (h *argsHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *argsHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { h.add(cmd); return next(ctx, cmd) }
}
func (h *argsHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { h.add(cmds...); return next(ctx, cmds) }
}

// fieldsOf returns the sorted field names of the guard set calls among the
// recorded commands, and how many such calls there were.
func (h *argsHook) fieldsOf(sha string) (fields []string, calls int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, args := range h.seen {
		pairs, ok := guard.SetPairs(args, sha)
		if !ok {
			continue
		}
		calls++
		for i := 0; i < len(pairs); i += 2 {
			fields = append(fields, pairs[i].(string))
		}
	}
	sort.Strings(fields)
	return fields, calls
}

// TestSetPairs: SetPairs finds exactly the fields the guard's writes send,
// through EVALSHA, pipelined, and through EVAL after SCRIPT FLUSH; deletes,
// reads and other scripts are not set calls.
func TestSetPairs(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	rec := &argsHook{}
	rdb.AddHook(rec)
	sha := guard.ScriptSHA()
	g := guard.New(rdb, nsOrder, guard.Options{TTL: time.Hour})

	if _, err := g.SetMany(ctx, "order:1", map[string]any{"amount": 1, "status": "new"}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.SetPipelined(ctx, []guard.SetOp{{Key: "order:2", Field: "paid", Value: true}, {Key: "order:3", Fields: map[string]any{"x": 1}}}); err != nil {
		t.Fatal(err)
	}
	if err := srv.Client(t).ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Set(ctx, "order:4", "refund", 2); err != nil { // NOSCRIPT, then EVAL
		t.Fatal(err)
	}
	g.Get(ctx, "order:1", "amount")
	g.Delete(ctx, "order:1")
	rdb.EvalSha(ctx, "0000000000000000000000000000000000000000", []string{"order:5"}, "set", nsOrder, 0, "no", "pe")
	rdb.Eval(ctx, "return 1", []string{"order:5"}, "set", nsOrder, 0, "no", "pe")

	fields, calls := rec.fieldsOf(sha)
	// On a fresh server SetMany's EVALSHA gets NOSCRIPT and EVAL follows;
	// then two pipelined EVALSHAs; after SCRIPT FLUSH, Set's EVALSHA and EVAL.
	if want := []string{"amount", "amount", "paid", "refund", "refund", "status", "status", "x"}; !slices.Equal(fields, want) || calls != 6 {
		t.Errorf("fields %q in %d calls, want %q in 6", fields, calls, want)
	}
	for _, args := range [][]any{
		{"evalsha", sha, 2, "a", "b", "set", nsOrder, 0, "f", "v"}, // two keys
		{"evalsha", sha, 1, "a", "del", nsOrder},
		{"evalsha", sha},
		{"hset", "a", "f", "v", "g", "w", "h", "x"},
	} {
		if p, ok := guard.SetPairs(args, sha); ok {
			t.Errorf("%v: set call with pairs %v", args, p)
		}
	}
	if p, ok := guard.SetPairs([]any{"EVALSHA", "ABC", "1", "k", "set", nsOrder, 0, "f", "v"}, "abc"); !ok || len(p) != 2 {
		t.Errorf("upper-case name and digest: %v %v", p, ok)
	}
}
