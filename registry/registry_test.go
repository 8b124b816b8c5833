package registry

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/keyguard/keyguard/finding"
)

func TestLoadSpecExample(t *testing.T) {
	r, err := Load("testdata/spec.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Entries) != 5 || len(r.Domains) != 2 || r.Separator != ':' || r.Policy.MaxKeyBytes != 64 || !r.Policy.RequireTTL {
		t.Fatalf("loaded %+v", r)
	}
	e := r.Lookup("promo:order:1001:promo-info")
	if e == nil || e.Owner != "promo-team" || !e.Guard || e.TTL != 10*time.Minute || e.Type != "hash" {
		t.Fatalf("promo entry = %+v", e)
	}
	hot := r.Lookup("product:hot:sku-9")
	if hot == nil || hot.Hot == nil || hot.Hot.Replicas != 10 || hot.Hot.LocalTTL != 10*time.Second || hot.TTLJitter != 5*time.Minute {
		t.Fatalf("hot entry = %+v", hot)
	}
	v, caps := r.Classify("verify:sms:9f86d081884c7d65:LOGIN")
	if v == nil || len(caps) != 2 || caps[1].Value != "LOGIN" || !v.MayWrite("sms-service") || v.MayWrite("order-team") {
		t.Fatalf("verify entry = %+v %v", v, caps)
	}
	if s := r.Lookup("seq:order:no"); s == nil || !s.Persistent {
		t.Fatal("seq entry")
	}
	if r.Lookup("promo:sku:1001") != nil {
		t.Fatal("unregistered key matched")
	}
}

func TestLoadSeed000BareList(t *testing.T) {
	r, err := Load("testdata/seed000.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !r.BareList || len(r.Entries) != 2 {
		t.Fatalf("bare list not loaded: %+v", r)
	}
	e := r.Lookup("promo:order:1001:promo-info")
	if e == nil || e.Owner != "promo-team" || e.TTL != 600*time.Second || e.EntityType != "order" || e.Attribute != "promo-info" {
		t.Fatalf("entry = %+v", e)
	}
	if d, ok := r.Domain("promo"); !ok || d.Owner != "promo-team" {
		t.Fatalf("domain promo = %+v", d)
	}
	for _, f := range r.Lint() {
		if f.Severity >= finding.Warning {
			t.Errorf("seed example lints with %s: %s", f.Rule, f.Message)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	for _, tt := range []struct {
		name, yaml string
		want       []string // "line:col: substring", in order
	}{
		{"syntax", "version: 1\nkeys:\n  - key: a\n   bad: x\n", []string{"4:4: YAML syntax"}},
		{"unknown field", "version: 1\nkeys:\n  - key: \"a:b\"\n    tll: 1h\n", []string{"4:5: key entry: unknown field \"tll\""}},
		{"did you mean", "version: 1\nkeys:\n  - key: \"a:b\"\n    tll: 1h\n", []string{"did you mean \"ttl\""}},
		{"all problems", "version: 1\nkeys:\n  - key: \"a:b\"\n    ttl: soon\n  - key: \"a:{x:float}\"\n    type: hashmap\n", []string{
			"4:10: ttl: \"soon\" is not a duration",
			"5:14: template \"a:{x:float}\": placeholder {x}: unknown type",
			"6:11: type \"hashmap\"",
		}},
		{"top-level unknown", "version: 1\nkeyz: []\n", []string{"2:1: registry: unknown field \"keyz\""}},
		{"no version", "keys: []\n", []string{"no version"}},
		{"bad version", "version: 2\n", []string{"1:10: version 2 is not supported"}},
		{"empty", "", []string{"empty registry"}},
		{"duplicate name", "version: 1\nkeys:\n  - key: \"a:b\"\n    name: X\n    ttl: 1\n  - key: \"a:c\"\n    name: X\n    ttl: 1\n", []string{"7:11: name \"X\" is already used"}},
		{"separator", "version: 1\nseparator: \"::\"\n", []string{"2:12: separator"}},
		{"deprecated target", "version: 1\nkeys:\n  - key: \"a:b\"\n    ttl: 1\n    deprecated: {replaced_by: \"a:z\"}\n", []string{"3:10: deprecated: replaced_by \"a:z\""}},
		{"bad name", "version: 1\nkeys:\n  - key: \"a:b\"\n    name: 9x\n    ttl: 1\n", []string{"4:11: name \"9x\" is not an identifier"}},
		{"pii value", "version: 1\nkeys:\n  - key: \"a:b\"\n    ttl: 1\n    pii: maybe\n", []string{"5:10: pii: \"maybe\""}},
		{"keys not list", "version: 1\nkeys: {a: b}\n", []string{"2:7: keys must be a list"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("k.yaml", []byte(tt.yaml))
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v is not ErrInvalid", err)
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T is not a *ParseError", err)
			}
			msg := err.Error()
			last := 0
			for _, w := range tt.want {
				i := strings.Index(msg[last:], w)
				if i < 0 {
					t.Fatalf("error\n%s\ndoes not contain %q (after offset %d)", msg, w, last)
				}
				last += i
			}
		})
	}
}

func lintRules(t *testing.T, yaml string) map[string]finding.Severity {
	t.Helper()
	r, err := Parse("k.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]finding.Severity{}
	for _, f := range r.Lint() {
		if s, ok := out[f.Rule]; !ok || f.Severity > s {
			out[f.Rule] = f.Severity
		}
	}
	return out
}

const lintHead = "version: 1\ndomains:\n  order: {owner: order-team}\n  promo: {owner: promo-team}\n  lock: {owner: order-team}\n  verify: {owner: auth}\n  rate: {owner: auth}\nkeys:\n"

func TestLintRules(t *testing.T) {
	for _, tt := range []struct {
		rule     string
		bad, ok  string // key entries (indented list items)
		severity finding.Severity
	}{
		{finding.Overlap, "  - {key: \"promo:{x}:1001\", ttl: 1m}\n  - {key: \"promo:sku:{id:int}\", ttl: 1m, owner: order-team}\n",
			"  - {key: \"promo:{x}:1001\", ttl: 1m}\n  - {key: \"promo:sku:{id:uuid}\", ttl: 1m, owner: order-team}\n", finding.Error},
		{finding.Domain, "  - {key: \"user:{id}:x\", ttl: 1m, owner: x}\n", "  - {key: \"order:{id}:x\", ttl: 1m}\n", finding.Error},
		{finding.NoTTL, "  - {key: \"order:{id}:x\"}\n", "  - {key: \"order:no\", persistent: true}\n", finding.Error},
		{finding.Case, "  - {key: \"order:Order:{id}\", ttl: 1m}\n", "  - {key: \"order:order:{id}\", ttl: 1m}\n", finding.Warning},
		{finding.Charset, "  - {key: \"order:a b:{id}\", ttl: 1m}\n", "  - {key: \"order:a_b:{id}\", ttl: 1m}\n", finding.Error},
		{finding.Length, "  - {key: \"order:payment:history:user:{userId:int}:page:{p:int}:size:{s:int}:sort\", ttl: 1m}\n", "  - {key: \"order:{id:int}\", ttl: 1m}\n", finding.Warning},
		{finding.LeadingID, "  - {key: \"{id:int}:info\", ttl: 1m, owner: x}\n", "  - {key: \"order:{id:int}:info\", ttl: 1m}\n", finding.Warning},
		{finding.Timestamp, "  - {key: \"order:report:20240321\", ttl: 1m}\n", "  - {key: \"order:report:{day:date}\", ttl: 1m}\n", finding.Warning},
		{finding.PII, "  - {key: \"rate:login:{phone}\", ttl: 1m}\n", "  - {key: \"rate:login:{phone}\", ttl: 1m, pii: allow}\n", finding.Error},
		{finding.TTLPolicy, "  - {key: \"lock:order:pay:{id}\", ttl: 1h}\n", "  - {key: \"lock:order:pay:{id}\", ttl: 30s}\n", finding.Warning},
		{finding.TTLPolicy, "  - {key: \"verify:sms:{p:hash}\", ttl: 1h}\n", "  - {key: \"verify:sms:{p:hash}\", ttl: 5m}\n", finding.Warning},
		{finding.TTLPolicy, "  - {key: \"order:x\", ttl: 1m, persistent: true}\n", "  - {key: \"order:x\", ttl: 1m}\n", finding.Error},
		{finding.TTLPolicy, "  - {key: \"order:x\", ttl: 1m, ttl_jitter: 2m}\n", "  - {key: \"order:x\", ttl: 10m, ttl_jitter: 2m}\n", finding.Error},
		{finding.KeyModel, "  - {key: \"order:order:{id}:base\", ttl: 1m, entityType: user}\n", "  - {key: \"order:order:{id}:base\", ttl: 1m, entityType: order, attribute: base}\n", finding.Warning},
		{finding.Owner, "  - {key: \"order:x\", ttl: 1m, owner: \"\"}\n", "  - {key: \"order:x\", ttl: 1m}\n", finding.Error},
	} {
		t.Run(tt.rule, func(t *testing.T) {
			got := lintRules(t, lintHead+tt.bad)
			if sev, ok := got[tt.rule]; !ok || sev != tt.severity {
				t.Errorf("bad case: rule %s = %v (present %v), want %v; all: %v", tt.rule, sev, ok, tt.severity, got)
			}
			if sev, ok := lintRules(t, lintHead+tt.ok)[tt.rule]; ok && sev >= tt.severity {
				t.Errorf("good case still reports %s", tt.rule)
			}
		})
	}
}

func TestHashTagTemplateLintsClean(t *testing.T) {
	got := lintRules(t, lintHead+"  - {key: \"{{order:{orderId:int}}}:items\", ttl: 1m}\n")
	if len(got) != 0 {
		t.Fatalf("hash-tag template lints with %v", got)
	}
	got = lintRules(t, lintHead+"  - {key: \"order:{{x:{orderId:int}\", ttl: 1m}\n")
	if _, ok := got[finding.Charset]; !ok {
		t.Fatalf("an unclosed literal brace is not reported: %v", got)
	}
}

func TestOverlapSameOwnerIsWarning(t *testing.T) {
	got := lintRules(t, lintHead+"  - {key: \"promo:{x}:1001\", ttl: 1m}\n  - {key: \"promo:sku:{id:int}\", ttl: 1m}\n")
	if got[finding.Overlap] != finding.Warning {
		t.Fatalf("overlap with one owner = %v", got[finding.Overlap])
	}
}

func TestEnvPrefix(t *testing.T) {
	r, err := Parse("k.yaml", []byte("version: 1\nenv: prod\ndomains: {order: {owner: o}}\nkeys:\n  - {key: \"order:{id:int}\", ttl: 1m}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Lookup("prod:order:1") == nil || r.Lookup("order:1") != nil {
		t.Fatal("env prefix not applied")
	}
	if fs := r.Lint(); len(fs) != 0 {
		t.Fatalf("lint: %+v", fs)
	}
}

func checkRules(t *testing.T, r *Registry, key string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	r.NewChecker().Check(key, func(f finding.Finding) { out[f.Rule] = true })
	return out
}

func TestCheckKeys(t *testing.T) {
	r, err := Load("testdata/spec.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		key  string
		want []string
		not  []string
	}{
		{"order:order:1001:base", nil, []string{finding.Unregistered}},
		{"promo:sku:1001", []string{finding.Unregistered}, []string{finding.Domain}},
		{"cart:sku:1001", []string{finding.Unregistered, finding.Domain}, nil},
		{"user_1024_token", []string{finding.Unregistered, finding.Separator}, nil},
		{"12345:info", []string{finding.LeadingID}, nil},
		{"tmp_data_20240321150322", []string{finding.Timestamp, finding.Separator}, nil},
		{"Order:Info:1", []string{finding.Case}, nil},
		{"order:x y", []string{finding.Charset}, nil},
		{"order:\x00\xff\n", []string{finding.Charset}, nil},
		{"rate:login:18812345678", []string{finding.PII}, nil},
		{"verify:email:test@example.com:BIND", []string{finding.PII}, nil},
		{"user:idcard:11010519491231002X", []string{finding.PII}, nil},
		{"order:idcard:110105194912310021", nil, []string{finding.PII}}, // bad checksum
		{"product:hot:18812345678", []string{finding.PII}, []string{finding.Unregistered}},
		{"product:hot:a b", []string{finding.Charset}, nil},
		{"order:" + strings.Repeat("x", 1<<20), []string{finding.Length}, nil},
		{"{order:1001}:items", nil, []string{finding.Charset}},
	} {
		got := checkRules(t, r, tt.key)
		for _, w := range tt.want {
			if !got[w] {
				t.Errorf("Check(%s) lacks %s; got %v", finding.Display(tt.key), w, got)
			}
		}
		for _, w := range tt.not {
			if got[w] {
				t.Errorf("Check(%s) reports %s", finding.Display(tt.key), w)
			}
		}
	}
}

func TestLookupAllocs(t *testing.T) {
	r, err := Load("testdata/spec.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if a := testing.AllocsPerRun(100, func() { r.Lookup("order:order:1001:base") }); a != 0 {
		t.Fatalf("Lookup allocates %v", a)
	}
}
