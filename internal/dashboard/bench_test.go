package dashboard

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/registry"
)

// The benchmarks of bench/results-serve.md: a registry of 1,000 templates
// in 10 domains, reports with 20 findings a template, and a history of 10
// audits.
const (
	benchTemplates = 1000
	benchDomains   = 10
	benchAudits    = 10
)

func benchRegistry(tb testing.TB) *registry.Registry {
	tb.Helper()
	var b strings.Builder
	b.WriteString("version: 1\ndomains:\n")
	for d := range benchDomains {
		fmt.Fprintf(&b, "  d%d: {owner: team-%d}\n", d, d)
	}
	b.WriteString("keys:\n")
	for i := range benchTemplates {
		fmt.Fprintf(&b, "  - key: \"d%d:e%d:{id:int}\"\n    type: hash\n    ttl: 1h\n", i%benchDomains, i)
	}
	reg, err := registry.Parse("bench.yaml", []byte(b.String()))
	if err != nil {
		tb.Fatal(err)
	}
	return reg
}

// benchReport is audit n of the synthetic keyspace (it grows a little
// from one audit to the next).
func benchReport(n int) *Report {
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	rep := &Report{Source: reportSource{Kind: "cluster", Target: "redis://10.0.0.1:6379", Nodes: 3}, Registry: "bench.yaml",
		StartedAt: t0.Add(time.Duration(n) * 10 * time.Minute), DurationMS: 42000, Complete: true,
		Summary: reportSummary{ByRule: map[string]int64{}}}
	ttl := int64(1_800_000)
	for i := range benchTemplates {
		keys := int64(1000+rng.IntN(100000)) * int64(10+n) / 10
		g := reportGroup{Name: fmt.Sprintf("d%d:e%d:{id:int}", i%benchDomains, i), Kind: "template", Owner: fmt.Sprintf("team-%d", i%benchDomains),
			Domain: fmt.Sprintf("d%d", i%benchDomains), Keys: keys, Bytes: keys * int64(80+rng.IntN(400)), NoTTL: keys / 100,
			Types: map[string]int64{"hash": keys}, WithTTL: keys - keys/100, Findings: 20}
		g.TTLSeconds.Min, g.TTLSeconds.P50, g.TTLSeconds.Max = 10, 1800, 3600
		rep.Groups = append(rep.Groups, g)
		rep.Summary.Keys += g.Keys
		rep.Summary.Bytes += g.Bytes
		rep.Summary.NoTTL += g.NoTTL
		for j := range 20 {
			rule, sev := finding.NoTTL, finding.Error
			if j%2 == 1 {
				rule, sev = finding.BigKey, finding.Warning
			}
			key := fmt.Sprintf("d%d:e%d:%d", i%benchDomains, i, j)
			rep.Findings = append(rep.Findings, reportFinding{Finding: finding.Finding{Rule: rule, Severity: sev, Key: key,
				Template: g.Name, Owner: g.Owner, Message: "no TTL, but the template's TTL is 1h", Hint: "set the TTL when writing"}})
			rep.Summary.ByRule[rule]++
			rep.Summary.Findings++
		}
	}
	for f := range 50 {
		g := reportGroup{Name: fmt.Sprintf("legacy%d:{id:int}:token", f), Kind: "prefix", Keys: 5000, Bytes: 400000, NoTTL: 5000,
			Types: map[string]int64{"string": 5000}, Example: fmt.Sprintf("legacy%d:1:token", f), Suggested: "  - key: \"legacy:{id:int}:token\"\n"}
		rep.Groups = append(rep.Groups, g)
		rep.Summary.Keys += g.Keys
		rep.Summary.Bytes += g.Bytes
		rep.Summary.Unregistered += g.Keys
	}
	for k := range 50 {
		rep.TopKeys = append(rep.TopKeys, reportTopKey{Key: fmt.Sprintf("d1:e1:%d", k), Type: "hash", Bytes: 1 << 20, Elements: 20000, TTLMS: &ttl, Template: "d1:e1:{id:int}"})
	}
	rep.TTLHistogram = []reportTTLBucket{{Label: "< 1m", Keys: 10}, {Label: "1m-1h", Keys: rep.Summary.Keys - rep.Summary.NoTTL}, {Label: "no TTL", Keys: rep.Summary.NoTTL}}
	return rep
}

// benchServer has audited benchAudits synthetic reports.
func benchServer(b *testing.B) (*Server, *prometheus.Registry) {
	b.Helper()
	var reps []*Report
	for n := range benchAudits {
		reps = append(reps, benchReport(n))
	}
	pr := prometheus.NewRegistry()
	s, err := New(Config{Registry: benchRegistry(b), Auditor: &fixedAuditor{reps: reps}, History: benchAudits, Registerer: pr, Gatherer: pr})
	if err != nil {
		b.Fatal(err)
	}
	for range benchAudits {
		if err := s.AuditNow(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	return s, pr
}

func benchGet(b *testing.B, path string) {
	s, _ := benchServer(b)
	h := s.Handler()
	req := httptest.NewRequest("GET", path, nil)
	var size int
	n := 0
	cpu := processCPU()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != 200 {
			b.Fatalf("%s: %d", path, w.Code)
		}
		size = w.Body.Len()
		n++
	}
	b.ReportMetric(float64(size), "bytes/page")
	b.ReportMetric(float64(processCPU()-cpu)/float64(n), "cpu-ns/op")
}

// BenchmarkMetricsScrape is one scrape of /metrics (4,000 template series
// and the rest), uncompressed.
func BenchmarkMetricsScrape(b *testing.B) { benchGet(b, "/metrics") }

// BenchmarkOverview draws the overview: treemap, trends of 10 audits,
// tables.
func BenchmarkOverview(b *testing.B) { benchGet(b, "/") }

// BenchmarkTemplates draws the table of 1,000 templates, sorted by keys.
func BenchmarkTemplates(b *testing.B) { benchGet(b, "/templates?sort=keys") }

// BenchmarkTemplatePage draws one template's page.
func BenchmarkTemplatePage(b *testing.B) { benchGet(b, templateURL("d3:e503:{id:int}")) }

// BenchmarkFindings draws the first page of 20,000 findings filtered by
// rule.
func BenchmarkFindings(b *testing.B) { benchGet(b, "/findings?rule=big-key") }

// BenchmarkPublish is the work after each audit: the view and the
// exporter's series of one report, and its point of the history.
func BenchmarkPublish(b *testing.B) {
	reg := benchRegistry(b)
	rep := benchReport(0)
	n := 0
	cpu := processCPU()
	for b.Loop() {
		snapshotMetrics(snapshotOf(rep, reg))
		pointOf(rep)
		n++
	}
	b.ReportMetric(float64(processCPU()-cpu)/float64(n), "cpu-ns/op")
}
