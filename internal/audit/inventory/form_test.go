package inventory_test

import (
	"fmt"
	stdslices "slices"
	"strings"
	"testing"

	"github.com/keyguard/keyguard/internal/audit/inventory"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/valueform"
)

func form(f valueform.Form) func(*inventory.Record) {
	return func(r *inventory.Record) { r.Form = f }
}

// formRecords: a template that declares the fields of its JSON objects
// (cache:rule), one that does not (cache:open) and an unregistered
// family (legacy:item), each with strings of other forms among its
// objects; and the keys of cache:rule's others.
func formRecords() (rs []*inventory.Record, foreign []string) {
	for i := range 300 {
		obj := []func(*inventory.Record){typ("string"), fields("a", "b"), form(valueform.Object)}
		var other func(*inventory.Record)
		switch i % 10 {
		case 1:
			other = form(valueform.Text)
		case 2:
			other = form(valueform.Number)
		case 3:
			other = form(valueform.Null) // a cache's "nothing here": no finding
		}
		for _, prefix := range []string{"cache:rule:", "cache:open:", "legacy:item:"} {
			k := fmt.Sprint(prefix, i)
			if other == nil {
				rs = append(rs, rec(k, obj...))
				continue
			}
			rs = append(rs, rec(k, typ("string"), other))
			if prefix == "cache:rule:" && i%10 != 3 {
				foreign = append(foreign, k)
			}
		}
	}
	return rs, foreign
}

// Strings that are not JSON objects are value-format findings in a
// template that declares fields, and a note elsewhere; both the same
// from one aggregator, from aggregators merged, and from a report
// carried on (a resumed audit).
func TestValueFormFindingsAndNotes(t *testing.T) {
	reg, err := registryFrom(`version: 1
domains:
  cache: {owner: cache-team}
keys:
  - {key: "cache:rule:{id:int}", type: string, ttl: 1h, fields: [a, b]}
  - {key: "cache:open:{id:int}", type: string, ttl: 1h}
`)
	if err != nil {
		t.Fatal(err)
	}
	rs, foreign := formRecords()
	stdslices.Sort(foreign)
	opts := inventory.Options{MaxFindings: 10_000}
	whole := inventory.New(reg, opts)
	halves := []*inventory.Aggregator{inventory.New(reg, opts), inventory.New(reg, opts)}
	for i, r := range rs {
		add(whole, r)
		add(halves[i%2], r)
	}
	wrep := whole.Report(meta())
	first := halves[0].Report(meta())
	carry, err := inventory.FromReport(reg, first)
	if err != nil {
		t.Fatal(err)
	}
	halves[1].Merge(carry)
	resumed := halves[1].Report(meta())
	merged := inventory.New(reg, opts)
	for i, r := range rs {
		if i%3 == 0 {
			add(merged, r)
		}
	}
	rest := inventory.New(reg, opts)
	for i, r := range rs {
		if i%3 != 0 {
			add(rest, r)
		}
	}
	merged.Merge(rest)
	mrep := merged.Report(meta())

	note := func(rep *report.Report) string {
		for _, n := range rep.Notes {
			if strings.HasPrefix(n, "strings of two formats") {
				return n
			}
		}
		return ""
	}
	wantNote := note(wrep)
	for _, want := range []string{"cache:open:{id:int} (210 JSON objects, 60 other strings: a number, text)", "legacy:item:{id:int} (210 JSON objects, 60 other strings: a number, text)"} {
		if !strings.Contains(wantNote, want) {
			t.Errorf("note %q does not say %q", wantNote, want)
		}
	}
	if strings.Contains(wantNote, "cache:rule:") {
		t.Errorf("note %q names the template whose strings are findings", wantNote)
	}
	for name, rep := range map[string]*report.Report{"one aggregator": wrep, "resumed": resumed, "merged": mrep} {
		var got []string
		for _, f := range rep.Findings {
			if f.Rule == "value-format" {
				got = append(got, f.Key)
			}
		}
		stdslices.Sort(got)
		if !stdslices.Equal(got, foreign) || rep.Summary.ByRule["value-format"] != int64(len(foreign)) {
			t.Errorf("%s: value-format on %d keys (%d counted), want the %d of other forms", name, len(got), rep.Summary.ByRule["value-format"], len(foreign))
		}
		if n := note(rep); n != wantNote {
			t.Errorf("%s: note %q, want %q", name, n, wantNote)
		}
	}
}
