package dashboard

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
)

// The deploy files name only metrics and labels the exporter exports.

const (
	alertFile   = "../../deploy/keyguard-serve-alerts.yml"
	grafanaFile = "../../deploy/grafana-keyguard.json"
)

// promqlWords are PromQL's functions, aggregations and keywords: every
// other name in an expression is a metric.
var promqlWords = strings.Fields(`sum min max avg count stddev stdvar topk bottomk quantile count_values group
	by without on ignoring group_left group_right and or unless bool offset
	abs absent absent_over_time ceil changes clamp clamp_max clamp_min delta deriv exp floor histogram_quantile
	holt_winters idelta increase irate label_join label_replace ln log2 log10 predict_linear rate resets round
	scalar sort sort_desc sqrt time timestamp vector avg_over_time min_over_time max_over_time sum_over_time
	count_over_time last_over_time present_over_time inf nan`)

// exporterLabels are the labels the exporter sets, and those Prometheus
// adds to every series.
var exporterLabels = []string{"template", "owner", "domain", "allowed", "source", "rule", "severity", "result", "job", "instance"}

var (
	reVar        = regexp.MustCompile(`\$\{?\w+\}?`)
	reString     = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|` + "`[^`]*`")
	reMatchers   = regexp.MustCompile(`\{([^{}]*)\}`)
	reMatcher    = regexp.MustCompile(`^\s*([a-zA-Z_]\w*)\s*(=~|!~|!=|=)\s*$`)
	reGrouping   = regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\(([^()]*)\)`)
	reRange      = regexp.MustCompile(`\[[^\]]*\]`)
	reLabelVals  = regexp.MustCompile(`\blabel_values\(\s*([^,()]*(?:\{[^}]*\})?)\s*,\s*(\w+)\s*\)`)
	reToken      = regexp.MustCompile(`[0-9][0-9a-zA-Z_.]*|[a-zA-Z_:][a-zA-Z0-9_:]*`)
	reDurationOK = regexp.MustCompile(`^([0-9]+[smhdwy])+$`)
)

// exprNames returns the metric and label names a PromQL expression (or a
// Grafana label_values query) uses.
func exprNames(t *testing.T, expr string) (metrics, labels []string) {
	t.Helper()
	if strings.Count(expr, "(") != strings.Count(expr, ")") || strings.Count(expr, "{") != strings.Count(expr, "}") {
		t.Errorf("unbalanced: %s", expr)
	}
	s := reVar.ReplaceAllString(expr, "")
	for _, m := range reLabelVals.FindAllStringSubmatch(s, -1) {
		labels = append(labels, m[2])
	}
	s = reLabelVals.ReplaceAllString(s, "$1")
	s = reString.ReplaceAllString(s, " ")
	for _, m := range reMatchers.FindAllStringSubmatch(s, -1) {
		for _, part := range strings.Split(m[1], ",") {
			if strings.TrimSpace(part) == "" {
				continue
			}
			mm := reMatcher.FindStringSubmatch(part)
			if mm == nil {
				t.Errorf("label matcher %q in %s", part, expr)
				continue
			}
			labels = append(labels, mm[1])
		}
	}
	s = reMatchers.ReplaceAllString(s, " ")
	for _, m := range reGrouping.FindAllStringSubmatch(s, -1) {
		for _, l := range strings.Split(m[2], ",") {
			if l = strings.TrimSpace(l); l != "" {
				labels = append(labels, l)
			}
		}
	}
	s = reGrouping.ReplaceAllString(s, " ")
	s = reRange.ReplaceAllString(s, " ")
	for _, tok := range reToken.FindAllString(s, -1) {
		switch {
		case tok[0] >= '0' && tok[0] <= '9':
			if strings.Trim(tok, "0123456789.e") != "" && !reDurationOK.MatchString(tok) {
				t.Errorf("token %q in %s", tok, expr)
			}
		case !slices.Contains(promqlWords, tok):
			metrics = append(metrics, tok)
		}
	}
	return metrics, labels
}

// checkExpr: the expression names at least one metric, every metric is
// exported, every label is one the series carry.
func checkExpr(t *testing.T, where, expr string) {
	t.Helper()
	metrics, labels := exprNames(t, expr)
	if len(metrics) == 0 {
		t.Errorf("%s: no metric in %s", where, expr)
	}
	for _, m := range metrics {
		if !slices.Contains(MetricNames(), m) {
			t.Errorf("%s: %s is not a metric of keyguard serve (%s)", where, m, expr)
		}
	}
	for _, l := range labels {
		if !slices.Contains(exporterLabels, l) {
			t.Errorf("%s: label %s is on no series of keyguard serve (%s)", where, l, expr)
		}
	}
}

type ruleFile struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Alert       string            `yaml:"alert"`
			Expr        string            `yaml:"expr"`
			For         string            `yaml:"for"`
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

// TestAlertRules: the rule file parses as YAML, each alert has a severity,
// a summary and a description, and names only exported metrics; the
// issue's four cases are covered.
func TestAlertRules(t *testing.T) {
	b, err := os.ReadFile(alertFile)
	if err != nil {
		t.Fatal(err)
	}
	var rf ruleFile
	if err := yaml.UnmarshalWithOptions(b, &rf, yaml.Strict()); err != nil {
		t.Fatal(err)
	}
	var alerts []string
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			alerts = append(alerts, r.Alert)
			if r.Alert == "" || r.Expr == "" {
				t.Errorf("a rule without alert or expr: %+v", r)
			}
			if !slices.Contains([]string{"critical", "warning", "info"}, r.Labels["severity"]) {
				t.Errorf("%s: severity %q", r.Alert, r.Labels["severity"])
			}
			if r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
				t.Errorf("%s: no summary or description", r.Alert)
			}
			if r.For != "" {
				if _, err := time.ParseDuration(r.For); err != nil {
					t.Errorf("%s: for %q: %v", r.Alert, r.For, err)
				}
			}
			checkExpr(t, r.Alert, r.Expr)
		}
	}
	for _, want := range []string{"KeyguardDisallowedWriter", "KeyguardSecondWriter", "KeyguardUnregisteredGrowth", "KeyguardNoTTLGrowth", "KeyguardAuditFailing", "KeyguardAuditStale"} {
		if !slices.Contains(alerts, want) {
			t.Errorf("no alert %s", want)
		}
	}
}

// TestAlertRulesPromtool runs the rules' unit tests
// (testdata/serve-alerts_test.yml) with promtool: each alert fires when
// it should and stays quiet when it should.
func TestAlertRulesPromtool(t *testing.T) {
	promtool := os.Getenv("KEYGUARD_PROMTOOL")
	if promtool == "" {
		var err error
		if promtool, err = exec.LookPath("promtool"); err != nil {
			if os.Getenv("KEYGUARD_REQUIRE_TOOLCHAINS") != "" {
				t.Fatal("promtool not found and KEYGUARD_REQUIRE_TOOLCHAINS is set: install it (Debian package prometheus; see .ci/run)")
			}
			t.Skip("promtool not found; set KEYGUARD_REQUIRE_TOOLCHAINS=1 to make this a failure")
		}
	}
	dir := t.TempDir()
	for src, dst := range map[string]string{alertFile: "keyguard-serve-alerts.yml", "testdata/serve-alerts_test.yml": "serve-alerts_test.yml"} {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, dst), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"check", "rules", "keyguard-serve-alerts.yml"}, {"test", "rules", "serve-alerts_test.yml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// TestGrafanaDashboard: the dashboard is JSON, its panels and variables
// query only exported metrics and labels, ids are unique, and panels sit
// on Grafana's 24-column grid.
func TestGrafanaDashboard(t *testing.T) {
	b, err := os.ReadFile(grafanaFile)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Title  string `json:"title"`
		UID    string `json:"uid"`
		Panels []struct {
			ID         int    `json:"id"`
			Title      string `json:"title"`
			Datasource struct {
				UID string `json:"uid"`
			} `json:"datasource"`
			GridPos struct{ X, Y, W, H int } `json:"gridPos"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name  string `json:"name"`
				Type  string `json:"type"`
				Query any    `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	if d.Title == "" || d.UID == "" || len(d.Panels) < 8 {
		t.Fatalf("dashboard %q uid %q, %d panels", d.Title, d.UID, len(d.Panels))
	}
	ids := map[int]bool{}
	used := map[string]bool{}
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("panel id %d twice", p.ID)
		}
		ids[p.ID] = true
		if p.Datasource.UID != "${datasource}" {
			t.Errorf("%s: datasource %q", p.Title, p.Datasource.UID)
		}
		if p.GridPos.X < 0 || p.GridPos.W <= 0 || p.GridPos.X+p.GridPos.W > 24 || p.GridPos.H <= 0 {
			t.Errorf("%s: gridPos %+v", p.Title, p.GridPos)
		}
		if len(p.Targets) == 0 {
			t.Errorf("%s: no query", p.Title)
		}
		for _, tg := range p.Targets {
			checkExpr(t, p.Title, tg.Expr)
			ms, _ := exprNames(t, tg.Expr)
			for _, m := range ms {
				used[m] = true
			}
		}
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		q, _ := v.Query.(map[string]any)
		s, _ := q["query"].(string)
		checkExpr(t, "variable "+v.Name, s)
	}
	for _, m := range []string{MetricTemplateBytes, MetricTemplateKeys, MetricTemplateNoTTL, MetricUnregisteredKeys, MetricFindings, MetricTemplateWriters, MetricAuditAge} {
		if !used[m] {
			t.Errorf("no panel shows %s", m)
		}
	}
}

// TestExprNames holds the PromQL name reader to known answers, so that a
// rule naming a metric the exporter lacks cannot pass unseen.
func TestExprNames(t *testing.T) {
	for _, tc := range []struct {
		expr            string
		metrics, labels []string
	}{
		{`sum by (template, owner) (keyguard_template_writers{allowed="false"}) > 1`, []string{"keyguard_template_writers"}, []string{"allowed", "template", "owner"}},
		{"keyguard_unregistered_keys - keyguard_unregistered_keys offset 1d > 1000", []string{"keyguard_unregistered_keys", "keyguard_unregistered_keys"}, nil},
		{`increase(keyguard_audits_total{job=~"$job"}[1h])`, []string{"keyguard_audits_total"}, []string{"job"}},
		{`label_values(keyguard_template_keys{job=~"$job"}, owner)`, []string{"keyguard_template_keys"}, []string{"owner", "job"}},
		{`rate(redis_commands_total[5m])`, []string{"redis_commands_total"}, nil},
	} {
		m, l := exprNames(t, tc.expr)
		slices.Sort(l)
		slices.Sort(tc.labels)
		if !slices.Equal(m, tc.metrics) || !slices.Equal(l, tc.labels) {
			t.Errorf("%s: %v %v, want %v %v", tc.expr, m, l, tc.metrics, tc.labels)
		}
	}
}
