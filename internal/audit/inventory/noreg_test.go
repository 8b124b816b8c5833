package inventory_test

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/audit/inventory"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/registry"
)

// TestNoRegistry: with an empty stand-in registry the report groups keys
// by family, raises the rules that need no registry (no-ttl, naming,
// big keys) and none of those that do, and lists what went unchecked.
func TestNoRegistry(t *testing.T) {
	reg, err := registry.Parse("", []byte("version: 1\nkeys: []\n"))
	if err != nil {
		t.Fatal(err)
	}
	rs := []*inventory.Record{
		rec("legacy:cart:1", typ("hash")), rec("legacy:cart:2", typ("hash")),
		rec("Report:Daily:1", typ("string")), rec("big:blob:1", typ("string"), size(2<<20, 2<<20)),
	}
	for _, r := range rs {
		r.TTL = -1
	}
	rep := buildReport(t, reg, inventory.Options{NoRegistry: true}, rs)
	if len(rep.NotChecked) == 0 || rep.NotChecked[0] != "unregistered keys" {
		t.Errorf("not checked: %v", rep.NotChecked)
	}
	for _, rule := range []string{finding.Unregistered, finding.Domain} {
		if rep.Summary.ByRule[rule] != 0 {
			t.Errorf("%s raised without a registry: %v", rule, rep.Summary.ByRule)
		}
	}
	for _, rule := range []string{finding.NoTTL, finding.Case, finding.BigKey} {
		if rep.Summary.ByRule[rule] == 0 {
			t.Errorf("%s not raised: %v", rule, rep.Summary.ByRule)
		}
	}
	var text bytes.Buffer
	if err := rep.WriteText(&text, report.TextOptions{Next: "keyguard init --from-audit a.json"}); err != nil {
		t.Fatal(err)
	}
	out := text.String()
	for _, want := range []string{"no registry", "not checked (no registry): unregistered keys", "families by memory", "legacy:cart:{id:int}", "by type: 2 strings, 2 hashes", "next: keyguard init --from-audit a.json"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "unregistered;") || strings.Contains(out, "(unregistered)") {
		t.Errorf("text calls keys unregistered:\n%s", out)
	}
	// With a registry, the same keys are unregistered and say so.
	with := buildReport(t, loadReg(t), inventory.Options{}, rs)
	if with.Summary.ByRule[finding.Unregistered] != int64(len(rs)) || len(with.NotChecked) != 0 {
		t.Errorf("with a registry: %v, not checked %v", with.Summary.ByRule, with.NotChecked)
	}
}

// TestBinaryFamilyEscapedOnce: a family of keys that are not UTF-8 is
// named with its bytes escaped once, and the text report prints that
// name as it is, without escaping its backslashes again.
func TestBinaryFamilyEscapedOnce(t *testing.T) {
	rep := buildReport(t, loadReg(t), inventory.Options{}, []*inventory.Record{rec("bin:\xff\xfe\x00", typ("string"))})
	var g *report.Group
	for i := range rep.Groups {
		if rep.Groups[i].Kind == report.KindPrefix {
			g = &rep.Groups[i]
		}
	}
	if g == nil || g.Name != `bin:\xff\xfe\x00` || g.Suggested != "" {
		t.Fatalf("group %+v", g)
	}
	var text bytes.Buffer
	rep.WriteText(&text, report.TextOptions{Verbose: true})
	if !strings.Contains(text.String(), `bin:\xff\xfe\x00 (unregistered)`) || strings.Contains(text.String(), `\\x`) {
		t.Errorf("text:\n%s", text.String())
	}
}

// TestMergeNotesAndDuration: merged reports of Cluster nodes audited one
// by one say so in one note, not once per node, and the merged duration
// is what the audits took together, not the time between them.
func TestMergeNotesAndDuration(t *testing.T) {
	reg := loadReg(t)
	var reps []*report.Report
	for i, node := range []string{"10.0.0.1:7000", "10.0.0.2:7000"} {
		agg := inventory.New(reg, inventory.Options{})
		add(agg, rec(fmt.Sprintf("order:order:%d:base", i), typ("hash")))
		m := meta()
		m.Source.Target = "redis://" + node
		m.StartedAt = m.StartedAt.Add(time.Duration(i) * 24 * time.Hour) // a day apart
		m.Duration = time.Duration(i+1) * time.Second
		m.Notes = []string{node + " is a Redis Cluster node and was audited alone: audit the whole cluster in cluster mode (--cluster)", "shared note"}
		reps = append(reps, agg.Report(m))
	}
	merged, err := inventory.MergeReports(reg, reps, []string{"a.json", "b.json"})
	if err != nil {
		t.Fatal(err)
	}
	if merged.DurationMS != 3000 {
		t.Errorf("duration %d ms, want the sum 3000", merged.DurationMS)
	}
	var alone, shared int
	for _, n := range merged.Notes {
		if strings.Contains(n, "audited alone") {
			alone++
			if !strings.Contains(n, "2 nodes (10.0.0.1:7000, 10.0.0.2:7000)") {
				t.Errorf("note %q", n)
			}
		}
		if n == "shared note" {
			shared++
		}
	}
	if alone != 1 || shared != 1 {
		t.Errorf("notes: %q", merged.Notes)
	}
}

// TestSampleMargin: a sampled audit's memory comes with a 95% margin, and
// over many samples of one keyspace (sizes spread over three orders of
// magnitude) the true total lies within the margin about 95% of the time.
func TestSampleMargin(t *testing.T) {
	reg := loadReg(t)
	rng := rand.New(rand.NewPCG(21, 22))
	const n, p = 40_000, 0.05
	sizes := make([]int64, n)
	var total int64
	for i := range sizes {
		sizes[i] = 50 + int64(math.Exp(rng.Float64()*7)) // 51 B … ~1.1 KB, heavy upper end
		if i%1000 == 0 {
			sizes[i] = 1 << 20 // a few big keys
		}
		total += sizes[i]
	}
	trials, inside := 120, 0
	if testing.Short() {
		trials = 60
	}
	for range trials {
		agg := inventory.New(reg, inventory.Options{Sampled: true, SampleRatio: p})
		for i, b := range sizes {
			if rng.Float64() < p {
				add(agg, rec(fmt.Sprintf("cache:item:%d", i), typ("string"), size(b, 1)))
			}
		}
		rep := agg.Report(meta())
		m := rep.Sample.BytesMargin
		if m <= 0 {
			t.Fatalf("margin %d of %d", m, rep.Summary.Bytes)
		}
		if d := rep.Summary.Bytes - total; -m <= d && d <= m {
			inside++
		}
	}
	share := float64(inside) / float64(trials)
	t.Logf("the true total within the margin in %.0f%% of %d samples", share*100, trials)
	if share < 0.85 || share > 0.995 {
		t.Errorf("the true total within the margin in %.0f%% of %d samples, want about 95%%", share*100, trials)
	}
	var text bytes.Buffer
	agg := inventory.New(reg, inventory.Options{Sampled: true, SampleRatio: 0.5})
	add(agg, rec("cache:item:1", typ("string"), size(1000, 1)))
	add(agg, rec("cache:item:2", typ("string"), size(3000, 1)))
	agg.Report(meta()).WriteText(&text, report.TextOptions{})
	if !strings.Contains(text.String(), "~7.8 KiB ±") || !strings.Contains(text.String(), "(95%)") {
		t.Errorf("text:\n%s", text.String())
	}
}
