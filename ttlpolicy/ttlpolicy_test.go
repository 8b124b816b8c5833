package ttlpolicy

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/redistest"
	"github.com/keyguard/keyguard/registry"
)

func testPolicy(t *testing.T, seed uint64) (*Policy, *registry.Registry) {
	t.Helper()
	reg, err := registry.Load("testdata/keyguard.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return New(reg, Options{Seed: seed}), reg
}

func TestTTL(t *testing.T) {
	p, reg := testPolicy(t, 1)
	base, cache, seq := reg.Lookup("order:order:1:base"), reg.Lookup("order:cache:1"), reg.Lookup("seq:order:no")
	if got := p.TTL(base); got != time.Hour {
		t.Errorf("base ttl %v", got)
	}
	if got := p.TTL(seq); got != 0 {
		t.Errorf("persistent ttl %v", got)
	}
	// Jitter stays in [ttl, ttl+jitter] and actually varies.
	seen := map[time.Duration]bool{}
	var wg sync.WaitGroup
	var mu sync.Mutex
	for range 4 {
		wg.Add(1)
		go func() { // concurrent use under -race
			defer wg.Done()
			for range 250 {
				d := p.TTL(cache)
				if d < 10*time.Minute || d > 12*time.Minute || d%time.Millisecond != 0 {
					t.Errorf("ttl %v out of [10m, 12m]", d)
				}
				mu.Lock()
				seen[d] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(seen) < 900 {
		t.Errorf("only %d distinct TTLs in 1000 draws", len(seen))
	}
	// The same seed gives the same sequence: per-instance source.
	a, _ := testPolicy(t, 42)
	b, _ := testPolicy(t, 42)
	for range 10 {
		if x, y := a.TTL(cache), b.TTL(cache); x != y {
			t.Fatalf("seeded policies differ: %v %v", x, y)
		}
	}
}

func TestWrites(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	p, _ := testPolicy(t, 0)

	if err := p.Set(ctx, rdb, "order:cache:1", "v"); err != nil {
		t.Fatal(err)
	}
	if ttl := rdb.PTTL(ctx, "order:cache:1").Val(); ttl < 9*time.Minute || ttl > 12*time.Minute {
		t.Errorf("set: ttl %v", ttl)
	}
	if ok, err := p.SetNX(ctx, rdb, "order:cache:2", "v"); err != nil || !ok {
		t.Fatal(ok, err)
	}
	if ok, _ := p.SetNX(ctx, rdb, "order:cache:2", "w"); ok {
		t.Error("SetNX overwrote")
	}
	if ttl := rdb.PTTL(ctx, "order:cache:2").Val(); ttl <= 0 {
		t.Errorf("setnx: ttl %v", ttl)
	}

	n, err := p.HSet(ctx, rdb, "order:order:1:base", "amount", 99, "status", "paid")
	if err != nil || n != 2 {
		t.Fatal(n, err)
	}
	if ttl := rdb.PTTL(ctx, "order:order:1:base").Val(); ttl <= 59*time.Minute {
		t.Errorf("hset: ttl %v", ttl)
	}

	cmds, err := p.Do(ctx, rdb, "order:tags:1", func(pipe redis.Pipeliner) error {
		pipe.SAdd(ctx, "order:tags:1", "a", "b")
		return nil
	})
	if err != nil || len(cmds) != 1 || cmds[0].(*redis.IntCmd).Val() != 2 {
		t.Fatal(cmds, err)
	}
	if ttl := rdb.PTTL(ctx, "order:tags:1").Val(); ttl <= 0 || ttl > 90*time.Second {
		t.Errorf("do: ttl %v", ttl)
	}
	if _, err := p.Do(ctx, rdb, "order:tags:1", func(redis.Pipeliner) error { return errors.New("boom") }); err == nil {
		t.Error("fn error lost")
	}

	if err := p.Set(ctx, rdb, "seq:order:no", "1"); err != nil {
		t.Fatal(err)
	}
	if ttl := rdb.PTTL(ctx, "seq:order:no").Val(); ttl != -1 {
		t.Errorf("persistent got ttl %v", ttl)
	}
	if ok, err := p.Expire(ctx, rdb, "seq:order:no"); err != nil || !ok {
		t.Fatal(ok, err)
	}
	if ttl := rdb.PTTL(ctx, "seq:order:no").Val(); ttl != -1 {
		t.Errorf("Expire gave a persistent key ttl %v", ttl)
	}
	rdb.Persist(ctx, "order:cache:1")
	if ok, err := p.Expire(ctx, rdb, "order:cache:1"); err != nil || !ok {
		t.Fatal(ok, err)
	}
	if ttl := rdb.PTTL(ctx, "order:cache:1").Val(); ttl <= 0 {
		t.Errorf("expire: ttl %v", ttl)
	}
}

func TestRefusals(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	p, _ := testPolicy(t, 0)
	for _, tt := range []struct {
		name string
		do   func() error
		want error
	}{
		{"unregistered", func() error { return p.Set(ctx, rdb, "nope", "v") }, ErrUnregistered},
		{"no policy", func() error { return p.Set(ctx, rdb, "tmp:nopolicy:1", "v") }, ErrNoPolicy},
		{"set on a hash template", func() error { return p.Set(ctx, rdb, "order:order:1:base", "v") }, ErrType},
		{"hset on a string template", func() error { _, err := p.HSet(ctx, rdb, "order:cache:1", "f", "v"); return err }, ErrType},
		{"expire unregistered", func() error { _, err := p.Expire(ctx, rdb, "nope"); return err }, ErrUnregistered},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.do()
			var e *Error
			if !errors.Is(err, tt.want) || !errors.As(err, &e) || e.Hint == "" {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
		})
	}
	if n := rdb.DBSize(ctx).Val(); n != 0 {
		t.Fatalf("%d keys written by refused calls", n)
	}
}

// TestDeclaredFields: a template that declares its fields is written with
// them alone. An undeclared hash field (given as pairs, a map or a slice),
// a string that is not a JSON object, or an object with an undeclared key
// is refused before anything is sent; declared ones, and any field of a
// template with fields_extra: allow, are written.
func TestDeclaredFields(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	p, _ := testPolicy(t, 0)
	for _, tt := range []struct {
		name       string
		do         func() error
		undeclared []string // nil: the value is not a JSON object
	}{
		{"an undeclared pair", func() error { _, err := p.HSet(ctx, rdb, "order:item:1", "price", 1, "couponAmount", 5); return err }, []string{"couponAmount"}},
		{"an undeclared map key", func() error {
			_, err := p.HSet(ctx, rdb, "order:item:2", map[string]any{"promoTotal": 1, "stock": 2})
			return err
		}, []string{"promoTotal"}},
		{"an undeclared slice pair", func() error { _, err := p.HSet(ctx, rdb, "order:item:3", []string{"x", "1", "x", "2"}); return err }, []string{"x"}},
		{"the guard's field", func() error { _, err := p.HSet(ctx, rdb, "order:item:4", "__ns__", "me"); return err }, []string{"__ns__"}},
		{"text", func() error { return p.Set(ctx, rdb, "order:view:1", "hello") }, nil},
		{"a number", func() error { return p.Set(ctx, rdb, "order:view:2", 42) }, nil},
		{"an array", func() error { return p.Set(ctx, rdb, "order:view:3", `[{"id":1}]`) }, nil},
		{"a broken object", func() error { return p.Set(ctx, rdb, "order:view:4", `{"id":1,`) }, nil},
		{"a broken object with an undeclared key", func() error { return p.Set(ctx, rdb, "order:view:6", `{"x":1,"y"`) }, nil},
		{"an undeclared key", func() error {
			_, err := p.SetNX(ctx, rdb, "order:view:5", []byte(`{"id":1,"couponAmount":5}`))
			return err
		}, []string{"couponAmount"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.do()
			var e *Error
			if !errors.Is(err, ErrSchema) || !errors.As(err, &e) || e.Hint == "" {
				t.Fatalf("got %v, want ErrSchema", err)
			}
			if !slices.Equal(e.Undeclared, tt.undeclared) {
				t.Errorf("undeclared %q, want %q (%v)", e.Undeclared, tt.undeclared, err)
			}
		})
	}
	if n := rdb.DBSize(ctx).Val(); n != 0 {
		t.Fatalf("%d keys written by refused calls", n)
	}
	if _, err := p.HSet(ctx, rdb, "order:item:9", map[string]any{"price": 1, "stock": 2}); err != nil {
		t.Fatal(err)
	}
	if err := p.Set(ctx, rdb, "order:view:9", ` {"id": 9, "name": "cup", "price": 1.5} `); err != nil {
		t.Fatal(err)
	}
	if _, err := p.HSet(ctx, rdb, "order:attrs:9", "color", "red", "size", "L"); err != nil {
		t.Fatal(err)
	}
	if n := rdb.DBSize(ctx).Val(); n != 3 {
		t.Fatalf("%d keys written; want the 3 declared writes", n)
	}
	if ttl := rdb.PTTL(ctx, "order:item:9").Val(); ttl <= 0 {
		t.Errorf("a declared HSET left TTL %v", ttl)
	}
}

// BenchmarkSetDeclared: what checking a JSON value against its template's
// declared fields adds to a Set on a real server (the same ~600-byte
// object to a template with fields and to one without), and the check
// alone.
func BenchmarkSetDeclared(b *testing.B) {
	ctx := context.Background()
	srv := redistest.Start(b)
	rdb := srv.Client(b)
	reg, err := registry.Parse("r.yaml", []byte(`version: 1
domains: {order: {owner: o}}
keys:
  - {key: "order:view:{id}", type: string, ttl: 10m, fields: [id, name, price, tags, desc]}
  - {key: "order:plain:{id}", type: string, ttl: 10m}
`))
	if err != nil {
		b.Fatal(err)
	}
	p := New(reg, Options{Seed: 1})
	value := `{"id": 1001, "name": "stainless steel water bottle 750ml", "price": 2590, "tags": ["kitchen", "outdoor", "gift"], "desc": "` +
		strings.Repeat("double-walled, keeps drinks cold for 24 hours. ", 10) + `"}`
	for _, tt := range []struct{ name, key string }{{"declared", "order:view:1"}, {"undeclared", "order:plain:1"}} {
		b.Run(tt.name, func(b *testing.B) {
			for b.Loop() {
				if err := p.Set(ctx, rdb, tt.key, value); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	e := reg.Lookup("order:view:1")
	b.Run("check", func(b *testing.B) {
		b.SetBytes(int64(len(value)))
		for b.Loop() {
			if err := checkValue("set", "order:view:1", e, value); err != nil {
				b.Fatal(err)
			}
		}
	})
}
