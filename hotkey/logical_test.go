package hotkey

import (
	"context"
	"testing"
	"time"

	"github.com/keyguard/keyguard/internal/redistest"
)

// TestLogicalExpiry: past the soft deadline every caller of two instances
// keeps getting the old value at once while one refresher in the cluster
// loads the new one; then everyone sees it.
func TestLogicalExpiry(t *testing.T) {
	for _, key := range []string{"config:global:homepage", "config:switch:homepage"} { // without and with a local tier
		t.Run(key, func(t *testing.T) {
			srv := redistest.Start(t)
			reg := testRegistry(t)
			const soft = 300 * time.Millisecond
			logical := map[string]time.Duration{"config:global:{name}": soft, "config:switch:{name}": soft}
			a, pa := newCache(t, reg, srv.Client(t), Options{Logical: logical})
			b, pb := newCache(t, reg, srv.Client(t), Options{Logical: logical})
			ctx := context.Background()
			if err := a.Set(ctx, key, "v1"); err != nil {
				t.Fatal(err)
			}
			// Stored as an envelope, with the template's TTL as a safety net.
			raw := srv.Client(t)
			if v, soft, ok := decodeLogical(raw.Get(ctx, key).Val()); v != "v1" || !ok {
				t.Fatalf("stored %q (soft %d)", v, soft)
			}
			if ttl := raw.PTTL(ctx, key).Val(); ttl < 23*time.Hour {
				t.Fatalf("safety TTL %v, want the template's 24h", ttl)
			}
			gate := make(chan struct{})
			l := &loaderCount{value: "v2", gate: gate}
			for _, c := range []*Cache{a, b} { // fresh: no refresh
				if v, err := c.Get(ctx, key, l.load); err != nil || v != "v1" {
					t.Fatalf("Get = %q, %v", v, err)
				}
			}
			time.Sleep(soft + 50*time.Millisecond) // past the soft deadline
			// While the loader is held at its gate, 400 reads return the
			// old value: they cannot be waiting for it.
			for i := range 400 {
				c := a
				if i%2 == 1 {
					c = b
				}
				gctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				v, err := c.Get(gctx, key, l.load)
				cancel()
				if err != nil || v != "v1" {
					t.Fatalf("read %d during the refresh: %q, %v", i, v, err)
				}
			}
			eventually(t, "the refresher calls the loader", func() bool { return l.n() > 0 })
			close(gate)
			for _, c := range []*Cache{a, b} {
				eventually(t, "the new value is served", func() bool {
					v, err := c.Get(ctx, key, l.load)
					return err == nil && v == "v2"
				})
			}
			if l.n() != 1 {
				t.Errorf("loader called %d times, want one refresher", l.n())
			}
			stale := counter(t, pa, MetricStale) + counter(t, pb, MetricStale)
			ok := counter(t, pa, MetricRefresh, "result", "ok") + counter(t, pb, MetricRefresh, "result", "ok")
			if stale < 400 || ok != 1 {
				t.Errorf("stale served %v (want ≥ 400), refreshes ok %v (want 1)", stale, ok)
			}
		})
	}
}

func TestLogicalOptionsChecked(t *testing.T) {
	srv := redistest.Start(t)
	reg := testRegistry(t)
	for _, logical := range []map[string]time.Duration{
		{"config:global:{nope}": time.Second},
		{"config:global:{name}": 48 * time.Hour}, // longer than the TTL
		{"config:global:{name}": 0},
	} {
		_, err := New(context.Background(), reg, srv.Client(t), Options{Service: "s", Logical: logical})
		if err == nil {
			t.Errorf("Logical %v accepted", logical)
		}
	}
}

func FuzzDecodeLogical(f *testing.F) {
	f.Add(encodeLogical("v", time.UnixMilli(1767000000000)))
	f.Add("plain")
	f.Add(envelope)
	f.Add(envelope + "\xff\xff\xff\xff\xff\xff\xff\xff")
	f.Fuzz(func(t *testing.T, s string) {
		v, soft, ok := decodeLogical(s)
		if !ok {
			if v != s {
				t.Fatalf("not an envelope, but the value changed: %q → %q", s, v)
			}
			return
		}
		if soft < 0 {
			t.Fatalf("negative deadline %d", soft)
		}
		// Re-encoding gives back the input.
		if got := encodeLogical(v, time.UnixMilli(soft)); got != s {
			t.Fatalf("round trip %q → (%q, %d) → %q", s, v, soft, got)
		}
	})
}
