package dashboard

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestExporterExposition compares the exporter's output, as exposition
// text, for a known audit, writer records and hot keys.
func TestExporterExposition(t *testing.T) {
	clk := &clock{t0}
	aud := &fixedAuditor{reps: []*Report{smallReport(t0)}}
	pr := prometheus.NewPedanticRegistry()
	s, _ := newTestServer(t, Config{Auditor: aud, Now: clk.now, Interval: 5 * time.Minute, Registerer: pr, Gatherer: pr,
		Writers: fixedWriters{{Template: "promo:sku:{skuId:int}", Owner: "promo-team", Registered: true,
			Writers: []Writer{{Service: "promo-team", Allowed: true}, {Service: "order-team"}}}},
		HotKeys: fixedHotKeys{{Key: "promo:sku:9", Template: "promo:sku:{skuId:int}", Owner: "promo-team", Source: "SDK", Score: 900}}})
	clk.t = t0.Add(2 * time.Second) // the audit ends
	if err := s.AuditNow(context.Background()); err != nil {
		t.Fatal(err)
	}
	clk.t = t0.Add(62 * time.Second) // a scrape a minute later
	want := `
# HELP keyguard_audit_age_seconds Seconds since the last complete audit finished (since the server started when there was none).
# TYPE keyguard_audit_age_seconds gauge
keyguard_audit_age_seconds 60
# HELP keyguard_audit_duration_seconds How long the last audit took.
# TYPE keyguard_audit_duration_seconds gauge
keyguard_audit_duration_seconds 1.5
# HELP keyguard_audit_interval_seconds The audit schedule: seconds between two audit starts.
# TYPE keyguard_audit_interval_seconds gauge
keyguard_audit_interval_seconds 300
# HELP keyguard_audit_last_success_timestamp_seconds When the last complete audit finished, in Unix seconds.
# TYPE keyguard_audit_last_success_timestamp_seconds gauge
keyguard_audit_last_success_timestamp_seconds 1.769688002e+09
# HELP keyguard_audit_running 1 while an audit runs.
# TYPE keyguard_audit_running gauge
keyguard_audit_running 0
# HELP keyguard_audit_success 1 when the last audit ran and walked the whole keyspace, else 0 (failed to run, or stopped early).
# TYPE keyguard_audit_success gauge
keyguard_audit_success 1
# HELP keyguard_audits_total Audits run, by result: complete, partial (stopped early) or failed (could not run).
# TYPE keyguard_audits_total counter
keyguard_audits_total{result="complete"} 1
keyguard_audits_total{result="failed"} 0
keyguard_audits_total{result="partial"} 0
# HELP keyguard_findings Findings of the last audit per rule and severity (severity=unlisted: over the report's per-rule list cap).
# TYPE keyguard_findings gauge
keyguard_findings{rule="hot-key",severity="warning"} 1
keyguard_findings{rule="no-ttl",severity="error"} 2
keyguard_findings{rule="unregistered",severity="error"} 1
keyguard_findings{rule="unregistered",severity="unlisted"} 11
# HELP keyguard_hot_keys Hot keys of the template: the audit's LFU top set (source=server) and SDK reports.
# TYPE keyguard_hot_keys gauge
keyguard_hot_keys{owner="promo-team",source="sdk",template="promo:sku:{skuId:int}"} 1
keyguard_hot_keys{owner="promo-team",source="server",template="promo:sku:{skuId:int}"} 1
# HELP keyguard_keyspace_bytes Memory of every key in the last audit.
# TYPE keyguard_keyspace_bytes gauge
keyguard_keyspace_bytes 64000
# HELP keyguard_keyspace_keys Keys in the last audit.
# TYPE keyguard_keyspace_keys gauge
keyguard_keyspace_keys 130
# HELP keyguard_keyspace_no_ttl_keys Keys without a TTL in the last audit.
# TYPE keyguard_keyspace_no_ttl_keys gauge
keyguard_keyspace_no_ttl_keys 14
# HELP keyguard_template_writers Services that wrote the template within the writer window (SDK writer records); allowed=false: neither its owner nor in its writers.
# TYPE keyguard_template_writers gauge
keyguard_template_writers{allowed="false",owner="promo-team",template="promo:sku:{skuId:int}"} 1
keyguard_template_writers{allowed="true",owner="promo-team",template="promo:sku:{skuId:int}"} 1
# HELP keyguard_unregistered_bytes Memory of the keys matching no template in the last audit (not exported without a registry).
# TYPE keyguard_unregistered_bytes gauge
keyguard_unregistered_bytes 4000
# HELP keyguard_unregistered_keys Keys matching no registry template in the last audit (not exported without a registry).
# TYPE keyguard_unregistered_keys gauge
keyguard_unregistered_keys 12
# HELP keyguard_writer_records_failed 1 when the SDK writer records could not be read at the last audit.
# TYPE keyguard_writer_records_failed gauge
keyguard_writer_records_failed 0
`
	names := []string{MetricAuditAge, MetricAuditDuration, MetricAuditInterval, MetricAuditLastSuccess, MetricAuditRunning, MetricAuditSuccess,
		MetricAudits, MetricFindings, MetricHotKeys, MetricBytes, MetricKeys, MetricNoTTL, MetricTemplateWriters,
		MetricUnregisteredBytes, MetricUnregisteredKeys, MetricWriterRecordsFailed}
	if err := testutil.GatherAndCompare(pr, strings.NewReader(want), names...); err != nil {
		t.Error(err)
	}
	// Per template: one series per registry template, zero for the unused.
	if n, err := testutil.GatherAndCount(pr, MetricTemplateKeys); err != nil || n != 10 {
		t.Errorf("%d template_keys series, want 10 (%v)", n, err)
	}
	text := gatherText(t, pr)
	for _, line := range []string{
		`keyguard_template_keys{domain="order",owner="order-team",template="order:order:{orderId:int}:base"} 80`,
		`keyguard_template_keys{domain="cache",owner="catalog-team",template="cache:unused:{id:int}"} 0`,
		`keyguard_template_bytes{domain="promo",owner="promo-team",template="promo:sku:{skuId:int}"} 20000`,
		`keyguard_template_no_ttl_keys{domain="order",owner="order-team",template="order:order:{orderId:int}:base"} 2`,
		`keyguard_template_findings{domain="order",owner="order-team",template="order:order:{orderId:int}:base"} 2`,
	} {
		if !strings.Contains(text, line+"\n") {
			t.Errorf("no series %s", line)
		}
	}
	if strings.Contains(text, "legacy:user") || strings.Contains(text, "order:order:1:base") {
		t.Error("a key or an unregistered family is a label")
	}
}

// TestExporterLint: names, help and units pass Prometheus' linter.
func TestExporterLint(t *testing.T) {
	s, _ := newTestServer(t, Config{Auditor: &fixedAuditor{reps: []*Report{smallReport(t0)}},
		Writers: fixedWriters{{Template: "promo:sku:{skuId:int}", Owner: "promo-team", Registered: true, Writers: []Writer{{Service: "a", Allowed: true}}}},
		HotKeys: fixedHotKeys{{Key: "k", Template: "promo:sku:{skuId:int}", Source: "SDK"}}})
	s.AuditNow(context.Background())
	problems, err := testutil.CollectAndLint(collector{s})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint %s: %s", p.Metric, p.Text)
	}
	// Every name MetricNames lists is exported.
	if n := testutil.CollectAndCount(collector{s}); n == 0 {
		t.Fatal("nothing collected")
	}
	pr := prometheus.NewPedanticRegistry()
	pr.MustRegister(collector{s})
	mfs, err := pr.Gather()
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, mf := range mfs {
		have[mf.GetName()] = true
	}
	for _, name := range MetricNames() {
		if !have[name] {
			t.Errorf("%s is not exported", name)
		}
	}
	if len(have) != len(MetricNames()) {
		t.Errorf("%d metrics exported, MetricNames lists %d", len(have), len(MetricNames()))
	}
}

// TestScrapeNeverAudits: a scrape reads the last audit; only the schedule
// runs audits, and a failure shows in the status metrics.
func TestScrapeNeverAudits(t *testing.T) {
	aud := &fixedAuditor{reps: []*Report{smallReport(t0)}}
	pr := prometheus.NewPedanticRegistry()
	s, hs := newTestServer(t, Config{Auditor: aud, Registerer: pr, Gatherer: pr})
	for range 5 {
		if code, _ := get(t, hs, "/metrics"); code != 200 {
			t.Fatalf("/metrics: %d", code)
		}
	}
	if aud.Calls() != 0 {
		t.Fatalf("%d audits from scrapes", aud.Calls())
	}
	s.AuditNow(context.Background())
	aud.setErr(errors.New("connection refused"))
	s.AuditNow(context.Background())
	_, body := get(t, hs, "/metrics")
	for _, want := range []string{"keyguard_audit_success 0", `keyguard_audits_total{result="failed"} 1`, `keyguard_audits_total{result="complete"} 1`,
		"keyguard_keyspace_keys 130"} {
		if !strings.Contains(body, want) {
			t.Errorf("no %q in /metrics", want)
		}
	}
	if aud.Calls() != 2 {
		t.Errorf("%d audits, want 2", aud.Calls())
	}
}

// gatherText writes every series as name{labels} value, one a line.
func gatherText(t *testing.T, g prometheus.Gatherer) string {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, l.GetName()+`="`+l.GetValue()+`"`)
			}
			v := m.GetGauge().GetValue()
			if m.Counter != nil {
				v = m.GetCounter().GetValue()
			}
			fmt.Fprintf(&b, "%s{%s} %s\n", mf.GetName(), strings.Join(ls, ","), strconv.FormatFloat(v, 'g', -1, 64))
		}
	}
	return b.String()
}

type fixedWriters []TemplateWriters

func (f fixedWriters) Writers(context.Context) ([]TemplateWriters, error) { return f, nil }

type fixedHotKeys []HotKey

func (f fixedHotKeys) HotKeys(context.Context) ([]HotKey, error) { return f, nil }
