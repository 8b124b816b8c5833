package clients

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/keyguard/keyguard/registry"
)

// TestTTLPolicy: each package's TTL-policy helper writes a key of a TTL
// template with the template's TTL plus a jitter within ttl_jitter, a key of
// a persistent template without TTL, and refuses, before sending anything,
// a persistent write to a TTL template, a helper of the wrong type and (in
// Python and TypeScript, whose keys carry their template) a key of no
// template. A guarded write of such a key without a TTL of its own takes the
// template's.
func TestTTLPolicy(t *testing.T) {
	tg := serverTarget(t)
	reg, err := registry.Load(filepath.Join("testdata", "keyguard.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	entry := func(template string) map[string]any {
		for _, e := range reg.Entries {
			if e.Key == template {
				return map[string]any{"template": e.Key, "type": e.Type, "ttl_ms": e.TTL.Milliseconds(),
					"jitter_ms": e.TTLJitter.Milliseconds(), "persistent": e.Persistent}
			}
		}
		t.Fatalf("no template %s in testdata/keyguard.yaml", template)
		return nil
	}
	const config = "promo:config:{name}"
	for i, name := range []string{"python", "ts-ioredis", "ts-node-redis", "java"} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			rt := startRuntime(t, name, tg)
			write := func(template string, value any, how string, extra req) reply {
				r := req{"op": "policy", "how": how, "template": template, "values": []any{value},
					"entry": entry(template), "fields": map[string]any{"price": "1"}, "value": "v"}
				if template == promoTemplate {
					r["key"] = fmt.Sprintf("promo:sku:%v", value)
				} else {
					r["key"] = fmt.Sprintf("promo:config:%v", value)
				}
				for k, v := range extra {
					r[k] = v
				}
				return rt.Do(t, r)
			}
			// TTL and jitter: 20 keys, every TTL in [10m, 11m], spread by the jitter.
			lo, hi := time.Duration(1<<62), time.Duration(0)
			for j := range 20 {
				id := 5000 + 100*i + j
				write(promoTemplate, id, "hset", nil).must(t, name+" policy hset", nil)
				ttl := tg.rdb.PTTL(ctx, fmt.Sprintf("promo:sku:%d", id)).Val()
				lo, hi = min(lo, ttl), max(hi, ttl)
			}
			if lo < 10*time.Minute-10*time.Second || hi > 11*time.Minute {
				t.Errorf("%s: TTLs from %v to %v; the template says 10m + up to 1m", name, lo, hi)
			}
			if hi-lo < time.Second {
				t.Errorf("%s: TTLs from %v to %v: no jitter applied", name, lo, hi)
			}
			// A persistent template: no TTL.
			cfg := fmt.Sprintf("%s-%d", name, i)
			write(config, cfg, "hset", nil).must(t, name+" policy hset persistent", nil)
			if ttl := tg.rdb.PTTL(ctx, "promo:config:"+cfg).Val(); ttl != -1 {
				t.Errorf("%s: a persistent template's key got TTL %v", name, ttl)
			}
			// Refusals.
			refused := func(what, reason string, rep reply, key string) {
				t.Helper()
				if rep.Err == nil || rep.Err.Kind != "policy" || rep.Err.Reason != reason {
					t.Errorf("%s %s: %+v; want a policy error %q", name, what, rep, reason)
				}
				if key != "" && tg.rdb.Exists(ctx, key).Val() != 0 {
					t.Errorf("%s %s: %s was written", name, what, key)
				}
			}
			refused("persist on a TTL template", "persistent", write(promoTemplate, 1, "persist", nil), "")
			refused("SET on a hash template", "type", write(promoTemplate, 9999, "set", nil), "promo:sku:9999")
			if name == "java" {
				return
			}
			plain := "promo:sku:plain-" + name
			refused("a key of no template", "unregistered", write(promoTemplate, 1, "hset", req{"template": nil, "key": plain}), plain)

			// A guarded write of a template's key takes its TTL.
			key := fmt.Sprintf("promo:sku:%d", 7000+i)
			rt.Do(t, req{"op": "hset", "owner": "promo-service:sku", "template": promoTemplate, "values": []any{7000 + i},
				"fields": map[string]any{"price": "2"}}).must(t, name+" guarded write of a Key", nil)
			if ttl := tg.rdb.PTTL(ctx, key).Val(); ttl < 10*time.Minute-10*time.Second || ttl > 11*time.Minute {
				t.Errorf("%s: a guarded write of %s without a TTL of its own set TTL %v; want the template's", name, key, ttl)
			}
		})
	}
}
