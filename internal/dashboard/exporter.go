package dashboard

import "github.com/prometheus/client_golang/prometheus"

// The exporter reads the latest audit; a scrape never runs one. Labels
// name templates, owners, domains, rules and services, never keys, so the
// series count follows the registry, not the keyspace.

// Metric names.
const (
	MetricTemplateKeys        = "keyguard_template_keys"
	MetricTemplateBytes       = "keyguard_template_bytes"
	MetricTemplateNoTTL       = "keyguard_template_no_ttl_keys"
	MetricTemplateFindings    = "keyguard_template_findings"
	MetricTemplateWriters     = "keyguard_template_writers"
	MetricHotKeys             = "keyguard_hot_keys"
	MetricKeys                = "keyguard_keyspace_keys"
	MetricBytes               = "keyguard_keyspace_bytes"
	MetricNoTTL               = "keyguard_keyspace_no_ttl_keys"
	MetricUnregisteredKeys    = "keyguard_unregistered_keys"
	MetricUnregisteredBytes   = "keyguard_unregistered_bytes"
	MetricFindings            = "keyguard_findings"
	MetricAuditDuration       = "keyguard_audit_duration_seconds"
	MetricAuditSuccess        = "keyguard_audit_success"
	MetricAuditLastSuccess    = "keyguard_audit_last_success_timestamp_seconds"
	MetricAuditAge            = "keyguard_audit_age_seconds"
	MetricAuditInterval       = "keyguard_audit_interval_seconds"
	MetricAuditRunning        = "keyguard_audit_running"
	MetricAudits              = "keyguard_audits_total"
	MetricWriterRecordsFailed = "keyguard_writer_records_failed"
	MetricAuditComplete       = "keyguard_audit_complete"
	MetricAuditCovered        = "keyguard_audit_covered_ratio"
)

var (
	tplLabels = []string{"template", "owner", "domain"}

	descTemplateKeys     = prometheus.NewDesc(MetricTemplateKeys, "Keys of the registry template in the last audit (0 for a template without keys).", tplLabels, nil)
	descTemplateBytes    = prometheus.NewDesc(MetricTemplateBytes, "Memory of the template's keys in the last audit (MEMORY USAGE).", tplLabels, nil)
	descTemplateNoTTL    = prometheus.NewDesc(MetricTemplateNoTTL, "Keys of the template without a TTL in the last audit.", tplLabels, nil)
	descTemplateFindings = prometheus.NewDesc(MetricTemplateFindings, "Findings on keys of the template in the last audit.", tplLabels, nil)
	descTemplateWriters  = prometheus.NewDesc(MetricTemplateWriters, "Services that wrote the template within the writer window (SDK writer records); allowed=false: neither its owner nor in its writers.", []string{"template", "owner", "allowed"}, nil)
	descHotKeys          = prometheus.NewDesc(MetricHotKeys, "Hot keys of the template: the audit's LFU top set (source=server) and SDK reports.", []string{"template", "owner", "source"}, nil)
	descKeys             = prometheus.NewDesc(MetricKeys, "Keys in the last audit.", nil, nil)
	descBytes            = prometheus.NewDesc(MetricBytes, "Memory of every key in the last audit.", nil, nil)
	descNoTTL            = prometheus.NewDesc(MetricNoTTL, "Keys without a TTL in the last audit.", nil, nil)
	descUnregKeys        = prometheus.NewDesc(MetricUnregisteredKeys, "Keys matching no registry template in the last audit (not exported without a registry).", nil, nil)
	descUnregBytes       = prometheus.NewDesc(MetricUnregisteredBytes, "Memory of the keys matching no template in the last audit (not exported without a registry).", nil, nil)
	descFindings         = prometheus.NewDesc(MetricFindings, "Findings of the last audit per rule and severity (severity=unlisted: over the report's per-rule list cap).", []string{"rule", "severity"}, nil)
	descDuration         = prometheus.NewDesc(MetricAuditDuration, "How long the last audit took.", nil, nil)
	descSuccess          = prometheus.NewDesc(MetricAuditSuccess, "1 when the last audit ran and walked the whole keyspace, else 0 (failed to run, or stopped early).", nil, nil)
	descLastSuccess      = prometheus.NewDesc(MetricAuditLastSuccess, "When the last complete audit finished, in Unix seconds.", nil, nil)
	descAge              = prometheus.NewDesc(MetricAuditAge, "Seconds since the last complete audit finished (since the server started when there was none).", nil, nil)
	descInterval         = prometheus.NewDesc(MetricAuditInterval, "The audit schedule: seconds between two audit starts.", nil, nil)
	descRunning          = prometheus.NewDesc(MetricAuditRunning, "1 while an audit runs.", nil, nil)
	descAudits           = prometheus.NewDesc(MetricAudits, "Audits run, by result: complete, partial (stopped early) or failed (could not run).", []string{"result"}, nil)
	descWritersFailed    = prometheus.NewDesc(MetricWriterRecordsFailed, "1 when the SDK writer records could not be read at the last audit.", nil, nil)
	descComplete         = prometheus.NewDesc(MetricAuditComplete, "1 when the audit on show counted every key of every database of every master once, else 0 (its coverage names what was not counted).", []string{"target", "kind"}, nil)
	descCovered          = prometheus.NewDesc(MetricAuditCovered, "The part of the keyspace the audit on show covered, 0 to 1: Cluster slots, or keys at the start for a server.", []string{"target", "kind"}, nil)
)

// collector exports the server's latest audit and its status.
type collector struct{ s *Server }

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descTemplateKeys, descTemplateBytes, descTemplateNoTTL, descTemplateFindings,
		descTemplateWriters, descHotKeys, descKeys, descBytes, descNoTTL, descUnregKeys, descUnregBytes, descFindings,
		descDuration, descSuccess, descLastSuccess, descAge, descInterval, descRunning, descAudits, descWritersFailed, descComplete, descCovered} {
		ch <- d
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	st, ms := c.s.exported()
	for _, m := range ms {
		ch <- m
	}
	gauge := func(d *prometheus.Desc, v float64) { ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v) }
	gauge(descInterval, c.s.interval.Seconds())
	gauge(descRunning, b2f(st.Running))
	if !st.LastAttempt.IsZero() {
		gauge(descSuccess, b2f(st.LastResult == resultComplete))
	}
	since := st.Started
	if !st.LastGood.IsZero() {
		since = st.LastGood
		gauge(descLastSuccess, float64(st.LastGood.UnixMilli())/1e3)
	}
	gauge(descAge, max(c.s.now().Sub(since).Seconds(), 0))
	for _, r := range []string{resultComplete, resultPartial, resultFailed} {
		ch <- prometheus.MustNewConstMetric(descAudits, prometheus.CounterValue, float64(st.Results[r]), r)
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// snapshotMetrics are the series of one audit, built once when it is
// published and sent as they are at every scrape.
func snapshotMetrics(s *Snapshot) []prometheus.Metric {
	ms := make([]prometheus.Metric, 0, 4*len(s.Templates)+len(s.RuleSeverity)+16)
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ms = append(ms, prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...))
	}
	for i := range s.Templates {
		t := &s.Templates[i]
		gauge(descTemplateKeys, float64(t.Keys), t.Name, t.Owner, t.Domain)
		gauge(descTemplateBytes, float64(t.Bytes), t.Name, t.Owner, t.Domain)
		gauge(descTemplateNoTTL, float64(t.NoTTL), t.Name, t.Owner, t.Domain)
		gauge(descTemplateFindings, float64(t.Findings), t.Name, t.Owner, t.Domain)
	}
	for _, tw := range s.Writers {
		no := tw.Disallowed()
		yes := len(tw.Writers) - no
		gauge(descTemplateWriters, float64(yes), tw.Template, tw.Owner, "true")
		gauge(descTemplateWriters, float64(no), tw.Template, tw.Owner, "false")
	}
	type hk struct{ template, owner, source string }
	hot := map[hk]int{}
	var order []hk
	for _, h := range s.HotKeys {
		src := "sdk"
		if h.Source == sourceServerLFU {
			src = "server"
		}
		k := hk{h.Template, h.Owner, src}
		if _, ok := hot[k]; !ok {
			order = append(order, k)
		}
		hot[k]++
	}
	for _, k := range order {
		gauge(descHotKeys, float64(hot[k]), k.template, k.owner, k.source)
	}
	for k, n := range s.RuleSeverity {
		gauge(descFindings, float64(n), k[0], k[1])
	}
	gauge(descKeys, float64(s.Totals.Keys))
	gauge(descBytes, float64(s.Totals.Bytes))
	gauge(descNoTTL, float64(s.Totals.NoTTL))
	if !s.NoRegistry() { // without one, every key would be "unregistered": no figure rather than a false alarm
		gauge(descUnregKeys, float64(s.Unregistered))
		gauge(descUnregBytes, float64(s.UnregisteredBytes))
	}
	gauge(descDuration, s.Duration.Seconds())
	gauge(descComplete, b2f(s.Complete), s.Target, s.Kind)
	gauge(descCovered, s.Covered, s.Target, s.Kind)
	if s.WritersErr != "" {
		gauge(descWritersFailed, 1)
	} else {
		gauge(descWritersFailed, 0)
	}
	return ms
}

// MetricNames lists every metric the exporter can export, for checks of
// alert rules and dashboards.
func MetricNames() []string {
	return []string{MetricTemplateKeys, MetricTemplateBytes, MetricTemplateNoTTL, MetricTemplateFindings, MetricTemplateWriters,
		MetricHotKeys, MetricKeys, MetricBytes, MetricNoTTL, MetricUnregisteredKeys, MetricUnregisteredBytes, MetricFindings,
		MetricAuditDuration, MetricAuditSuccess, MetricAuditLastSuccess, MetricAuditAge, MetricAuditInterval, MetricAuditRunning,
		MetricAudits, MetricWriterRecordsFailed, MetricAuditComplete, MetricAuditCovered}
}
