package inventory_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/audit/inventory"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/registry"
)

func loadReg(tb testing.TB) *registry.Registry {
	tb.Helper()
	r, err := registry.Load("testdata/keyguard.yaml")
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// rec is a clean record of key: a small hash with a 5-minute TTL and no
// frequency data. with changes what a case needs.
func rec(key string, with ...func(*inventory.Record)) *inventory.Record {
	r := &inventory.Record{Key: key, Node: "127.0.0.1:6379", Type: "hash", Bytes: 100, Elements: 3, TTL: 5 * time.Minute, Freq: -1}
	for _, f := range with {
		f(r)
	}
	return r
}

func typ(t string) func(*inventory.Record)        { return func(r *inventory.Record) { r.Type = t } }
func ttl(d time.Duration) func(*inventory.Record) { return func(r *inventory.Record) { r.TTL = d } }
func size(b, el int64) func(*inventory.Record) {
	return func(r *inventory.Record) { r.Bytes, r.Elements = b, el }
}
func freq(n int) func(*inventory.Record) { return func(r *inventory.Record) { r.Freq = n } }
func ns(probed, has bool, v string) func(*inventory.Record) {
	return func(r *inventory.Record) { r.NSProbed, r.HasNS, r.NS = probed, has, v }
}
func fields(fs ...string) func(*inventory.Record) { return func(r *inventory.Record) { r.Fields = fs } }

func meta() report.Meta {
	return report.Meta{
		Source:   report.Source{Kind: "redis", Target: "redis://127.0.0.1:6379", Nodes: 1},
		Registry: "testdata/keyguard.yaml", StartedAt: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC),
		Duration: 1234 * time.Millisecond, Complete: true,
	}
}

func findingsOf(rep *report.Report, rule, key string) []report.Finding {
	var out []report.Finding
	for _, f := range rep.Findings {
		if f.Rule == rule && f.Key == key {
			out = append(out, f)
		}
	}
	return out
}

func TestRecordRules(t *testing.T) {
	reg := loadReg(t)
	const (
		base    = "order:order:1001:base"
		info    = "promo:order:1001:promo-info"
		detail  = "cache:product:detail:p-1"
		seq     = "seq:order:no"
		list    = "order:list:7"
		unregd  = "user_1024_token"
		stamped = "tmp:data:20240321150322"
	)
	cases := []struct {
		name string
		rec  *inventory.Record
		rule string
		sev  finding.Severity
		want bool
	}{
		{"no-ttl on a template with a TTL", rec(base, ttl(-1)), finding.NoTTL, finding.Error, true},
		{"no-ttl: TTL present", rec(base), finding.NoTTL, 0, false},
		{"no-ttl: TTL unknown", rec(base, ttl(0)), finding.NoTTL, 0, false},
		{"no-ttl: persistent template", rec(seq, typ("string"), ttl(-1)), finding.NoTTL, 0, false},
		{"no-ttl on an unregistered key", rec(unregd, typ("string"), ttl(-1)), finding.NoTTL, finding.Warning, true},

		{"ttl-mismatch: TTL over the template's", rec(base, ttl(2*time.Hour)), finding.TTLMismatch, finding.Error, true},
		{"ttl-mismatch: at the TTL, within tolerance", rec(base, ttl(time.Hour+500*time.Millisecond)), finding.TTLMismatch, 0, false},
		{"ttl-mismatch: below", rec(base, ttl(59*time.Minute)), finding.TTLMismatch, 0, false},
		{"ttl-mismatch: within jitter", rec(detail, typ("string"), ttl(11*time.Minute)), finding.TTLMismatch, 0, false},
		{"ttl-mismatch: over TTL+jitter", rec(detail, typ("string"), ttl(13*time.Minute)), finding.TTLMismatch, finding.Error, true},
		{"ttl-mismatch: a TTL on a persistent template", rec(seq, typ("string"), ttl(10*time.Second)), finding.TTLMismatch, finding.Warning, true},
		{"ttl-mismatch: unregistered keys have no policy", rec(unregd, ttl(1000*time.Hour)), finding.TTLMismatch, 0, false},

		{"type-mismatch", rec(base, typ("string")), finding.TypeMismatch, finding.Error, true},
		{"type-mismatch: module type name", rec(list, typ("ReJSON-RL")), finding.TypeMismatch, finding.Error, true},
		{"type-mismatch: same type", rec(list, typ("list")), finding.TypeMismatch, 0, false},
		{"type-mismatch: type unknown", rec(base, typ("")), finding.TypeMismatch, 0, false},

		{"big-key by bytes", rec(base, size(2<<20, 10)), finding.BigKey, finding.Warning, true},
		{"big-key by elements", rec(list, typ("list"), size(1000, 20001)), finding.BigKey, finding.Warning, true},
		{"big-key on an unregistered key", rec(unregd, typ("string"), size(5<<20, 5<<20)), finding.BigKey, finding.Warning, true},
		{"big-key: at the limit", rec(base, size(1<<20, 10000)), finding.BigKey, 0, false},
		{"big-key: sizes unknown", rec(base, size(-1, -1)), finding.BigKey, 0, false},
		{"big-key: a string's length is bytes, not elements", rec(detail, typ("string"), size(1000, 20001)), finding.BigKey, 0, false},
		{"big-key: unregistered string under the byte limit", rec(unregd, typ("string"), size(1000, 50000)), finding.BigKey, 0, false},

		{"guard/ownerless", rec(info, ns(true, false, "")), finding.GuardOwnerless, finding.Error, true},
		{"guard/ownerless: not probed", rec(info), finding.GuardOwnerless, 0, false},
		{"guard/ownerless: owner present", rec(info, ns(true, true, "promo-team")), finding.GuardOwnerless, 0, false},
		{"guard/ownerless: not a hash", rec(info, typ("string"), ns(true, false, "")), finding.GuardOwnerless, 0, false},
		{"guard/ownerless: unguarded template", rec(base, ns(true, false, "")), finding.GuardOwnerless, 0, false},
		{"guard/foreign-owner", rec(info, ns(true, true, "auth-team")), finding.GuardForeign, finding.Error, true},
		{"guard/foreign-owner: service:scope of another team", rec(info, ns(true, true, "auth-team:promo")), finding.GuardForeign, finding.Error, true},
		{"guard/foreign-owner: the owner", rec(info, ns(true, true, "promo-team")), finding.GuardForeign, 0, false},
		{"guard/foreign-owner: the owner with a scope", rec(info, ns(true, true, "promo-team:promo")), finding.GuardForeign, 0, false},
		{"guard/foreign-owner: a declared writer", rec(info, ns(true, true, "order-team")), finding.GuardForeign, 0, false},

		{"unregistered", rec(unregd, typ("string")), finding.Unregistered, finding.Error, true},
		{"unregistered: registered key", rec(base), finding.Unregistered, 0, false},
		{"naming/separator", rec(unregd, typ("string")), finding.Separator, finding.Warning, true},
		{"naming/timestamp", rec(stamped, typ("string")), finding.Timestamp, finding.Warning, true},
		{"naming/case", rec("order:User:1", typ("string")), finding.Case, finding.Warning, true},
		{"naming/charset: binary key", rec("order:\xff\x00:1", typ("string")), finding.Charset, finding.Error, true},
		{"pii in a placeholder", rec("rate:login:13812345678", typ("string"), ttl(time.Minute)), finding.PII, finding.Warning, true},
		{"domain", rec("nosuch:thing:1", typ("string")), finding.Domain, finding.Warning, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			agg := inventory.New(reg, inventory.Options{})
			add(agg, c.rec)
			rep := agg.Report(meta())
			got := findingsOf(rep, c.rule, c.rec.Key)
			if c.want != (len(got) > 0) {
				t.Fatalf("%s on %q: got %v, want %v\nall findings: %+v", c.rule, c.rec.Key, got, c.want, rep.Findings)
			}
			if c.want {
				f := got[0]
				if f.Severity != c.sev {
					t.Errorf("severity %s, want %s", f.Severity, c.sev)
				}
				if f.Message == "" || f.Template == "" {
					t.Errorf("finding without message or template: %+v", f)
				}
				if rep.Summary.ByRule[c.rule] != 1 {
					t.Errorf("summary by_rule[%s] = %d, want 1", c.rule, rep.Summary.ByRule[c.rule])
				}
			}
		})
	}
}

// STRLEN is the element count of a string, so for strings only the byte
// limit applies, and the message speaks of bytes.
func TestBigKeyString(t *testing.T) {
	agg := inventory.New(loadReg(t), inventory.Options{})
	add(agg, rec("cache:product:detail:p-1", typ("string"), size(2<<20, 2<<20)))
	add(agg, rec("order:list:1", typ("list"), size(2<<20, 20001)))
	rep := agg.Report(meta())
	str := findingsOf(rep, finding.BigKey, "cache:product:detail:p-1")
	if len(str) != 1 || strings.Contains(str[0].Message, "element") || !strings.Contains(str[0].Message, "2.0 MiB") {
		t.Errorf("big string: %+v", str)
	}
	list := findingsOf(rep, finding.BigKey, "order:list:1")
	if len(list) != 1 || !strings.Contains(list[0].Message, "20001 elements") {
		t.Errorf("big list: %+v", list)
	}
}

func TestCleanKeysHaveNoFindings(t *testing.T) {
	reg := loadReg(t)
	agg := inventory.New(reg, inventory.Options{})
	for i := range 100 {
		add(agg, rec(fmt.Sprintf("order:order:%d:base", i), ttl(time.Duration(i+1)*time.Second), freq(5)))
		add(agg, rec(fmt.Sprintf("promo:order:%d:promo-info", i), ns(true, true, "promo-team:promo")))
		add(agg, rec(fmt.Sprintf("cache:product:detail:p%d", i), typ("string"), ttl(11*time.Minute)))
	}
	add(agg, rec("seq:order:no", typ("string"), ttl(-1)))
	rep := agg.Report(meta())
	if len(rep.Findings) != 0 || rep.Summary.Findings != 0 {
		t.Fatalf("clean keys gave findings: %+v", rep.Findings)
	}
	if rep.Summary.Keys != 301 || rep.Summary.Unregistered != 0 || rep.Summary.NoTTL != 1 {
		t.Errorf("summary %+v", rep.Summary)
	}
}

func TestHotKey(t *testing.T) {
	reg := loadReg(t)
	agg := inventory.New(reg, inventory.Options{HotKeys: 3, HotFreqFloor: 50})
	add(agg, rec("order:order:1:base", freq(200)))
	add(agg, rec("cache:product:detail:p-9", typ("string"), ttl(10*time.Minute), freq(180))) // protected: hot: in the registry
	add(agg, rec("order:order:2:base", freq(40)))                                            // in the top 3, under the floor
	add(agg, rec("order:order:3:base", freq(30)))                                            // out of the top 3
	add(agg, rec("order:order:4:base", freq(5)))
	rep := agg.Report(meta())
	hot := map[string]finding.Severity{}
	for _, f := range rep.Findings {
		if f.Rule == finding.HotKey {
			hot[f.Key] = f.Severity
		}
	}
	want := map[string]finding.Severity{"order:order:1:base": finding.Warning, "cache:product:detail:p-9": finding.Info}
	if fmt.Sprint(hot) != fmt.Sprint(want) {
		t.Fatalf("hot keys %v, want %v", hot, want)
	}
	for _, n := range rep.Notes {
		if strings.HasPrefix(n, "hot-key") {
			t.Errorf("note %q with LFU data present", n)
		}
	}

	// Without frequency data the report says hot-key data is missing,
	// unless the walker already said why.
	agg = inventory.New(reg, inventory.Options{})
	add(agg, rec("order:order:1:base"))
	if rep := agg.Report(meta()); len(rep.Notes) != 1 || !strings.HasPrefix(rep.Notes[0], "hot-key data unavailable") {
		t.Errorf("notes %q", rep.Notes)
	}
	m := meta()
	m.Notes = []string{"hot-key data unavailable: maxmemory-policy is allkeys-lru, not LFU"}
	if rep := agg.Report(m); len(rep.Notes) != 1 || rep.Notes[0] != m.Notes[0] {
		t.Errorf("notes %q", rep.Notes)
	}
}

// The seed 000 §1.1 incident: the promotion service writes activity
// fields, the order service writes its settlement preview into the same
// key, and keys both wrote hold the union.
func TestMixedSchema(t *testing.T) {
	reg := loadReg(t)
	promo := []string{"activityId", "discountType", "discountValue"}
	order := []string{"couponAmount", "promoTotal"}
	cases := []struct {
		name  string
		add   func(agg *inventory.Aggregator)
		mixed []string
	}{
		{"two writers, some keys mixed", func(agg *inventory.Aggregator) {
			for i := range 40 {
				add(agg, rec(fmt.Sprintf("promo:sku:%d", i), fields(promo...)))
			}
			for i := 40; i < 60; i++ {
				add(agg, rec(fmt.Sprintf("promo:sku:%d", i), fields(order...)))
			}
			add(agg, rec("promo:sku:1001", fields(append(slices(promo), order...)...)))
			add(agg, rec("promo:sku:1002", fields("activityId", "discountValue", "promoTotal")))
		}, []string{"promo:sku:1001", "promo:sku:1002"}},
		{"optional fields of one writer", func(agg *inventory.Aggregator) {
			for i := range 60 {
				fs := slices(promo)
				if i%3 == 0 {
					fs = append(fs, "remark")
				}
				if i%5 == 0 {
					fs = append(fs, "limitPerUser", "endAt")
				}
				add(agg, rec(fmt.Sprintf("promo:sku:%d", i), fields(fs...)))
			}
		}, nil},
		{"per-id field names", func(agg *inventory.Aggregator) {
			for i := range 60 {
				add(agg, rec(fmt.Sprintf("auth:session:u%d", i), fields(fmt.Sprint(i*7), fmt.Sprint(i*7+1), "token")))
			}
		}, nil},
		{"random field names", func(agg *inventory.Aggregator) {
			for i := range 60 {
				add(agg, rec(fmt.Sprintf("auth:session:u%d", i), fields(fmt.Sprintf("f%x", i*7919)+"zz", fmt.Sprintf("g%xq", i*104729))))
			}
		}, nil},
		{"JSON string values of an unregistered family", func(agg *inventory.Aggregator) {
			for i := range 30 {
				add(agg, rec(fmt.Sprintf("promo:cart:%d", i), typ("string"), fields("items", "total")))
				add(agg, rec(fmt.Sprintf("promo:cart:%d", i+100), typ("string"), fields("couponId", "discount")))
			}
			add(agg, rec("promo:cart:999", typ("string"), fields("items", "total", "couponId", "discount")))
		}, []string{"promo:cart:999"}},
		{"too few samples", func(agg *inventory.Aggregator) {
			add(agg, rec("promo:sku:1", fields(promo...)))
			add(agg, rec("promo:sku:2", fields(order...)))
			add(agg, rec("promo:sku:3", fields(append(slices(promo), order...)...)))
		}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			agg := inventory.New(reg, inventory.Options{})
			c.add(agg)
			rep := agg.Report(meta())
			var got []string
			for _, f := range rep.Findings {
				if f.Rule == finding.MixedSchema {
					got = append(got, f.Key)
					if !strings.Contains(f.Message, "{") || f.Severity != finding.Error {
						t.Errorf("finding %+v", f)
					}
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(c.mixed) {
				t.Fatalf("mixed-schema on %v, want %v", got, c.mixed)
			}
			if len(c.mixed) > 0 {
				t.Log(findingsOf(rep, finding.MixedSchema, c.mixed[0])[0].Message)
			}
		})
	}
}

func slices(s []string) []string { return append([]string(nil), s...) }

func TestClassifyNSAndFields(t *testing.T) {
	reg := loadReg(t)
	agg := inventory.New(reg, inventory.Options{})
	if !agg.Classify("promo:order:1:promo-info").NS || agg.Classify("order:order:1:base").NS || agg.Classify("nosuch").NS {
		t.Error("Class.NS: only guard templates")
	}
	if agg.Classify("order:list:1").Fields {
		t.Error("Class.Fields on a list template")
	}
	if !agg.Classify("order:order:1:base").Fields || !agg.Classify("user:1:profile").Fields {
		t.Error("Class.Fields false on an empty sample")
	}
	if agg.Classify(strings.Repeat("k", 10000)).Fields {
		t.Error("Class.Fields on a 10 kB key")
	}
	// Every value is read: a census counts them all.
	asked := 0
	for i := range 10000 {
		k := fmt.Sprintf("order:order:%d:base", i)
		r := rec(k)
		cl := agg.Classify(k)
		if cl.Fields {
			asked++
			r.Fields = []string{"amount", "status"}
		}
		agg.Add(r, cl)
	}
	if asked != 10000 {
		t.Errorf("fields asked for %d of 10000 keys", asked)
	}
}

func registryFrom(yaml string) (*registry.Registry, error) {
	return registry.Parse("test.yaml", []byte(yaml))
}

// mixed-schema by contrast: another owner's characteristic fields are
// found in one value of 20 and in a third of the values; the same
// fields written by another template of the same owner, or by nobody
// else, are optional fields; in half the values they are the template's
// own style (the rule's documented limit).
func TestMixedSchemaByContrast(t *testing.T) {
	reg, err := registryFrom(`version: 1
domains:
  promo: {owner: promo-team}
  order: {owner: order-team}
keys:
  - {key: "promo:sku:{id:int}", type: hash, ttl: 1h}
  - {key: "promo:act:{id:int}", type: hash, ttl: 1h}
  - {key: "order:pre:{id:int}", type: hash, ttl: 1h}
`)
	if err != nil {
		t.Fatal(err)
	}
	promo := []string{"activityId", "discountType", "discountValue"}
	for _, c := range []struct {
		name    string
		size    int
		foreign int    // promo:sku values holding the fields
		writer  string // the template that writes them everywhere
		want    int    // mixed-schema findings
	}{
		{"one key of 20", 20, 1, "order:pre:", 1},
		{"a third", 300, 100, "order:pre:", 100},
		{"same owner", 300, 100, "promo:act:", 0},
		{"nobody else", 300, 100, "", 0},
		{"half", 300, 150, "order:pre:", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			agg := inventory.New(reg, inventory.Options{})
			for i := range c.size {
				fs := slices(promo)
				if i < c.foreign {
					fs = append(fs, "couponAmount", "promoTotal")
				}
				add(agg, rec(fmt.Sprintf("promo:sku:%d", i), fields(fs...)))
			}
			if c.writer != "" {
				for i := range 10 {
					add(agg, rec(fmt.Sprintf("%s%d", c.writer, i), fields("couponAmount", "promoTotal", "updatedAt")))
				}
			}
			rep := agg.Report(meta())
			if got := rep.Summary.ByRule[finding.MixedSchema]; got != int64(c.want) {
				t.Errorf("%d mixed-schema findings, want %d", got, c.want)
			}
			for _, f := range rep.Findings {
				if f.Rule == finding.MixedSchema && !strings.Contains(f.Message, "which order-team writes in order:pre:{id:int}") {
					t.Errorf("names the wrong template: %s", f.Message)
				}
			}
		})
	}
}

// TestTTLMismatchMessages: a ttl-mismatch finding's message names the
// key's TTL as human.Duration writes it, whether the list kept the TTL
// apart from the text (1 s to 194 days) or the text holds it (shorter,
// longer), listed alone or among findings of other TTLs in one list, and
// after a cap dropped some.
func TestTTLMismatchMessages(t *testing.T) {
	reg := loadReg(t)
	over := func(ttl, policy string) string {
		return "expires in " + ttl + ", over the template's " + policy + ": someone else set this TTL"
	}
	persistent := func(ttl string) string {
		return "expires in " + ttl + ", but the template is persistent: the key will vanish"
	}
	cases := []struct {
		key  string
		ttl  time.Duration
		want string
	}{
		{"order:order:1:base", 2 * time.Hour, over("2h", "1h")},
		{"order:order:2:base", 2*time.Hour + 400*time.Millisecond, over("2h", "1h")},
		{"order:order:3:base", 2*time.Hour + 600*time.Millisecond, over("2h1s", "1h")},
		{"order:order:4:base", 26*time.Hour + 36*time.Minute + 22*time.Second, over("1d2h36m22s", "1h")},
		{"order:order:5:base", 194*24*time.Hour + 4*time.Hour + 20*time.Minute + 15*time.Second, over("194d4h20m15s", "1h")}, // 2^24-1 s
		{"order:order:6:base", 194*24*time.Hour + 4*time.Hour + 20*time.Minute + 16*time.Second, over("194d4h20m16s", "1h")}, // one more: in the text
		{"order:order:7:base", 300 * 24 * time.Hour, over("300d", "1h")},
		{"cache:product:detail:p-1", 13 * time.Minute, over("13m", "10m+2m")},
		{"seq:order:no", 1400 * time.Millisecond, persistent("1s")},
		{"seq:order:no:x", 0, ""}, // unregistered: no ttl-mismatch
	}
	for _, capped := range []int{0, 3} { // 0: the default cap, 10,000
		agg := inventory.New(reg, inventory.Options{MaxFindings: capped})
		for i, c := range cases {
			// Sizes in the order of the cases, largest last: with a cap
			// of 3 the last three are listed.
			r := rec(c.key, typ("string"), ttl(c.ttl), size(int64(100+i), 1))
			if strings.HasPrefix(c.key, "order:") {
				r.Type = "hash"
			}
			add(agg, r)
		}
		// A persistent key with less than a second left: in the text.
		agg2 := inventory.New(reg, inventory.Options{MaxFindings: capped})
		add(agg2, rec("seq:order:no", typ("string"), ttl(500*time.Millisecond)))
		rep := agg.Report(meta())
		listed := 0
		for _, c := range cases {
			got := findingsOf(rep, finding.TTLMismatch, c.key)
			if c.want == "" || len(got) == 0 {
				if c.want == "" && len(got) > 0 {
					t.Errorf("cap %d: %s: unexpected %+v", capped, c.key, got)
				}
				continue
			}
			listed++
			if got[0].Message != c.want {
				t.Errorf("cap %d: %s (TTL %v): message %q, want %q", capped, c.key, c.ttl, got[0].Message, c.want)
			}
		}
		if want := map[int]int{0: 9, 3: 3}[capped]; listed != want {
			t.Errorf("cap %d: %d ttl-mismatch findings listed, want %d", capped, listed, want)
		}
		if n := rep.Summary.ByRule[finding.TTLMismatch]; n != 9 {
			t.Errorf("cap %d: %d counted, want 9", capped, n)
		}
		got := findingsOf(agg2.Report(meta()), finding.TTLMismatch, "seq:order:no")
		if len(got) != 1 || got[0].Message != persistent("500ms") {
			t.Errorf("cap %d: under a second: %+v", capped, got)
		}
	}
}
