package migration

import (
	"errors"
	"strings"
	"testing"

	"github.com/keyguard/keyguard/keybuild"
	"github.com/keyguard/keyguard/keytmpl"
	"github.com/keyguard/keyguard/registry"
)

func testRegistry(t testing.TB) *registry.Registry {
	t.Helper()
	reg, err := registry.Load("testdata/keyguard.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func TestPlanRefuses(t *testing.T) {
	reg := testRegistry(t)
	for _, tt := range []struct {
		from, to string
		fields   []string
		want     string
	}{
		{"old:string:{id}", "old:string:{id}", nil, "the same"},
		{"old:string:{id}", "nope:{id}", nil, "not in the registry"},
		{"old:string:{id}", "new:hash:{id}", nil, "type changes from string to hash"},
		{"old:string:{x}", "new:string:{id}", nil, "needs {id}, which the old template does not capture"},
		{"old:string:{id}:{more}", "new:string:{id}", nil, "drops {more}"},
		{"old:special:{id:int}", "new:uuid:{id:uuid}", nil, "no value of {id:int} fits {id:uuid}"},
		{"old:ph:{id:hash}", "new:string:{id}", nil, "cannot be recovered"},
		{"new:{kind}:{id}", "new:string:{id}", nil, "share keys"},
		{"promo:{scope}:{id}", "new:hash:{id}", nil, "drops {scope}"},
		{"promo:sku:{skuId:int}", "order:sku:{skuId:int}:guarded", nil, "namespace guard would refuse order-team's writes"},
		{"old:string:{id}", "new:string:{id}", []string{"a"}, "--fields moves hash fields"},
		{"old:hash:{id}", "new:hash:{id}", []string{"__ns__"}, "namespace guard's field"},
		{"old:hash:{id}", "new:hash:{id}", []string{""}, "empty field name"},
		{"old:string:{id", "new:string:{id}", nil, "does not parse"},
	} {
		_, err := NewPlan(reg, tt.from, tt.to, PlanOptions{Fields: tt.fields})
		var pe *PlanError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s → %s: err = %v, want a PlanError with %q", tt.from, tt.to, err, tt.want)
			continue
		}
		if pe.Hint == "" {
			t.Errorf("%s → %s: no hint", tt.from, tt.to)
		}
	}
}

func TestPlanSharedKeysRefused(t *testing.T) {
	reg := testRegistry(t)
	// An unregistered old template that matches new keys too.
	_, err := NewPlan(reg, "new:{kind}:{id}", "new:string:{id}", PlanOptions{})
	if err == nil {
		t.Fatal("a plan whose old template matches the new keys was accepted")
	}
	_, err = NewPlan(reg, "new:{id}:x:y", "new:string:{id}", PlanOptions{})
	if err != nil {
		t.Fatalf("disjoint templates refused: %v", err)
	}
	_, err = NewPlan(reg, "new:string:{id}x", "new:string:{id}", PlanOptions{})
	if err == nil || !strings.Contains(err.Error(), "share keys") {
		t.Fatalf("overlapping templates: err = %v", err)
	}
}

func TestPlanMap(t *testing.T) {
	reg := testRegistry(t)
	for _, tt := range []struct {
		from, to string
		conv     Conversion
		old, new string
		misfit   keybuild.Reason
	}{
		{"old:string:{id}", "new:string:{id}", Same, "old:string:1001", "new:string:1001", 0},
		{"old:any:{id}", "new:int:{id:int}", Check, "old:any:-42", "new:int:-42", 0},
		{"old:any:{id}", "new:int:{id:int}", Check, "old:any:abc", "", keybuild.ReasonKind},
		{"old:any:{id}", "new:int:{id:int}", Check, "old:any:1{2", "", keybuild.ReasonBrace},
		{"old:special:{id:int}", "new:string:{id}", Same, "old:special:7", "new:string:7", 0},
		{"old:any:{id}", "new:phone:{id:hash}", Hash, "old:any:13800138000", "new:phone:a6942f9771d67f34", 0},
		{"tag:{{u{id}}}:old", "tag:{{u{id}}}:new", Same, "tag:{u9}:old", "tag:{u9}:new", 0},
	} {
		p, err := NewPlan(reg, tt.from, tt.to, PlanOptions{})
		if err != nil {
			t.Fatalf("%s → %s: %v", tt.from, tt.to, err)
		}
		if got := p.Mappings[0].Conv; got != tt.conv {
			t.Errorf("%s → %s: conversion %v, want %v", tt.from, tt.to, got, tt.conv)
		}
		got, ok, err := p.Map(tt.old)
		if !ok {
			t.Errorf("%s: does not match %s", tt.old, tt.from)
			continue
		}
		var fe *FitError
		switch {
		case tt.misfit != 0:
			if !errors.As(err, &fe) || fe.Reason != tt.misfit {
				t.Errorf("%s: err = %v, want a FitError %v", tt.old, err, tt.misfit)
			}
		case err != nil || got != tt.new:
			t.Errorf("%s → %q, %v; want %q", tt.old, got, err, tt.new)
		case !p.NewTemplate().Matches(got) || reg.Lookup(got) != p.ToEntry:
			t.Errorf("%s → %q, which the registry does not classify to %s", tt.old, got, tt.to)
		}
	}
	p, _ := NewPlan(reg, "old:string:{id}", "new:string:{id}", PlanOptions{})
	if _, ok, _ := p.Map("other:1"); ok {
		t.Error("a key of another template mapped")
	}
}

func TestPlanOwnsLeavesMoreSpecificTemplates(t *testing.T) {
	reg := testRegistry(t)
	// promo:{scope}:{id} is registered, and promo:sku:{skuId:int} is more
	// specific: its keys are not the general template's.
	p, err := NewPlan(reg, "promo:sku:{skuId:int}", "order:sku:{skuId:int}:settle-preview", PlanOptions{Fields: []string{"couponAmount", "promoTotal", "couponAmount"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Fields) != 2 {
		t.Errorf("fields %v: duplicates kept", p.Fields)
	}
	for key, want := range map[string]bool{"promo:sku:1001": true, "promo:sku:x": false, "promo:sku:1:2": false, "order:sku:1:settle-preview": false} {
		if got := p.Owns(key); got != want {
			t.Errorf("Owns(%q) = %v, want %v", key, got, want)
		}
	}
	// An unregistered old template owns only keys no entry claims.
	q, err := NewPlan(reg, "legacy:{id}", "new:string:{id}", PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !q.Owns("legacy:7") || q.Owns("new:string:7") {
		t.Error("unregistered old template: wrong ownership")
	}
	if !strings.Contains(strings.Join(q.Notes, "\n"), "no registered template claims") {
		t.Errorf("notes %q do not say types are checked", q.Notes)
	}
}

func TestGlob(t *testing.T) {
	reg := testRegistry(t)
	for _, tt := range []struct{ from, to, glob string }{
		{"old:string:{id}", "new:string:{id}", "old:string:*"},
		{"tag:{{u{id}}}:old", "tag:{{u{id}}}:new", "tag:{u*}:old"},
		{"legacy:[x]*?\\:{a}{b}", "new:string:{id}", ""},
	} {
		p, err := NewPlan(reg, tt.from, tt.to, PlanOptions{})
		if err != nil {
			if tt.glob != "" {
				t.Error(err)
			}
			continue
		}
		if got := p.Glob(); got != tt.glob {
			t.Errorf("Glob(%s) = %q, want %q", tt.from, got, tt.glob)
		}
	}
	p, err := NewPlan(reg, "legacy:a*b?{id}", "new:string:{id}", PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Glob(); got != `legacy:a\*b\?*` {
		t.Errorf("escaped glob %q", got)
	}
}

func TestDeprecated(t *testing.T) {
	reg := testRegistry(t)
	plans, err := Deprecated(reg, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range plans {
		got = append(got, p.From+" → "+p.To)
	}
	if strings.Join(got, ", ") != "old:string:{id} → new:string:{id}, old:hash:{id} → new:hash:{id}" {
		t.Errorf("deprecated plans: %v", got)
	}
}

func TestKindsAgree(t *testing.T) {
	// Plan converts keytmpl kinds to keybuild kinds by number.
	for k := keytmpl.Any; k <= keytmpl.Hash; k++ {
		if k.String() != keybuild.Kind(k).String() {
			t.Errorf("keytmpl kind %d is %s, keybuild's %s", k, k, keybuild.Kind(k))
		}
	}
}

func FuzzMap(f *testing.F) {
	reg := testRegistry(f)
	var plans []*Plan
	for _, pr := range [][2]string{
		{"old:string:{id}", "new:string:{id}"}, {"old:any:{id}", "new:int:{id:int}"},
		{"old:any:{id}", "new:phone:{id:hash}"}, {"tag:{{u{id}}}:old", "tag:{{u{id}}}:new"},
		{"old:special:{id:int}", "new:string:{id}"},
	} {
		p, err := NewPlan(reg, pr[0], pr[1], PlanOptions{})
		if err != nil {
			f.Fatal(err)
		}
		plans = append(plans, p)
	}
	for _, s := range []string{"old:string:1", "old:any:x{y", "tag:{u1}:old", "old:any:\xff", "old:special:-0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		for _, p := range plans {
			nk, ok, err := p.Map(key)
			if ok != p.OldTemplate().Matches(key) {
				t.Fatalf("%s: Map ok=%v for %q", p.From, ok, key)
			}
			if !ok || err != nil {
				continue
			}
			if !p.NewTemplate().Matches(nk) {
				t.Fatalf("%s: %q → %q, which %s does not match", p.From, key, nk, p.To)
			}
			if p.OldTemplate().Matches(nk) {
				t.Fatalf("%s: %q → %q, which the old template matches", p.From, key, nk)
			}
		}
	})
}
