package clients

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/keyguard/keyguard/redishook"
)

// Writer records and metrics from Python, Node and Java services: each
// writes a key of one template through its package's interceptor, flushes
// its records, and `keyguard writers` (the real command) lists every
// service, the owner allowed and the others not; the counters every
// package exports (Java's in a text format of its own, no library), fed to
// promtool, fire the second-writer rule of deploy/alerts.yml. Java's driver
// is told the template's owner, as a service takes it from the generated
// Keys.Template.

const promoTemplate = "promo:sku:{skuId:int}"

// The services of the test and the runtime each writes from: promo-team
// owns the template, the others are second writers.
var writerServices = []struct{ runtime, service string }{
	{"python", "promo-team"},
	{"python-async", "promo-jobs"},
	{"ts-ioredis", "order-team"},
	{"ts-node-redis", "checkout-team"},
	{"java", "pricing-team"},
}

func TestWriterRecordsServer(t *testing.T)  { writerRecords(t, serverTarget(t)) }
func TestWriterRecordsCluster(t *testing.T) { writerRecords(t, clusterTarget(t)) }

func writerRecords(t *testing.T, tg *target) {
	metrics := map[string]string{}
	for i, w := range writerServices {
		rt := startRuntime(t, w.runtime, tg)
		owned := func(r req) req {
			if w.runtime == "java" {
				r["template_owner"] = "promo-team"
			}
			return r
		}
		for j, pipeline := range []bool{false, true} { // a command, and a pipeline
			id := 1000 + 10*i + j
			key := fmt.Sprintf("promo:sku:%d", id)
			rt.Do(t, owned(req{"op": "write", "service": w.service, "template": promoTemplate, "values": []any{id}, "key": key,
				"fields": map[string]any{"price": "9"}, "pipeline": pipeline})).must(t, w.runtime+" write", nil)
			if tg.rdb.HGet(t.Context(), key, "price").Val() != "9" {
				t.Errorf("%s: the instrumented write of %s did not reach Redis", w.runtime, key)
			}
		}
		// A guarded write of the template, then another namespace refused on it.
		id := 1000 + 10*i + 5
		for j, owner := range []string{"promo-service:sku", "order-service:sku"} {
			rep := rt.Do(t, owned(req{"op": "hset", "owner": owner, "service": w.service, "template": promoTemplate,
				"values": []any{id}, "fields": map[string]any{"price": "3"}}))
			if (rep.Err == nil) != (j == 0) {
				t.Errorf("%s guarded write %d as %s: %+v", w.runtime, j, owner, rep)
			}
		}
		var f struct{ Records int }
		rt.Do(t, req{"op": "flush"}).must(t, w.runtime+" flush", &f)
		if f.Records != 1 {
			t.Errorf("%s flushed %d records, want 1 (template x service)", w.runtime, f.Records)
		}
		var m struct{ Text string }
		rt.Do(t, req{"op": "metrics"}).must(t, w.runtime+" metrics", &m)
		metrics[w.service] = m.Text
		if w.runtime == "java" { // its own text format, no library: promtool reads and lints it
			promtoolCheckMetrics(t, m.Text)
			javaMetricsHandler(t, rt, m.Text)
		}
	}

	// The records are the Go hook's: redishook reads them.
	tws, err := redishook.ReadWriters(t.Context(), tg.rdb, nil, time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(tws) != 1 || tws[0].Template != promoTemplate || len(tws[0].Writers) != len(writerServices) {
		t.Fatalf("redishook.ReadWriters: %+v; want %s written by %d services", tws, promoTemplate, len(writerServices))
	}

	// keyguard writers lists them against the registry.
	bin := keyguardBinary(t)
	writers := func(failOn string) *exec.Cmd {
		args := []string{"writers", "--redis", "redis://" + strings.Join(tg.addrs, ","), "--registry", filepath.Join("testdata", "keyguard.yaml"),
			"--format", "json", "--fail-on", failOn}
		if tg.cluster {
			args = append(args, "--cluster")
		}
		return exec.Command(bin, args...)
	}
	out, err := writers("never").Output()
	if err != nil {
		t.Fatalf("keyguard writers: %v\n%s", err, out)
	}
	var doc struct {
		Violations int `json:"violations"`
		Templates  []struct {
			Template string `json:"template"`
			Owner    string `json:"owner"`
			Writers  []struct {
				Service string `json:"service"`
				Allowed bool   `json:"allowed"`
			} `json:"writers"`
			Violation bool `json:"violation"`
		} `json:"templates"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("keyguard writers --format json: %v\n%s", err, out)
	}
	if len(doc.Templates) != 1 || doc.Templates[0].Template != promoTemplate || !doc.Templates[0].Violation || doc.Violations != 1 {
		t.Fatalf("keyguard writers: %s; want one violated template %s", out, promoTemplate)
	}
	got := map[string]bool{}
	for _, w := range doc.Templates[0].Writers {
		got[w.Service] = w.Allowed
	}
	for _, w := range writerServices {
		allowed, ok := got[w.service]
		if !ok || allowed != (w.service == "promo-team") {
			t.Errorf("keyguard writers: service %s (from %s) listed=%v allowed=%v; want listed, allowed only for the owner", w.service, w.runtime, ok, allowed)
		}
	}
	// Its exit code pages on the foreign writers.
	if err := writers("error").Run(); err == nil {
		t.Errorf("keyguard writers --fail-on error exited 0 with foreign writers")
	}

	// The counters: what the rule reads, with the Go hook's names and labels.
	var series []string
	for svc, text := range metrics {
		s := writeSeries(text, promoTemplate)
		if len(s) != 1 || !strings.Contains(s[0], `service="`+svc+`"`) || !strings.Contains(s[0], `owner="promo-team"`) {
			t.Errorf("%s exports %v; want one keyguard_commands_total write series of %s, owner promo-team\n%s", svc, s, promoTemplate, text)
		}
		series = append(series, s...)
		if !hasSeries(text, "keyguard_guard_conflicts_total", map[string]string{"template": promoTemplate, "owner": "promo-service:sku"}) {
			t.Errorf("%s exports no keyguard_guard_conflicts_total of %s naming the owner found\n%s", svc, promoTemplate, text)
		}
	}
	sort.Strings(series)
	promtoolSecondWriter(t, series)
}

var labelRe = regexp.MustCompile(`(\w+)="((?:[^"\\]|\\.)*)"`)

// writeSeries returns the keyguard_commands_total series of template with
// access="write" in a Prometheus text exposition, as selectors with their
// labels sorted.
func writeSeries(text, template string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "keyguard_commands_total{") {
			continue
		}
		end := strings.LastIndexByte(line, '}')
		var labels []string
		m := map[string]string{}
		for _, l := range labelRe.FindAllStringSubmatch(line[:end], -1) {
			labels = append(labels, l[0])
			m[l[1]] = l[2]
		}
		if m["template"] != template || m["access"] != "write" || strings.TrimSpace(line[end+1:]) == "0.0" {
			continue
		}
		sort.Strings(labels)
		out = append(out, "keyguard_commands_total{"+strings.Join(labels, ",")+"}")
	}
	return out
}

// hasSeries reports whether the exposition has a non-zero sample of metric
// with these labels (among others).
func hasSeries(text, metric string, labels map[string]string) bool {
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, metric+"{") {
			continue
		}
		end := strings.LastIndexByte(line, '}')
		m := map[string]string{}
		for _, l := range labelRe.FindAllStringSubmatch(line[:end], -1) {
			m[l[1]] = l[2]
		}
		ok := strings.TrimSpace(line[end+1:]) != "0" && strings.TrimSpace(line[end+1:]) != "0.0"
		for k, v := range labels {
			ok = ok && m[k] == v
		}
		if ok {
			return true
		}
	}
	return false
}

// promtoolSecondWriter runs deploy/alerts.yml's rules on the series, each
// growing by one a minute: KeyguardSecondWriter fires with all of them,
// not with the owner's alone.
func promtoolSecondWriter(t *testing.T, series []string) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		missing(t, "promtool not found (Debian: prometheus)")
	}
	rules, err := filepath.Abs(filepath.Join("..", "deploy", "alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "rule_files: [%q]\nevaluation_interval: 1m\ntests:\n", rules)
	test := func(series []string, alerts string) {
		b.WriteString("  - interval: 1m\n    input_series:\n")
		for _, s := range series {
			fmt.Fprintf(&b, "      - series: '%s'\n        values: '0+1x60'\n", strings.ReplaceAll(s, "'", "''"))
		}
		fmt.Fprintf(&b, "    alert_rule_test:\n      - eval_time: 30m\n        alertname: KeyguardSecondWriter\n        exp_alerts: %s\n", alerts)
	}
	var owner []string
	for _, s := range series {
		if strings.Contains(s, `service="promo-team"`) {
			owner = append(owner, s)
		}
	}
	test(owner, "[]")
	test(series, fmt.Sprintf(`
          - exp_labels: {severity: warning, template: %q}
            exp_annotations:
              summary: "%s was written by %d services in 24h"
              description: "Run: keyguard writers --redis $KEYGUARD_REDIS --window 24h"`, promoTemplate, promoTemplate, len(series)))
	file := filepath.Join(t.TempDir(), "second_writer_test.yml")
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "test", "rules", file).CombinedOutput(); err != nil {
		t.Errorf("promtool test rules: %v\n%s\n%s", err, out, b.String())
	}
}

var cliBuilt built

// keyguardBinary builds cmd/keyguard once into the work directory.
func keyguardBinary(t testing.TB) string {
	return cliBuilt.get(t, func(t testing.TB) (string, string, error) {
		bin := filepath.Join(workDir(t), "keyguard")
		if out, err := exec.Command("go", "build", "-o", bin, "../cmd/keyguard").CombinedOutput(); err != nil {
			return "", "", fmt.Errorf("go build ../cmd/keyguard: %v\n%s", err, out)
		}
		return bin, "", nil
	})
}

// promtoolCheckMetrics fails the test when promtool cannot parse text as
// Prometheus' text format, or lints it (names, HELP and TYPE lines).
func promtoolCheckMetrics(t *testing.T, text string) {
	t.Helper()
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		missing(t, "promtool not found (Debian: prometheus)")
		return
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(text)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s\n%s", err, out, text)
	}
}

// javaMetricsHandler serves the Java driver's Metrics with its handler on
// the JDK's HTTP server and reads /metrics as Prometheus does.
func javaMetricsHandler(t *testing.T, rt runtime, text string) {
	t.Helper()
	var srv struct{ Port int }
	rt.Do(t, req{"op": "serve_metrics"}).must(t, "java serve_metrics", &srv)
	res, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", srv.Port))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if ct := res.Header.Get("Content-Type"); res.StatusCode != 200 || !strings.HasPrefix(ct, "text/plain; version=0.0.4") || string(body) != text {
		t.Errorf("GET /metrics of Metrics.handler: %d %q\n%s\nwant\n%s", res.StatusCode, ct, body, text)
	}
}
