package inventory_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/audit/inventory"
	"github.com/keyguard/keyguard/internal/audit/report"
)

func TestDiff(t *testing.T) {
	reg := loadReg(t)
	oldRS := dataset()
	var newRS []*inventory.Record
	for _, r := range oldRS {
		if strings.HasPrefix(r.Key, "tmp_data_") || r.Key == "order:order:9:base" {
			continue // the family is gone; the type-mismatch was fixed
		}
		newRS = append(newRS, r)
	}
	for i := range 20 {
		newRS = append(newRS, rec(fmt.Sprintf("order:order:%d:base", 3000+i), size(1000, 6)))
		newRS = append(newRS, rec(fmt.Sprintf("cart:%d:items", i), typ("list"), ttl(time.Hour)))
	}
	newRS = append(newRS, rec("order:order:3001:base", typ("zset"))) // a new error finding (and a duplicate key)
	old := buildReport(t, reg, inventory.Options{}, oldRS)
	cur := buildReport(t, reg, inventory.Options{}, newRS)

	// Through JSON, as keyguard diff reads them.
	old, cur = reread(t, old), reread(t, cur)
	d := report.Diff(old, cur)

	names := func(gs []report.GroupDrift) string {
		var s []string
		for _, g := range gs {
			s = append(s, g.Kind+" "+g.Name)
		}
		return strings.Join(s, ", ")
	}
	if got := names(d.NewGroups); got != "prefix cart:{id:int}:items" {
		t.Errorf("new groups: %s", got)
	}
	if got := names(d.GoneGroups); got != "prefix tmp_data_{date:date}{time:int}" {
		t.Errorf("gone groups: %s", got)
	}
	if len(d.Changed) == 0 || d.Changed[0].Name != "order:order:{orderId:int}:base" || d.Changed[0].Keys.Delta != 20 || d.Changed[0].Bytes.Delta <= 0 {
		t.Errorf("changed: %+v", d.Changed)
	}
	var newRules []string
	for _, f := range d.NewFindings {
		newRules = append(newRules, f.Rule+" "+f.Key)
	}
	if !strings.Contains(strings.Join(newRules, ","), "type-mismatch order:order:3001:base") {
		t.Errorf("new findings: %v", newRules)
	}
	if len(d.NewFindingsAtLeast(finding.Error)) == 0 {
		t.Error("no new error")
	}
	if d.Resolved == 0 {
		t.Error("the fixed type-mismatch and the gone family's findings are not resolved")
	}
	if d.Summary.Keys.Delta != int64(len(newRS)-len(oldRS)) {
		t.Errorf("keys delta %d", d.Summary.Keys.Delta)
	}

	var txt bytes.Buffer
	if err := d.WriteText(&txt); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"new groups (1)", "gone groups (1)", "cart:{id:int}:items", "type-mismatch", "findings of the old report are gone"} {
		if !strings.Contains(txt.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, txt.String())
		}
	}
	var js bytes.Buffer
	if err := d.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back report.DriftReport
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back.NewGroups) != 1 {
		t.Errorf("JSON: %v %+v", err, back.NewGroups)
	}

	// A report against itself has no drift.
	same := report.Diff(old, old)
	if len(same.NewGroups)+len(same.GoneGroups)+len(same.Changed)+len(same.NewFindings) != 0 || same.Resolved != 0 {
		t.Errorf("self diff: %+v", same)
	}
}

func TestDiffNotes(t *testing.T) {
	reg := loadReg(t)
	agg := inventory.New(reg, inventory.Options{MaxFindings: 1})
	add(agg, rec("order:order:1:base", ttl(-1)))
	add(agg, rec("order:order:2:base", ttl(-1)))
	m := meta()
	m.Complete = false
	capped := agg.Report(m)
	d := report.Diff(capped, capped)
	joined := strings.Join(d.Notes, "\n")
	if !strings.Contains(joined, "the old report is partial, and the new report is partial (complete: false)") || !strings.Contains(joined, "capped for no-ttl") {
		t.Errorf("notes: %q", d.Notes)
	}

	// A partial report beside a complete one: the text's first line says
	// which and how much of its keyspace it read, as the note does.
	capped.Coverage = &report.Coverage{Share: 0.25}
	m.Complete = true
	whole := agg.Report(m)
	d = report.Diff(capped, whole)
	joined = strings.Join(d.Notes, "\n")
	if !strings.Contains(joined, "the old report is partial: 25.0% of its keyspace read (complete: false)") || strings.Contains(joined, "new report is partial") {
		t.Errorf("notes: %q", d.Notes)
	}
	var b bytes.Buffer
	if err := d.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(b.String(), "\n")
	if !strings.Contains(first, "(memory: MEMORY USAGE; partial: 25.0% of its keyspace read) → ") || strings.Count(first, "partial") != 1 {
		t.Errorf("first line: %q", first)
	}
	if d.Old.Covered == nil || *d.Old.Covered != 0.25 || d.New.Covered != nil {
		t.Errorf("covered: %v, %v", d.Old.Covered, d.New.Covered)
	}
}

// TestDiffFindingsOfPartReports: a finding of the old report that the
// new one does not hold is "gone" only when the new report read every key;
// one of a sample or a partial report is said to be not in it, not fixed
// (and the other way round for new findings), in the text and the JSON.
func TestDiffFindingsOfPartReports(t *testing.T) {
	reg := loadReg(t)
	build := func(keys ...string) *report.Report {
		agg := inventory.New(reg, inventory.Options{})
		for _, k := range keys {
			add(agg, rec(k, ttl(-1)))
		}
		return agg.Report(meta())
	}
	whole := build("order:order:1:base", "order:order:2:base", "order:order:3:base")
	sample := build("order:order:1:base")
	sample.Estimate = true
	partial := build("order:order:2:base")
	partial.Complete, partial.Coverage = false, &report.Coverage{Share: 0.4}
	text := func(d *report.DriftReport) string {
		var b bytes.Buffer
		if err := d.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	for _, tc := range []struct {
		name          string
		old, new      *report.Report
		newSure, gone bool
		want, wantNot string
	}{
		{"whole against whole", whole, build("order:order:1:base"), true, true, "findings of the old report are gone", "not a sign"},
		{"whole against a sample", whole, sample, true, false, "findings of the old report are not in the new one, which did not read every key (a sample): not a sign they were fixed", "are gone"},
		{"whole against a partial report", whole, partial, true, false, "which did not read every key (partial: 40.0% of its keyspace read): not a sign", "are gone"},
		{"a sample against whole", sample, whole, false, true, "findings the old report does not hold (", "new findings"},
		{"a partial report against whole", partial, whole, false, true, "the old report did not read every key (partial: 40.0% of its keyspace read): these may have been there already", "new findings"},
	} {
		d := report.Diff(tc.old, tc.new)
		if d.NewFindingsCertain != tc.newSure || d.ResolvedCertain != tc.gone {
			t.Errorf("%s: new findings certain %v, resolved certain %v; want %v, %v", tc.name, d.NewFindingsCertain, d.ResolvedCertain, tc.newSure, tc.gone)
		}
		if got := text(d); !strings.Contains(got, tc.want) || strings.Contains(got, tc.wantNot) {
			t.Errorf("%s: text lacks %q or holds %q:\n%s", tc.name, tc.want, tc.wantNot, got)
		}
	}
}

func reread(t *testing.T, r *report.Report) *report.Report {
	t.Helper()
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	back, err := report.ReadReport(&b)
	if err != nil {
		t.Fatal(err)
	}
	return back
}

func FuzzReadReport(f *testing.F) {
	var b bytes.Buffer
	rep := buildReport(f, loadReg(f), inventory.Options{}, dataset())
	rep.WriteJSON(&b)
	f.Add(b.Bytes())
	f.Add([]byte(`{"source":{"kind":"rdb"},"findings":[{"rule":"no-ttl","severity":"error","key":"","key_base64":"/w=="}]}`))
	f.Add([]byte(`{"source":{"kind":"redis"},"groups":null,"top_keys":[{"key":"k","ttl_ms":-1}]}`))
	f.Add([]byte(`{"source":{"kind":"x"},"findings":[{"severity":"bogus"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := report.ReadReport(bytes.NewReader(data))
		if err != nil {
			return
		}
		// Whatever was read can be written and read back: writing that
		// gives the same bytes, and the two compare as unchanged.
		var out bytes.Buffer
		if err := r.WriteJSON(&out); err != nil {
			t.Fatalf("WriteJSON of a read report: %v", err)
		}
		r2, err := report.ReadReport(bytes.NewReader(out.Bytes()))
		if err != nil {
			t.Fatalf("re-read: %v\n%s", err, out.String())
		}
		var out2 bytes.Buffer
		if err := r2.WriteJSON(&out2); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out.Bytes(), out2.Bytes()) {
			t.Fatalf("written, read and written again differs:\n%s\n%s", out.String(), out2.String())
		}
		d := report.Diff(r, r2)
		s := d.Summary
		if len(d.NewGroups)+len(d.GoneGroups)+len(d.NewFindings) != 0 || d.Resolved != 0 ||
			s.Keys.Delta != 0 || s.Bytes.Delta != 0 || s.NoTTL.Delta != 0 || s.Unregistered.Delta != 0 || s.Findings.Delta != 0 {
			t.Fatalf("a report differs from itself read back: %+v", d)
		}
		if uniqueGroups(r) && len(d.Changed) != 0 {
			t.Fatalf("groups changed between a report and itself read back: %+v", d.Changed)
		}
		r2.WriteText(&bytes.Buffer{}, report.TextOptions{})
		r2.WriteCSV(&bytes.Buffer{})
		r2.WriteHTML(&bytes.Buffer{})
	})
}

// uniqueGroups: no two groups of the same kind and name (Diff matches
// groups by them; a hand-written report may repeat one).
func uniqueGroups(r *report.Report) bool {
	seen := map[string]bool{}
	for _, g := range r.Groups {
		k := g.Kind + "\x00" + g.Name
		if seen[k] {
			return false
		}
		seen[k] = true
	}
	return true
}
