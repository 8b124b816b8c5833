package starter

import (
	"strings"
	"testing"

	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/keytmpl"
	"github.com/keyguard/keyguard/registry"
)

// TestInitFromAuditAwkwardNames: domains and templates with quotes, spaces,
// '#' and YAML words are written so that the registry loads with the same
// names (a domain with a quote used to make init fail), and a suggestion
// that does not load is named.
func TestInitFromAuditAwkwardNames(t *testing.T) {
	keys := []string{`q"t:item:{id:int}`, "yes:{id}", "a #b:{id}", "Wei rd:{id}", `back\slash:{id}`}
	rep := &report.Report{Source: report.Source{Kind: "redis", Target: "redis://127.0.0.1:6379"}}
	for i, k := range keys {
		var b strings.Builder
		w := registry.NewWriter(&b)
		w.Entry(registry.Draft{Entry: registry.Entry{Key: k, Type: "string", TTL: 3600e9, Owner: "FILL-IN", Desc: "FILL-IN"}})
		rep.Groups = append(rep.Groups, report.Group{Name: k, Kind: "prefix", Keys: int64(10 - i), Bytes: 100, Suggested: b.String()})
	}
	doc, n, err := registryFromAudit(rep, "audit.json")
	if err != nil || n != len(keys) {
		t.Fatalf("%d entries, %v", n, err)
	}
	reg, err := registry.Parse("keyguard.yaml", doc)
	if err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	for _, k := range keys {
		e := reg.EntryByKey(k)
		if e == nil {
			t.Errorf("no entry %q:\n%s", k, doc)
			continue
		}
		if d, ok := reg.Domain(e.Domain); !ok || d.Owner != "FILL-IN" {
			t.Errorf("domain %q of %q not declared:\n%s", e.Domain, k, doc)
		}
	}

	rep.Groups[2].Suggested = "  - key: \"broken\n"
	if _, _, err := registryFromAudit(rep, "audit.json"); err == nil || !strings.Contains(err.Error(), "the suggested entry of a #b:{id} does not load") {
		t.Fatalf("a broken suggestion: %v", err)
	}
}

// FuzzSuggestedTemplate: init reads back the template of any entry the
// audit writes, and refuses one that does not load.
func FuzzSuggestedTemplate(f *testing.F) {
	for _, s := range []string{"legacy:cart:{id:int}", `a"b`, "x\ty", "{{order:{id}}}:items", "é:\x00", "a:{", "\xff:{id}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tmpl string) {
		var b strings.Builder
		w := registry.NewWriter(&b)
		w.Entry(registry.Draft{Entry: registry.Entry{Key: tmpl, Type: "hash", Desc: "x"}})
		if w.Err() != nil {
			return // not UTF-8: the audit writes no such entry
		}
		got, err := suggestedTemplate(b.String())
		if _, perr := keytmpl.Parse(tmpl, ':'); perr != nil {
			if err == nil {
				t.Fatalf("suggestedTemplate(%q) took a template that does not parse (%v)", b.String(), perr)
			}
			return
		}
		if err != nil || got != tmpl {
			t.Fatalf("suggestedTemplate(%q) = %q, %v", b.String(), got, err)
		}
	})
}

// TestInitFromAuditNothingToSuggest: a report without suggested entries
// says why in the terms of what it saw: no key at all, a partial audit
// (and how to complete it, live or from a file), or every key registered.
func TestInitFromAuditNothingToSuggest(t *testing.T) {
	live := report.Source{Kind: "redis", Target: "redis://127.0.0.1:6379"}
	cov := &report.Coverage{Share: 0.02}
	for _, tc := range []struct {
		name string
		rep  report.Report
		want string
	}{
		{"a partial walk of no key", report.Report{Source: live, Coverage: cov}, "a.json is a partial audit (2.0% covered) that counted no key: nothing to build a registry from; continue the audit (keyguard audit … --resume a.json)"},
		{"a whole audit of no key", report.Report{Source: live, Complete: true}, "a.json counted no key: nothing to build a registry from"},
		{"a partial walk, every key registered", report.Report{Source: live, Coverage: cov, Registry: "r.yaml", Summary: report.Summary{Keys: 40}},
			"every key of a partial audit (2.0% covered) matched a template of its registry (r.yaml), but the keys it did not reach may not; continue the audit"},
		{"a damaged file", report.Report{Source: report.Source{Kind: "rdb", Target: "dump.rdb"}, Registry: "r.yaml", Summary: report.Summary{Keys: 40}},
			"but the keys it did not reach may not; read a whole snapshot file"},
		{"every key registered", report.Report{Source: live, Complete: true, Registry: "r.yaml", Summary: report.Summary{Keys: 40}},
			"every key the audit saw matched a template of its registry (r.yaml)"},
	} {
		_, _, err := registryFromAudit(&tc.rep, "a.json")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want %q", tc.name, err, tc.want)
		}
	}
}
