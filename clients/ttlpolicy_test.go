package clients

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/keyguard/keyguard/internal/jsonkeys"
	"github.com/keyguard/keyguard/registry"
)

// TestTTLPolicy: each package's TTL-policy helper writes a key of a TTL
// template with the template's TTL plus a jitter within ttl_jitter, a key of
// a persistent template without TTL, and refuses, before sending anything,
// a persistent write to a TTL template, a helper of the wrong type and (in
// Python and TypeScript, whose keys carry their template) a key of no
// template. A guarded write of such a key without a TTL of its own takes the
// template's.
// policyEntries returns the registry entry of a template of
// testdata/keyguard.yaml as the drivers' policy op takes it (the Java
// driver builds its TtlPolicy from it, as from a generated Keys.Template).
func policyEntries(t *testing.T) func(template string) map[string]any {
	reg, err := registry.Load(filepath.Join("testdata", "keyguard.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return func(template string) map[string]any {
		for _, e := range reg.Entries {
			if e.Key == template {
				return map[string]any{"template": e.Key, "type": e.Type, "ttl_ms": e.TTL.Milliseconds(),
					"jitter_ms": e.TTLJitter.Milliseconds(), "persistent": e.Persistent,
					"fields": e.Fields, "fields_extra": e.FieldsExtra}
			}
		}
		t.Fatalf("no template %s in testdata/keyguard.yaml", template)
		return nil
	}
}

func TestTTLPolicy(t *testing.T) {
	tg := serverTarget(t)
	entry := policyEntries(t)
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

// TestDeclaredFields: in every language, a template that declares its
// values' fields is written with them alone. The TTL policy refuses, before
// sending anything, a hash field the template does not declare, a string
// that is not a JSON object and an object with an undeclared key (reason
// schema, naming the undeclared fields), and writes declared ones; the
// guard refuses an undeclared field of a key of the generated builders
// (Python and TypeScript, whose keys carry their template), or of any key
// when built with the template's fields (Java).
func TestDeclaredFields(t *testing.T) {
	tg := serverTarget(t)
	entry := policyEntries(t)
	const item, rule = "promo:item:{itemId:int}", "promo:rule:{ruleId:int}"
	for i, name := range []string{"python", "ts-ioredis", "ts-node-redis", "java"} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			rt := startRuntime(t, name, tg)
			id := 100 * (i + 1)
			write := func(template string, id int, how string, extra req) (reply, string) {
				key := fmt.Sprintf("promo:item:%d", id)
				if template == rule {
					key = fmt.Sprintf("promo:rule:%d", id)
				}
				r := req{"op": "policy", "how": how, "template": template, "values": []any{id}, "key": key, "entry": entry(template)}
				for k, v := range extra {
					r[k] = v
				}
				return rt.Do(t, r), key
			}
			refused := func(what string, undeclared []string, rep reply, key string) {
				t.Helper()
				if rep.Err == nil || rep.Err.Kind != "policy" || rep.Err.Reason != "schema" {
					t.Fatalf("%s: %+v; want a policy error schema", what, rep)
				}
				if !slices.Equal(rep.Err.Undeclared, undeclared) && len(rep.Err.Undeclared)+len(undeclared) > 0 {
					t.Errorf("%s: undeclared %q, want %q (%s)", what, rep.Err.Undeclared, undeclared, rep.Err.Message)
				}
				if tg.rdb.Exists(ctx, key).Val() != 0 {
					t.Errorf("%s: %s was written", what, key)
				}
			}
			rep, key := write(item, id, "hset", req{"fields": map[string]any{"price": "1", "couponAmount": "5"}})
			refused("an undeclared hash field", []string{"couponAmount"}, rep, key)
			rep, key = write(rule, id, "set", req{"value": "15% off"})
			refused("text in a JSON template", nil, rep, key)
			rep, key = write(rule, id+1, "set", req{"value": `[{"activityId": 1}]`})
			refused("an array in a JSON template", nil, rep, key)
			rep, key = write(rule, id+2, "set", req{"value": `{"activityId": 1, "promoTotal": 2}`})
			refused("an undeclared JSON key", []string{"promoTotal"}, rep, key)
			rep, key = write(rule, id+3, "set", req{"value": `{"activityId": 1,`})
			refused("a broken JSON object", nil, rep, key)

			rep, key = write(item, id+9, "hset", req{"fields": map[string]any{"price": "1", "stock": "2"}})
			rep.must(t, name+" declared hset", nil)
			if ttl := tg.rdb.PTTL(ctx, key).Val(); ttl <= 0 {
				t.Errorf("%s: a declared hset left %s with TTL %v", name, key, ttl)
			}
			rep, key = write(rule, id+9, "set", req{"value": ` {"activityId": 7, "discountValue": "0.5\u00e9"} `})
			rep.must(t, name+" declared set", nil)
			if tg.rdb.Exists(ctx, key).Val() != 1 {
				t.Errorf("%s: the declared set of %s wrote nothing", name, key)
			}
			guarded := fmt.Sprintf("promo:item:%d", id+5)
			g := req{"op": "hset", "owner": "promo-service:item", "template": item, "values": []any{id + 5}}
			if name == "java" { // Java's guard takes keys as strings, and is built with the template's fields
				e := entry(item)
				g = req{"op": "hset", "owner": "promo-service:item", "key": guarded,
					"declared": map[string]any{"template": item, "fields": e["fields"], "fields_extra": e["fields_extra"]}}
			}
			g["fields"] = map[string]any{"stock": "3", "promoTotal": "9"}
			refused("a guarded write of an undeclared field", []string{"promoTotal"}, rt.Do(t, g), guarded)
			g["fields"] = map[string]any{"stock": "3"}
			rt.Do(t, g).must(t, name+" guarded declared write", nil)
			if tg.rdb.HGet(ctx, guarded, "stock").Val() != "3" {
				t.Errorf("%s: the guarded declared write did not write %s", name, guarded)
			}
		})
	}
}

// TestJavaJSONKeys holds the Java package's JSON reader (the top-level keys
// its TtlPolicy checks against declared fields; Java has no JSON parser of
// its own to lean on) to the Go SDK's, jsonkeys.Valid: the same texts are
// JSON objects, with the same keys, on a corpus of objects, near-misses and
// a few thousand random mutations of them.
func TestJavaJSONKeys(t *testing.T) {
	rt := startRuntime(t, "java", serverTarget(t))
	corpus := []string{
		`{}`, ` { } `, `{"a":1}`, `{"a":1,"b":[1,2,{"c":null}],"d":{"e":"f"}}`, `{"a\"b":true,"c\\d":false}`,
		`{"\u0041\u00e9":-0.5e+10}`, `{"é":"ü","a b":"\n"}`, `{"a":01}`, `{"a":1,}`, `{"a" 1}`, `{a:1}`, `[]`, `[{"a":1}]`,
		`"text"`, `42`, `null`, `true`, `{"a":"b"} x`, `{"a":"b"`, `{"a":1.}`, `{"a":-}`, `{"a":1e}`, `{"a":"\x"}`,
		`{"a":"\u12"}`, `{"a":[1,2,]}`, `{"a":tru}`, `{"a":nul}`, "{\"a\":\"\t\"}", "\t{\"a\":0}\r\n", `{"":""}`,
		`{"a":{"b":{"c":{"d":[[[[]]]]}}}}`, `{"a":1}{"b":2}`, `{"a":-0,"b":0.0e0,"c":1E-2}`,
	}
	const alphabet = `{}[]":,\ 0123456789.eE+-tfnlruaxé` + "\t\n"
	rnd := rand.New(rand.NewPCG(28, 1))
	texts := slices.Clone(corpus)
	runes := []rune(alphabet)
	for range 3000 {
		s := []rune(corpus[rnd.IntN(len(corpus))])
		for range 1 + rnd.IntN(3) {
			at := rnd.IntN(len(s) + 1)
			switch rnd.IntN(3) {
			case 0: // insert
				s = slices.Insert(s, at, runes[rnd.IntN(len(runes))])
			case 1: // delete
				if at < len(s) {
					s = slices.Delete(s, at, at+1)
				}
			default: // replace
				if at < len(s) {
					s[at] = runes[rnd.IntN(len(runes))]
				}
			}
		}
		texts = append(texts, string(s))
	}
	objects := 0
	for _, s := range texts {
		var want []string
		ok := jsonkeys.Valid(s, func(k string) { want = append(want, k) })
		var got struct {
			Keys []string `json:"keys"`
		}
		rt.Do(t, req{"op": "jsonkeys", "value": s}).must(t, "jsonkeys", &got)
		if (got.Keys != nil) != ok {
			t.Errorf("%q: Java says JSON object %v, Go %v", s, got.Keys != nil, ok)
			continue
		}
		if ok {
			objects++
			if !slices.Equal(got.Keys, want) && !(len(got.Keys) == 0 && len(want) == 0) {
				t.Errorf("%q: Java keys %q, Go %q", s, got.Keys, want)
			}
		}
	}
	if objects < 100 || len(texts)-objects < 1000 {
		t.Errorf("%d of %d texts were JSON objects: the corpus tests too little of one side", objects, len(texts))
	}
}
