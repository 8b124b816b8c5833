package investigate

import (
	"strings"
	"testing"
	"time"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/monitor"
)

const concludeRegistry = `
version: 1
domains:
  promo: {owner: promo-team}
  order: {owner: order-team}
  verify: {owner: auth-team}
keys:
  - key: "promo:sku:{skuId:int}"
    type: hash
    ttl: 10m
  - key: "order:sku:{skuId:int}:settle-preview"
    type: hash
    ttl: 5m
  - key: "verify:sms:{phone}"
    type: string
    ttl: 5m
    writers: [auth-service, sms-service]
`

// captured feeds MONITOR lines to one node's capture with the given
// clients (addr=name pairs).
func captured(t *testing.T, clients map[string]string, lines ...string) *NodeCapture {
	t.Helper()
	a := NewAttributor(0, func(string) bool { return true })
	for _, s := range lines {
		l, err := monitor.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		a.Feed(&l)
	}
	nc := &NodeCapture{Addr: "n1", att: a, clients: map[string][]Client{}}
	for addr, name := range clients {
		nc.clients[addr] = []Client{{Addr: addr, Name: name}}
	}
	return nc
}

func TestConcludeWriters(t *testing.T) {
	reg := testReg(t, concludeRegistry)
	nc := captured(t, map[string]string{"10.0.0.7:1": "order-service", "10.0.0.8:1": "auth-service", "10.0.0.9:1": "sms-service", "10.0.0.1:1": DefaultSelf},
		`1.1 [0 10.0.0.7:1] "hset" "promo:sku:5" "couponAmount" "1"`, // a foreign writer alone
		`1.2 [0 10.0.0.8:1] "set" "verify:sms:ab" "123456" "EX" "300"`,
		`1.3 [0 10.0.0.9:1] "set" "verify:sms:ab" "654321" "EX" "300"`, // an explicitly shared key
		`1.4 [0 10.0.0.3:5] "set" "promo:sku:6" "x"`,                   // unnamed, gone before CLIENT LIST
		`1.5 [0 10.0.0.4:5] "hset" "promo:sku:6" "a" "b"`,              // unnamed too
		`1.6 [0 10.0.0.1:1] "hset" "promo:sku:7" "a" "b"`,              // keyguard's own connection
	)
	r := &Report{Capture: &CaptureResult{}}
	conclude(r, parts{reg: reg, caps: []*NodeCapture{nc}, styles: DeclaredStyles(reg), self: DefaultSelf, interval: time.Second})
	got := map[string]finding.Finding{}
	for _, f := range r.Findings {
		got[f.Rule+" "+f.Key] = f
	}
	if f, ok := got[finding.ForeignWriter+" promo:sku:5"]; !ok || f.Severity != finding.Error || !strings.Contains(f.Hint, "order:sku:{skuId:int}:settle-preview") || !strings.Contains(f.Hint, "order:sku:5:settle-preview") {
		t.Errorf("foreign writer: %+v", f)
	}
	if f, ok := got[finding.SecondWriter+" verify:sms:ab"]; !ok || f.Severity != finding.Info || !strings.Contains(f.Message, "every writer is allowed") {
		t.Errorf("shared key: %+v", f)
	}
	if f, ok := got[finding.SecondWriter+" promo:sku:6"]; !ok || f.Severity != finding.Error || !strings.Contains(f.Hint, "name the connections") {
		t.Errorf("unnamed writers: %+v", f)
	}
	if activity(r, "promo:sku:7") != nil {
		t.Error("keyguard's own connection counted")
	}
	said := strings.Join(r.Conclusion, "\n")
	if !strings.Contains(said, "connections from 10.0.0.3 and 10.0.0.4 carry no client name") {
		t.Errorf("conclusion:\n%s", said)
	}
}

func TestConcludeTemplateStyles(t *testing.T) {
	reg := testReg(t, concludeRegistry)
	keys := []*KeyInfo{
		{Key: "promo:sku:1", Type: "hash", TTLms: 500_000, Shape: newShape("hash", "", []string{"a", "b"}, 2)},
		{Key: "promo:sku:2", Type: "hash", TTLms: 500_000, Shape: newShape("hash", "", []string{"a", "b"}, 2)},
		{Key: "promo:sku:3", Type: "hash", TTLms: 500_000, Shape: newShape("hash", "", []string{"x", "y"}, 2)},
		{Key: "verify:sms:\x00\xff", Type: "hash", TTLms: -1, Shape: newShape("hash", "", []string{"code"}, 1)},
	}
	for _, k := range keys {
		if e := reg.Lookup(k.Key); e != nil {
			k.Template, k.Owner, k.Registered = e.Key, e.Owner, true
		}
	}
	r := &Report{}
	conclude(r, parts{reg: reg, keys: keys, styles: DeclaredStyles(reg), self: DefaultSelf, interval: time.Second})
	var tmpl, typ, noTTL *finding.Finding
	for i, f := range r.Findings {
		switch {
		case f.Rule == finding.MixedSchema && f.Key == "" && f.Template == "promo:sku:{skuId:int}":
			tmpl = &r.Findings[i]
		case f.Rule == finding.TypeMismatch:
			typ = &r.Findings[i]
		case f.Rule == finding.NoTTL:
			noTTL = &r.Findings[i]
		}
	}
	if tmpl == nil || !strings.Contains(tmpl.Message, "hold 2 styles: A {a, b} in `promo:sku:1` and `promo:sku:2`; B {x, y} in `promo:sku:3`") {
		t.Errorf("template with two styles: %+v\n%+v", tmpl, r.Findings)
	}
	if typ == nil || noTTL == nil || typ.Key != "verify:sms:\x00\xff" || noTTL.Key != "verify:sms:\x00\xff" {
		t.Errorf("type-mismatch %+v, no-ttl %+v", typ, noTTL)
	}
	for _, s := range r.Conclusion {
		if strings.ContainsAny(s, "\x00\xff") {
			t.Errorf("a sentence carries raw bytes: %q", s)
		}
	}
}

// TestConcludeWithoutRegistry: without a registry no key is reported
// unregistered, and the conclusion names each key's inferred family
// instead; given a registry (even one without these keys), it is.
func TestConcludeWithoutRegistry(t *testing.T) {
	reg := testReg(t, "version: 1\nkeys: []\n")
	for _, noReg := range []bool{true, false} {
		nc := captured(t, map[string]string{"10.0.0.7:1": "order-service", "10.0.0.8:1": "promo-service"},
			`1.1 [0 10.0.0.7:1] "hset" "promo:sku:5" "couponAmount" "1"`,
			`1.2 [0 10.0.0.8:1] "hset" "promo:sku:5" "discount" "2"`, // a second writer
			`1.3 [0 10.0.0.8:1] "hset" "legacy:cart:9" "sku" "2"`,    // one writer
		)
		keys := []*KeyInfo{{Key: "legacy:cart:9", Type: "hash", TTLms: -1, Inferred: "legacy:cart:{id:int}"}}
		r := &Report{Capture: &CaptureResult{}, NoRegistry: noReg}
		conclude(r, parts{reg: reg, keys: keys, caps: []*NodeCapture{nc}, self: DefaultSelf, interval: time.Second})
		rules := map[string]finding.Finding{}
		for _, f := range r.Findings {
			rules[f.Rule+" "+f.Key] = f
		}
		said := strings.Join(r.Conclusion, "\n")
		_, unreg := rules[finding.Unregistered+" legacy:cart:9"]
		second, ok := rules[finding.SecondWriter+" promo:sku:5"]
		if !ok {
			t.Fatalf("noReg %v: no second-writer finding: %v", noReg, rules)
		}
		if noReg {
			if unreg || strings.Contains(said, "not in the registry") || strings.Contains(second.Message, "not in the registry") {
				t.Errorf("without a registry a key is called unregistered: %v\n%s", rules, said)
			}
			if !strings.Contains(said, "`legacy:cart:9` is of the family `legacy:cart:{id:int}` (no registry); only promo-service") ||
				!strings.Contains(second.Message, "the key is of the family `promo:sku:{id:int}` (no registry)") {
				t.Errorf("families not named:\n%s\n%s", said, second.Message)
			}
		} else if !unreg || !strings.Contains(said, "`legacy:cart:9` is not in the registry (it looks like `legacy:cart:{id:int}`)") {
			t.Errorf("with a registry: %v\n%s", rules, said)
		}
	}
}
