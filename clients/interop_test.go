package clients

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/keyguard/keyguard/guard"
)

// TestInteropServer and TestInteropCluster: for every ordered pair of
// runtimes (Go, Python, TypeScript on ioredis and on node-redis, Java), a
// key guarded by one owner in the first is refused to another owner in the
// second (writes, reads and deletes), accepted for the same owner, and its
// TTL is set once, by the creating write; the raw hash holds exactly what
// the protocol says. Every runtime then runs the single-language cases:
// adoption of an unowned hash, WRONGTYPE as a conflict, the reserved field,
// an owner outside printable ASCII, pipelined batches and the EVAL
// fallback after SCRIPT FLUSH.
func TestInteropServer(t *testing.T)  { runInterop(t, serverTarget(t)) }
func TestInteropCluster(t *testing.T) { runInterop(t, clusterTarget(t)) }

func runInterop(t *testing.T, tg *target) {
	rts := map[string]runtime{}
	for _, name := range runtimeNames {
		rts[name] = startRuntime(t, name, tg)
	}
	// One script, one digest: every package embeds guard/guard.lua as is.
	for _, name := range runtimeNames {
		var v struct{ SHA string }
		rts[name].Do(t, req{"op": "version"}).must(t, name+" version", &v)
		if v.SHA != guard.ScriptSHA() {
			t.Errorf("%s runs script %s, the Go guard %s: run go generate ./clients", name, v.SHA, guard.ScriptSHA())
		}
	}
	for _, a := range runtimeNames {
		for _, b := range runtimeNames {
			if a == b {
				continue
			}
			t.Run(a+"->"+b, func(t *testing.T) { pair(t, tg, rts[a], rts[b]) })
		}
	}
	for _, name := range runtimeNames {
		t.Run(name, func(t *testing.T) { single(t, tg, rts[name]) })
	}
}

const (
	ownerA = "order-service:order"
	ownerB = "promo-service:order"
)

func pair(t *testing.T, tg *target, a, b runtime) {
	ctx := context.Background()
	key := fmt.Sprintf("interop:%s:%s:order:1001", a.Name(), b.Name())
	tg.rdb.Del(ctx, key)

	var r setResult
	a.Do(t, req{"op": "hset", "owner": ownerA, "key": key, "fields": map[string]any{"amount": "99"}, "ttl_ms": 600_000}).
		must(t, a.Name()+" creates", &r)
	if want := (setResult{Added: 1, Claimed: true, TTLSet: true}); r != want {
		t.Errorf("%s creates %s: %+v, want %+v", a.Name(), key, r, want)
	}
	raw := tg.rdb.HGetAll(ctx, key).Val()
	if len(raw) != 2 || raw[guard.ReservedField] != ownerA || raw["amount"] != "99" {
		t.Errorf("raw hash after the creating write: %v; want __ns__=%s amount=99", raw, ownerA)
	}
	ttl0 := tg.rdb.PTTL(ctx, key).Val()
	if ttl0 <= 9*time.Minute || ttl0 > 10*time.Minute {
		t.Errorf("TTL after the creating write: %v, want about 10m", ttl0)
	}

	// Another owner, another language: refused, nothing written.
	conflict := func(what string, rep reply, op string) {
		t.Helper()
		if rep.Err == nil || rep.Err.Kind != "conflict" {
			t.Errorf("%s %s by %s: %+v, want a conflict", b.Name(), what, ownerB, rep)
			return
		}
		if rep.Err.Key != key || rep.Err.Owner != ownerA || rep.Err.Caller != ownerB {
			t.Errorf("%s %s: conflict key=%q owner=%q caller=%q; want %q %q %q", b.Name(), what,
				rep.Err.Key, rep.Err.Owner, rep.Err.Caller, key, ownerA, ownerB)
		}
	}
	conflict("hset", b.Do(t, req{"op": "hset", "owner": ownerB, "key": key, "fields": map[string]any{"amount": "0"}, "ttl_ms": 30_000}), "set")
	conflict("get", b.Do(t, req{"op": "get", "owner": ownerB, "key": key, "field": "amount"}), "get")
	conflict("getall", b.Do(t, req{"op": "getall", "owner": ownerB, "key": key}), "getall")
	conflict("delete", b.Do(t, req{"op": "delete", "owner": ownerB, "key": key}), "delete")
	if got := tg.rdb.HGetAll(ctx, key).Val(); len(got) != 2 || got["amount"] != "99" {
		t.Errorf("after the refused calls the hash is %v; nothing may change", got)
	}

	// The same owner in the other language: accepted; its shorter TTL is
	// not applied, the key's is never renewed.
	b.Do(t, req{"op": "hset", "owner": ownerA, "key": key, "fields": map[string]any{"amount": "199", "status": "paid"}, "ttl_ms": 30_000}).
		must(t, b.Name()+" writes as the owner", &r)
	if want := (setResult{Added: 1, Updated: 1}); r != want {
		t.Errorf("%s writes as the owner: %+v, want %+v", b.Name(), r, want)
	}
	if ttl := tg.rdb.PTTL(ctx, key).Val(); ttl <= 30*time.Second || ttl > ttl0 {
		t.Errorf("TTL after the owner's second write: %v; want it unchanged from %v (set once)", ttl, ttl0)
	}
	var all struct{ Fields map[string]string }
	b.Do(t, req{"op": "getall", "owner": ownerA, "key": key}).must(t, b.Name()+" getall", &all)
	if len(all.Fields) != 2 || all.Fields["amount"] != "199" || all.Fields["status"] != "paid" {
		t.Errorf("%s getall: %v; want amount=199 status=paid without the owner field", b.Name(), all.Fields)
	}
	var own struct{ Owner *string }
	b.Do(t, req{"op": "owner", "owner": ownerB, "key": key}).must(t, b.Name()+" owner", &own)
	if own.Owner == nil || *own.Owner != ownerA {
		t.Errorf("%s owner: %v, want %s", b.Name(), own.Owner, ownerA)
	}
	var del struct{ Deleted bool }
	b.Do(t, req{"op": "delete", "owner": ownerA, "key": key}).must(t, b.Name()+" delete", &del)
	if !del.Deleted || tg.rdb.Exists(ctx, key).Val() != 0 {
		t.Errorf("%s delete as the owner: deleted=%v, key exists=%d", b.Name(), del.Deleted, tg.rdb.Exists(ctx, key).Val())
	}
}

func single(t *testing.T, tg *target, rt runtime) {
	ctx := context.Background()
	name := rt.Name()
	k := func(s string) string { return "single:" + name + ":" + s }
	for _, s := range []string{"adopt", "string", "reserved", "hex", "b1", "b2", "noscript"} {
		tg.rdb.Del(ctx, k(s))
	}
	var r setResult

	// A hash written around the guard, without owner or TTL: adopted.
	tg.rdb.HSet(ctx, k("adopt"), "legacy", "1")
	rt.Do(t, req{"op": "hset", "owner": ownerA, "key": k("adopt"), "fields": map[string]any{"amount": "1"}, "ttl_ms": 60_000}).
		must(t, name+" adopts", &r)
	if want := (setResult{Added: 1, Claimed: true, Adopted: true, TTLSet: true}); r != want {
		t.Errorf("%s adopts an unowned hash: %+v, want %+v", name, r, want)
	}

	// Another writer stores a string under the key: a conflict naming the type.
	tg.rdb.Set(ctx, k("string"), "x", 0)
	for _, op := range []string{"hset", "get", "getall"} {
		rep := rt.Do(t, req{"op": op, "owner": ownerA, "key": k("string"), "field": "f", "fields": map[string]any{"f": "v"}, "ttl_ms": 60_000})
		if rep.Err == nil || rep.Err.Kind != "wrongtype" || rep.Err.FoundType != "string" || rep.Err.Key != k("string") {
			t.Errorf("%s %s on a string key: %+v, want a wrongtype conflict naming string", name, op, rep)
		}
	}
	if v := tg.rdb.Get(ctx, k("string")).Val(); v != "x" {
		t.Errorf("the string key became %q", v)
	}

	// The reserved field is never a business field; nothing is sent.
	rep := rt.Do(t, req{"op": "hset", "owner": ownerA, "key": k("reserved"), "fields": map[string]any{guard.ReservedField: "x"}, "ttl_ms": 60_000})
	if rep.Err == nil || rep.Err.Kind != "reserved" || tg.rdb.Exists(ctx, k("reserved")).Val() != 0 {
		t.Errorf("%s hset of %s: %+v; want a reserved-field error and no key", name, guard.ReservedField, rep)
	}

	// An owner with bytes no error reply can carry comes back hex-decoded.
	odd := "team\r\nx\x00é"
	tg.rdb.HSet(ctx, k("hex"), guard.ReservedField, odd)
	rep = rt.Do(t, req{"op": "hset", "owner": ownerA, "key": k("hex"), "fields": map[string]any{"f": "v"}, "ttl_ms": 60_000})
	if rep.Err == nil || rep.Err.Kind != "conflict" || rep.Err.Owner != odd {
		t.Errorf("%s against owner %q: %+v", name, odd, rep)
	}

	// A pipelined batch: each op on its own.
	tg.rdb.HSet(ctx, k("b2"), guard.ReservedField, ownerB)
	var batch struct {
		Results []struct {
			OK  *setResult `json:"ok"`
			Err *opErr     `json:"err"`
		}
	}
	rt.Do(t, req{"op": "batch", "owner": ownerA, "ttl_ms": 60_000, "ops": []map[string]any{
		{"key": k("b1"), "fields": map[string]any{"f": "1"}},
		{"key": k("b2"), "fields": map[string]any{"f": "2"}},
		{"key": k("b1"), "fields": map[string]any{"f": "3", "g": "4"}},
	}}).must(t, name+" batch", &batch)
	if len(batch.Results) != 3 {
		t.Fatalf("%s batch: %d results for 3 ops", name, len(batch.Results))
	}
	if x := batch.Results[0]; x.OK == nil || *x.OK != (setResult{Added: 1, Claimed: true, TTLSet: true}) {
		t.Errorf("%s batch op 0: %+v %+v", name, x.OK, x.Err)
	}
	if x := batch.Results[1]; x.Err == nil || x.Err.Kind != "conflict" || x.Err.Owner != ownerB {
		t.Errorf("%s batch op 1 on %s's key: %+v %+v; want a conflict", name, ownerB, x.OK, x.Err)
	}
	if x := batch.Results[2]; x.OK == nil || *x.OK != (setResult{Added: 1, Updated: 1}) {
		t.Errorf("%s batch op 2: %+v %+v", name, x.OK, x.Err)
	}

	// The server lost the script: EVALSHA's NOSCRIPT falls back to EVAL,
	// alone and in a batch.
	for i, op := range []req{
		{"op": "hset", "owner": ownerA, "key": k("noscript"), "fields": map[string]any{"f": "1"}, "ttl_ms": 60_000},
		{"op": "batch", "owner": ownerA, "ttl_ms": 60_000, "ops": []map[string]any{{"key": k("noscript"), "fields": map[string]any{"f": "2"}}}},
	} {
		if err := tg.flushScripts(ctx); err != nil {
			t.Fatal(err)
		}
		rt.Do(t, op).must(t, fmt.Sprintf("%s write %d after SCRIPT FLUSH", name, i), nil)
	}
	if v := tg.rdb.HGet(ctx, k("noscript"), "f").Val(); v != "2" {
		t.Errorf("%s after the writes with a flushed script cache: f=%q, want 2", name, v)
	}
}
