package guard_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/guard"
	"github.com/keyguard/keyguard/internal/redistest"
)

const (
	nsOrder = "order-service:order"
	nsPromo = "promo-service:order"
)

var modes = []struct {
	name string
	opts guard.Options
}{
	{"lua", guard.Options{TTL: time.Hour}},
	{"best-effort", guard.Options{TTL: time.Hour, BestEffort: true}},
}

func conflictOf(t *testing.T, err error) *guard.ConflictError {
	t.Helper()
	var ce *guard.ConflictError
	if !errors.As(err, &ce) || !errors.Is(err, guard.ErrConflict) {
		t.Fatalf("err = %v, want a *ConflictError matching ErrConflict", err)
	}
	return ce
}

func TestClaimRefuseAndRead(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			ctx := t.Context()
			key := "order:" + m.name + ":1001"
			order := guard.New(rdb, nsOrder, m.opts)
			promo := guard.New(rdb, nsPromo, m.opts)

			res, err := order.SetMany(ctx, key, map[string]any{"amount": 99, "status": "new"})
			if err != nil {
				t.Fatal(err)
			}
			if want := (guard.Result{Added: 2, Claimed: true, TTLSet: true}); res != want {
				t.Errorf("first write = %+v, want %+v", res, want)
			}
			res, err = order.SetMany(ctx, key, map[string]any{"amount": 199, "paid": "yes"})
			if err != nil {
				t.Fatal(err)
			}
			if want := (guard.Result{Added: 1, Updated: 1}); res != want {
				t.Errorf("second write = %+v, want %+v", res, want)
			}

			_, err = promo.Set(ctx, key, "amount", "0")
			ce := conflictOf(t, err)
			if ce.Owner != nsOrder || ce.FoundType != "" || ce.Key != key || ce.Namespace != nsPromo {
				t.Errorf("conflict = %+v", ce)
			}
			if !strings.Contains(err.Error(), nsOrder) {
				t.Errorf("message %q does not name the owner", err)
			}

			// Nothing was overwritten, and the raw hash still holds the owner.
			raw, _ := rdb.HGetAll(ctx, key).Result()
			want := map[string]string{"__ns__": nsOrder, "amount": "199", "status": "new", "paid": "yes"}
			if fmt.Sprint(raw) != fmt.Sprint(want) {
				t.Errorf("raw hash = %v, want %v", raw, want)
			}

			all, err := order.GetAll(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			delete(want, guard.ReservedField)
			if fmt.Sprint(all) != fmt.Sprint(want) {
				t.Errorf("GetAll = %v, want %v (never the owner field)", all, want)
			}
			if v, ok, err := order.Get(ctx, key, "amount"); v != "199" || !ok || err != nil {
				t.Errorf("Get amount = %q %v %v", v, ok, err)
			}
			if v, ok, err := order.Get(ctx, key, "nope"); v != "" || ok || err != nil {
				t.Errorf("Get nope = %q %v %v", v, ok, err)
			}
			if owner, err := promo.Owner(ctx, key); owner != nsOrder || err != nil {
				t.Errorf("Owner = %q %v", owner, err)
			}
			_, _, err = promo.Get(ctx, key, "amount")
			conflictOf(t, err)
			_, err = promo.GetAll(ctx, key)
			conflictOf(t, err)

			if _, err := promo.Delete(ctx, key); conflictOf(t, err).Owner != nsOrder {
				t.Errorf("delete conflict = %v", err)
			}
			if n, _ := rdb.Exists(ctx, key).Result(); n != 1 {
				t.Fatal("a refused Delete removed the key")
			}
			if ok, err := order.Delete(ctx, key); !ok || err != nil {
				t.Errorf("owner Delete = %v %v", ok, err)
			}
			if ok, err := order.Delete(ctx, key); ok || err != nil {
				t.Errorf("Delete of a missing key = %v %v", ok, err)
			}
			// Once deleted, the other namespace may claim it.
			if res, err := promo.Set(ctx, key, "amount", "1"); err != nil || !res.Claimed {
				t.Errorf("claim after delete = %+v %v", res, err)
			}
			if ok, err := order.ForceDelete(ctx, key); !ok || err != nil {
				t.Errorf("ForceDelete = %v %v", ok, err)
			}
			if all, err := order.GetAll(ctx, key); len(all) != 0 || err != nil {
				t.Errorf("GetAll of a missing key = %v %v", all, err)
			}
			if owner, err := order.Owner(ctx, key); owner != "" || err != nil {
				t.Errorf("Owner of a missing key = %q %v", owner, err)
			}
		})
	}
}

func TestAdoptOwnerlessHash(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			ctx := t.Context()
			key := "legacy:" + m.name
			rdb.HSet(ctx, key, "amount", "5") // written around the guard
			if owner, err := guard.New(rdb, nsOrder, m.opts).Owner(ctx, key); owner != "" || err != nil {
				t.Fatalf("Owner of ownerless = %q %v", owner, err)
			}
			res, err := guard.New(rdb, nsOrder, m.opts).Set(ctx, key, "amount", "6")
			if err != nil {
				t.Fatal(err)
			}
			if want := (guard.Result{Updated: 1, Claimed: true, Adopted: true, TTLSet: true}); res != want {
				t.Errorf("adopt = %+v, want %+v", res, want)
			}
		})
	}
}

func TestReservedField(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := t.Context()
	for _, m := range modes {
		g := guard.New(rdb, nsOrder, m.opts)
		key := "reserved:" + m.name
		if _, err := g.Set(ctx, key, "__ns__", "hijack"); !errors.Is(err, guard.ErrReservedField) {
			t.Errorf("%s Set: %v", m.name, err)
		}
		if _, err := g.SetMany(ctx, key, map[string]any{"a": 1, "__ns__": "x"}); !errors.Is(err, guard.ErrReservedField) {
			t.Errorf("%s SetMany: %v", m.name, err)
		}
		res, err := g.SetPipelined(ctx, []guard.SetOp{
			{Key: key, Fields: map[string]any{"__ns__": "x"}},
			{Key: key, Field: "__ns__", Value: "x"},
			{Key: key, Field: "a", Fields: map[string]any{"b": 1}},
			{Key: key, Fields: map[string]any{}},
		})
		if !errors.Is(err, guard.ErrReservedField) || !errors.Is(res[0].Err, guard.ErrReservedField) ||
			!errors.Is(res[1].Err, guard.ErrReservedField) {
			t.Errorf("%s SetPipelined: %v", m.name, err)
		}
		if res[2].Err == nil || !strings.Contains(res[2].Err.Error(), "both Field and Fields") {
			t.Errorf("%s SetOp with Field and Fields: %v", m.name, res[2].Err)
		}
		if res[3].Err == nil || !strings.Contains(res[3].Err.Error(), "no fields") {
			t.Errorf("%s SetOp with empty Fields: %v", m.name, res[3].Err)
		}
		if _, _, err := g.Get(ctx, key, "__ns__"); !errors.Is(err, guard.ErrReservedField) {
			t.Errorf("%s Get: %v", m.name, err)
		}
		if n, _ := rdb.Exists(ctx, key).Result(); n != 0 {
			t.Errorf("%s: a refused write created the key", m.name)
		}
	}
	// The script refuses it too, before writing anything, for callers that
	// run it without the Go checks.
	err := rdb.EvalSha(ctx, guard.ScriptSHA(), []string{"reserved:raw"}, "set", nsOrder, 60000, "a", "1", "__ns__", "x").Err()
	if redis.HasErrorPrefix(err, "NOSCRIPT") {
		err = rdb.Eval(ctx, guard.Script(), []string{"reserved:raw"}, "set", nsOrder, 60000, "a", "1", "__ns__", "x").Err()
	}
	if err == nil || !strings.HasPrefix(err.Error(), "KEYGUARD_RESERVED") {
		t.Errorf("raw script with __ns__: %v", err)
	}
	if n, _ := rdb.Exists(ctx, "reserved:raw").Result(); n != 0 {
		t.Error("the script wrote before refusing the reserved field")
	}
}

func TestTTLSetOnceNeverRenewed(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			ctx := t.Context()
			key := "ttl:" + m.name
			g := guard.New(rdb, nsOrder, m.opts)
			if res, err := g.Set(ctx, key, "a", "1"); err != nil || !res.TTLSet {
				t.Fatalf("first write = %+v %v", res, err)
			}
			if ttl := rdb.PTTL(ctx, key).Val(); ttl <= 59*time.Minute || ttl > time.Hour {
				t.Fatalf("PTTL after create = %v, want about 1h", ttl)
			}
			// Pretend time passed: the remaining TTL is short now. A later write
			// must not renew it.
			rdb.PExpire(ctx, key, 50*time.Second)
			if res, err := g.Set(ctx, key, "b", "2"); err != nil || res.TTLSet {
				t.Fatalf("second write = %+v %v", res, err)
			}
			if ttl := rdb.PTTL(ctx, key).Val(); ttl > 50*time.Second {
				t.Errorf("PTTL after second write = %v: the write renewed the TTL", ttl)
			}
			// Someone PERSISTed it: the next write gives it a TTL again.
			rdb.Persist(ctx, key)
			if res, err := g.Set(ctx, key, "c", "3"); err != nil || !res.TTLSet {
				t.Errorf("write after PERSIST = %+v %v", res, err)
			}
			// A refused write never touches the TTL either.
			rdb.Persist(ctx, key)
			_, err := guard.New(rdb, nsPromo, m.opts).Set(ctx, key, "d", "4")
			conflictOf(t, err)
			if ttl := rdb.PTTL(ctx, key).Val(); ttl != -1 {
				t.Errorf("PTTL after a refused write = %v, want -1", ttl)
			}
		})
	}
}

func TestTTLJitterAndPersistent(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := t.Context()
	for _, m := range modes {
		opts := m.opts
		opts.Jitter = 10 * time.Minute
		g := guard.New(rdb, nsOrder, opts)
		for i := range 20 {
			key := fmt.Sprintf("jitter:%s:%d", m.name, i)
			if _, err := g.Set(ctx, key, "a", "1"); err != nil {
				t.Fatal(err)
			}
			if ttl := rdb.PTTL(ctx, key).Val(); ttl <= 59*time.Minute || ttl > 70*time.Minute {
				t.Errorf("%s: PTTL = %v, want within [1h, 1h10m]", key, ttl)
			}
		}
		p := guard.New(rdb, nsOrder, guard.Options{Persistent: true, BestEffort: opts.BestEffort})
		key := "persistent:" + m.name
		if res, err := p.Set(ctx, key, "a", "1"); err != nil || res.TTLSet {
			t.Fatalf("persistent write = %+v %v", res, err)
		}
		if ttl := rdb.PTTL(ctx, key).Val(); ttl != -1 {
			t.Errorf("persistent key PTTL = %v, want -1", ttl)
		}
	}
}

func TestWrongTypeIsAConflict(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := t.Context()
	rdb.Set(ctx, "cfg:region:cn", "hello", 0)
	rdb.RPush(ctx, "cfg:list", "x")
	for _, m := range modes {
		g := guard.New(rdb, nsOrder, m.opts)
		for key, typ := range map[string]string{"cfg:region:cn": "string", "cfg:list": "list"} {
			calls := map[string]func() error{
				"Set":    func() error { _, err := g.Set(ctx, key, "a", "1"); return err },
				"Get":    func() error { _, _, err := g.Get(ctx, key, "a"); return err },
				"GetAll": func() error { _, err := g.GetAll(ctx, key); return err },
				"Owner":  func() error { _, err := g.Owner(ctx, key); return err },
				"Delete": func() error { _, err := g.Delete(ctx, key); return err },
				"Pipelined": func() error {
					_, err := g.SetPipelined(ctx, []guard.SetOp{{Key: key, Fields: map[string]any{"a": 1}}})
					return err
				},
			}
			for name, call := range calls {
				err := call()
				ce := conflictOf(t, err)
				if ce.FoundType != typ || ce.Owner != "" {
					t.Errorf("%s %s %s: conflict %+v, want FoundType %q", m.name, name, key, ce, typ)
				}
				if !strings.Contains(err.Error(), "holds a "+typ) {
					t.Errorf("%s %s: message %q", m.name, name, err)
				}
			}
		}
	}
	if v := rdb.Get(ctx, "cfg:region:cn").Val(); v != "hello" {
		t.Errorf("string value changed to %q", v)
	}
	if ttl := rdb.PTTL(ctx, "cfg:region:cn").Val(); ttl != -1 {
		t.Errorf("string TTL changed to %v", ttl)
	}
}

func TestOwnerWithArbitraryBytes(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := t.Context()
	long := strings.Repeat("x", 300)
	cases := map[string]string{
		"plain":   "billing:v2",
		"newline": "a\r\nb c",
		"binary":  "\x00\xff\x01",
		"utf8":    "营销域",
		"long":    long,
	}
	for name, owner := range cases {
		for _, m := range modes {
			key := "bytes:" + m.name + ":" + name
			rdb.HSet(ctx, key, guard.ReservedField, owner)
			_, err := guard.New(rdb, nsOrder, m.opts).Set(ctx, key, "a", "1")
			ce := conflictOf(t, err)
			want := owner
			if name == "long" && !m.opts.BestEffort {
				want = long[:200] + "…(truncated)"
			}
			if ce.Owner != want {
				t.Errorf("%s %s: owner %q, want %q", m.name, name, ce.Owner, want)
			}
		}
	}
}

func TestKeysOfAnyBytesAndManyFields(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := t.Context()
	for _, m := range modes {
		g := guard.New(rdb, nsOrder, m.opts)
		for _, key := range []string{"a\nb", "\x00\xff", strings.Repeat("k", 1<<20), ""} {
			if _, err := g.Set(ctx, key, "f\r\n", []byte{0, 1, 2}); err != nil {
				t.Fatalf("%s key of %d bytes: %v", m.name, len(key), err)
			}
			if v, ok, err := g.Get(ctx, key, "f\r\n"); v != "\x00\x01\x02" || !ok || err != nil {
				t.Errorf("%s Get = %q %v %v", m.name, v, ok, err)
			}
			rdb.Del(ctx, key)
		}
		// More pairs than one HSET chunk in the script (and than Lua's
		// unpack limit): still one atomic call.
		fields := make(map[string]any, 5000)
		for i := range 5000 {
			fields[fmt.Sprint("f", i)] = i
		}
		key := "many:" + m.name
		res, err := g.SetMany(ctx, key, fields)
		if err != nil || res.Added != 5000 {
			t.Fatalf("%s SetMany 5000 = %+v %v", m.name, res, err)
		}
		fields["new"] = 1
		if res, err := g.SetMany(ctx, key, fields); err != nil || res.Added != 1 || res.Updated != 5000 {
			t.Errorf("%s SetMany again = %+v %v", m.name, res, err)
		}
		if _, err := g.SetMany(ctx, key, nil); err == nil {
			t.Errorf("%s SetMany without fields: no error", m.name)
		}
	}
}

func TestExpireNX(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := t.Context()
	g := guard.New(rdb, nsPromo, guard.Options{TTL: time.Minute})
	rdb.HSet(ctx, "cfg:region:cn", "max_conn", 200)
	if ok, err := g.ExpireNX(ctx, "cfg:region:cn", 600*time.Second); !ok || err != nil {
		t.Fatalf("first ExpireNX = %v %v", ok, err)
	}
	if ok, err := g.ExpireNX(ctx, "cfg:region:cn", 60*time.Second); ok || err != nil {
		t.Errorf("second ExpireNX = %v %v, want false", ok, err)
	}
	if ttl := rdb.TTL(ctx, "cfg:region:cn").Val(); ttl <= 60*time.Second {
		t.Errorf("TTL = %v: ExpireNX replaced the existing TTL", ttl)
	}
	if ok, err := g.ExpireNX(ctx, "missing", time.Minute); ok || err != nil {
		t.Errorf("ExpireNX missing = %v %v", ok, err)
	}
}

func TestInvalidConfiguration(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled
	t.Cleanup(func() { _ = rdb.Close() })
	cases := []struct {
		name   string
		client redis.UniversalClient
		ns     string
		opts   guard.Options
		want   string
	}{
		{"nil client", nil, nsOrder, guard.Options{TTL: time.Hour}, "nil Redis client"},
		{"empty namespace", rdb, "", guard.Options{TTL: time.Hour}, "empty namespace"},
		{"reserved namespace", rdb, "__ns__", guard.Options{TTL: time.Hour}, "reserved"},
		{"space in namespace", rdb, "order service", guard.Options{TTL: time.Hour}, "printable ASCII"},
		{"long namespace", rdb, strings.Repeat("n", 201), guard.Options{TTL: time.Hour}, "under 200"},
		{"no TTL", rdb, nsOrder, guard.Options{}, "Persistent"},
		{"sub-ms TTL", rdb, nsOrder, guard.Options{TTL: time.Microsecond}, "at least 1ms"},
		{"persistent with TTL", rdb, nsOrder, guard.Options{TTL: time.Hour, Persistent: true}, "set both to 0"},
		{"negative jitter", rdb, nsOrder, guard.Options{TTL: time.Hour, Jitter: -1}, "negative Jitter"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := guard.New(c.client, c.ns, c.opts)
			if g.Err() == nil || !strings.Contains(g.Err().Error(), c.want) {
				t.Fatalf("Err() = %v, want it to mention %q", g.Err(), c.want)
			}
			if _, err := g.Set(t.Context(), "k", "f", "v"); err != g.Err() {
				t.Errorf("Set = %v, want the configuration error", err)
			}
			if _, err := g.Delete(t.Context(), "k"); err != g.Err() {
				t.Errorf("Delete = %v, want the configuration error", err)
			}
		})
	}
	for _, ok := range []guard.Options{{TTL: time.Hour}, {TTL: time.Hour, Jitter: time.Minute}, {Persistent: true}} {
		if err := guard.New(rdb, nsOrder, ok).Err(); err != nil {
			t.Errorf("%+v: %v", ok, err)
		}
	}
}

// A server that refuses scripts, like some managed Redis offerings: the Lua
// mode fails with a hint, the best-effort mode works.
func TestServerWithoutEval(t *testing.T) {
	rdb := redistest.Start(t, `rename-command EVAL ""`, `rename-command EVALSHA ""`).Client(t)
	ctx := t.Context()
	_, err := guard.New(rdb, nsOrder, guard.Options{TTL: time.Hour}).Set(ctx, "k", "a", "1")
	if err == nil || !strings.Contains(err.Error(), "BestEffort") {
		t.Fatalf("Lua mode on a server without EVAL: %v, want a hint about BestEffort", err)
	}
	be := guard.New(rdb, nsOrder, guard.Options{TTL: time.Hour, BestEffort: true})
	if res, err := be.Set(ctx, "k", "a", "1"); err != nil || !res.Claimed {
		t.Fatalf("best-effort = %+v %v", res, err)
	}
	_, err = guard.New(rdb, nsPromo, guard.Options{TTL: time.Hour, BestEffort: true}).Set(ctx, "k", "a", "2")
	conflictOf(t, err)
}

// The script's own argument checks, for callers that run it without the Go
// side: each malformed call is refused before anything is written.
func TestScriptRejectsMalformedCalls(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := t.Context()
	cases := []struct {
		name string
		keys []string
		args []any
		want string
	}{
		{"no key", nil, []any{"set", nsOrder, 1000, "a", "1"}, "KEYGUARD_ARGS need KEYS[1]"},
		{"empty namespace", []string{"m"}, []any{"set", "", 1000, "a", "1"}, "KEYGUARD_ARGS need KEYS[1]"},
		{"unknown op", []string{"m"}, []any{"get", nsOrder}, "KEYGUARD_ARGS unknown operation"},
		{"float TTL", []string{"m"}, []any{"set", nsOrder, "1e3", "a", "1"}, "KEYGUARD_ARGS set needs a TTL"},
		{"negative TTL", []string{"m"}, []any{"set", nsOrder, -1, "a", "1"}, "KEYGUARD_ARGS set needs a TTL"},
		{"huge TTL", []string{"m"}, []any{"set", nsOrder, "1234567890123456", "a", "1"}, "KEYGUARD_ARGS set needs a TTL"},
		{"no TTL", []string{"m"}, []any{"set", nsOrder}, "KEYGUARD_ARGS set needs a TTL"},
		{"no fields", []string{"m"}, []any{"set", nsOrder, 1000}, "KEYGUARD_ARGS set needs field/value pairs"},
		{"odd pairs", []string{"m"}, []any{"set", nsOrder, 1000, "a", "1", "b"}, "KEYGUARD_ARGS set needs field/value pairs"},
	}
	for _, c := range cases {
		err := rdb.Eval(ctx, guard.Script(), c.keys, c.args...).Err()
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if n := rdb.DBSize(ctx).Val(); n != 0 {
		t.Errorf("%d keys written by refused calls", n)
	}
}
