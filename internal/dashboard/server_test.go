package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

var t0 = time.Date(2026, 1, 29, 12, 0, 0, 0, time.UTC)

// clock is a settable time for the server under test.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// TestPages fetches every page and API of a server with one audit and
// checks what each must show.
func TestPages(t *testing.T) {
	clk := &clock{t0.Add(5 * time.Minute)}
	aud := &fixedAuditor{reps: []*Report{smallReport(t0)}}
	s, hs := newTestServer(t, Config{Auditor: aud, Now: clk.now})
	if err := s.AuditNow(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		code int
		want []string
	}{
		{"/", 200, []string{`id="total-keys">130<`, `62.5 KiB`, `data-name="order:order:{orderId:int}:base"`, `data-kind="family"`,
			`Second writers`, `href="/template?name=order%3Aorder%3A%7BorderId%3Aint%7D%3Abase"`, "(unregistered)", "2 of 10 templates have keys"}},
		{"/templates", 200, []string{`data-template="promo:sku:{skuId:int}" data-keys="38"`, `data-template="cache:unused:{id:int}" data-keys="0"`, "10 of 10 templates"}},
		{"/templates?owner=promo-team", 200, []string{"2 of 10 templates", `data-template="promo:sku:{skuId:int}"`}},
		{"/templates?q=SKU", 200, []string{"1 of 10 templates"}},
		{"/template?name=order%3Aorder%3A%7BorderId%3Aint%7D%3Abase", 200, []string{`id="tpl-keys">80<`, "order-team", "declared 1h", "no TTL", "order:order:1:base",
			"Keys by remaining TTL", `data-keys="78"><title>1m-1h: 78 keys`, `data-keys="2"><title>no TTL: 2 keys`}},
		{"/template?name=nope", 404, []string{"No template &#34;nope&#34;"}},
		{"/unregistered", 200, []string{"legacy:user:{id:int}:token", "legacy:user:100:token", "Registry entry to paste", "cache:unused:{id:int}"}},
		{"/findings", 200, []string{"Findings 1–4 of 4", "matches no template", "11 counted, not listed"}},
		{"/findings?rule=no-ttl", 200, []string{"Findings 1–2 of 2", `data-rule="no-ttl"`}},
		{"/findings?severity=warning", 200, []string{"Findings 1–1 of 1", "promo:sku:7"}},
		{"/hot-keys", 200, []string{"promo:sku:7", "server LFU", "LFU counter 200"}},
		{"/writers", 200, []string{"Writer records are not read"}},
		{"/history", 200, []string{"2026-01-29 12:00:00 UTC", "in memory only"}},
		{"/healthz", 200, []string{"ok: last complete audit"}},
		{"/assets/style.css", 200, []string{"--ink"}},
		{"/assets/app.js", 200, []string{"data-filter"}},
		{"/nope", 404, nil},
	} {
		code, body := get(t, hs, tc.path)
		if code != tc.code {
			t.Errorf("GET %s: %d, want %d", tc.path, code, tc.code)
		}
		for _, w := range tc.want {
			if !strings.Contains(body, w) {
				t.Errorf("GET %s: no %q in the page", tc.path, w)
			}
		}
	}
}

// TestReportJSON: /api/report.json is the bytes keyguard audit --format
// json writes.
func TestReportJSON(t *testing.T) {
	rep := smallReport(t0)
	s, hs := newTestServer(t, Config{Auditor: &fixedAuditor{reps: []*Report{rep}}})
	code, body := get(t, hs, "/api/report.json")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "no audit yet") {
		t.Errorf("before the first audit: %d %s", code, body)
	}
	if err := s.AuditNow(context.Background()); err != nil {
		t.Fatal(err)
	}
	code, body = get(t, hs, "/api/report.json")
	if code != 200 || body != string(reportJSONBytes(t, rep)) {
		t.Errorf("report.json: %d\n%s", code, body)
	}
	code, body = get(t, hs, "/api/history.json")
	var hist []struct {
		ID      string `json:"id"`
		Keys    int64  `json:"keys"`
		Domains map[string]struct {
			Keys int64 `json:"keys"`
		} `json:"domains"`
	}
	if err := json.Unmarshal([]byte(body), &hist); err != nil || code != 200 {
		t.Fatalf("history.json: %d %v\n%s", code, err, body)
	}
	if len(hist) != 1 || hist[0].Keys != 130 || hist[0].Domains["order"].Keys != 80 || hist[0].Domains[Unregistered].Keys != 12 {
		t.Errorf("history.json: %+v", hist)
	}
	if code, _ := get(t, hs, "/api/report.json?at=20260129T120000.000Z"); code != http.StatusNotFound {
		t.Errorf("a saved report without a history directory: %d", code)
	}
}

// TestFailureBanner: when the server cannot audit, the pages keep the last
// good audit and say when and why the last one failed.
func TestFailureBanner(t *testing.T) {
	clk := &clock{t0}
	aud := &fixedAuditor{reps: []*Report{smallReport(t0)}}
	s, hs := newTestServer(t, Config{Auditor: aud, Now: clk.now})

	aud.setErr(errors.New("cannot connect to 127.0.0.1:6379: connection refused"))
	clk.t = t0.Add(time.Minute)
	if err := s.AuditNow(context.Background()); err == nil {
		t.Fatal("no error")
	}
	_, body := get(t, hs, "/")
	if !strings.Contains(body, "The audit failed.") || !strings.Contains(body, "connection refused") {
		t.Errorf("no first-audit failure banner:\n%s", body)
	}
	_, health := get(t, hs, "/healthz")
	if !strings.HasPrefix(health, "degraded: the last audit failed") {
		t.Errorf("healthz: %s", health)
	}

	aud.setErr(nil)
	clk.t = t0.Add(2 * time.Minute)
	if err := s.AuditNow(context.Background()); err != nil {
		t.Fatal(err)
	}
	aud.setErr(errors.New("cannot connect to 127.0.0.1:6379: connection refused"))
	clk.t = t0.Add(12 * time.Minute)
	s.AuditNow(context.Background())
	_, body = get(t, hs, "/templates")
	for _, want := range []string{"The last audit failed.", "2026-01-29 12:12:00 UTC", "connection refused",
		"the last complete audit ended at 2026-01-29 12:02:00 UTC", `data-template="promo:sku:{skuId:int}" data-keys="38"`} {
		if !strings.Contains(body, want) {
			t.Errorf("no %q in the page", want)
		}
	}
}

// TestFirstAuditRunning: before any audit the pages say so and reload.
func TestFirstAuditRunning(t *testing.T) {
	_, hs := newTestServer(t, Config{Auditor: &fixedAuditor{reps: []*Report{smallReport(t0)}}})
	for _, p := range []string{"/", "/templates", "/findings", "/unregistered", "/hot-keys", "/writers", "/template?name=x"} {
		code, body := get(t, hs, p)
		if code != 200 || !strings.Contains(body, "The first audit is running.") || !strings.Contains(body, `http-equiv="refresh"`) {
			t.Errorf("%s: %d\n%s", p, code, body)
		}
	}
	if _, body := get(t, hs, "/healthz"); !strings.HasPrefix(body, "starting") {
		t.Errorf("healthz: %s", body)
	}
}

// TestPartialBanner: an audit that stopped early is shown, marked.
func TestPartialBanner(t *testing.T) {
	rep := smallReport(t0)
	rep.Complete = false
	rep.Stopped = []reportNodeStop{{Node: "127.0.0.1:7001", Reason: "connection reset", Keys: 4000}}
	s, hs := newTestServer(t, Config{Auditor: &fixedAuditor{reps: []*Report{rep}}})
	s.AuditNow(context.Background())
	_, body := get(t, hs, "/")
	if !strings.Contains(body, "Incomplete audit.") || !strings.Contains(body, "127.0.0.1:7001 stopped after 4,000 keys: connection reset") {
		t.Errorf("no partial banner:\n%s", body)
	}
	if _, h := get(t, hs, "/healthz"); !strings.HasPrefix(h, "degraded: the last audit stopped early") {
		t.Errorf("healthz: %s", h)
	}
}

// TestSampledFindings: a sampled audit's counts are marked ~ and its
// findings, which name keys, are said to be of the keys it read.
func TestSampledFindings(t *testing.T) {
	rep := smallReport(t0)
	rep.Estimate = true
	s, hs := newTestServer(t, Config{Auditor: &fixedAuditor{reps: []*Report{rep}}})
	s.AuditNow(context.Background())
	if _, body := get(t, hs, "/"); !strings.Contains(body, "in the keys the sample read</div>") || !strings.Contains(body, "~") {
		t.Errorf("the overview does not say the findings are the sample's:\n%s", body)
	}
	rep.Estimate = false
	s.AuditNow(context.Background())
	if _, body := get(t, hs, "/"); strings.Contains(body, "the sample read") {
		t.Error("a whole audit's findings are said to be a sample's")
	}
}

// TestNoRegistryBanner: the audit of a serve without a registry is shown
// with a banner that says so and what it did not check, and counts no
// key as unregistered, in its pages and metrics; with one, no banner.
func TestNoRegistryBanner(t *testing.T) {
	rep := smallReport(t0)
	rep.NotChecked = []string{"unregistered keys", "owners"}
	pr := prometheus.NewRegistry()
	s, hs := newTestServer(t, Config{Auditor: &fixedAuditor{reps: []*Report{rep}}, Registerer: pr, Gatherer: pr})
	s.AuditNow(context.Background())
	for _, p := range []string{"/", "/unregistered", "/findings"} {
		if _, body := get(t, hs, p); !strings.Contains(body, "<strong>No registry.</strong>") || !strings.Contains(body, "unregistered keys, owners are not checked") {
			t.Errorf("%s: no banner:\n%s", p, body)
		}
	}
	// Every key is of a family: no page counts them as unregistered.
	if _, body := get(t, hs, "/"); !strings.Contains(body, `<div class="label">Families</div>`) || strings.Contains(body, "Unregistered keys") {
		t.Errorf("overview without a registry:\n%s", body)
	}
	if _, body := get(t, hs, "/unregistered"); !strings.Contains(body, "No registry: the ") || strings.Contains(body, "match no template") {
		t.Errorf("families page without a registry:\n%s", body)
	}
	// Nor does /metrics: an alert on unregistered keys would fire on all.
	if _, body := get(t, hs, "/metrics"); strings.Contains(body, "keyguard_unregistered_keys ") || !strings.Contains(body, "keyguard_keyspace_keys ") {
		t.Errorf("metrics without a registry:\n%s", body)
	}
	pr = prometheus.NewRegistry()
	s, hs = newTestServer(t, Config{Auditor: &fixedAuditor{reps: []*Report{smallReport(t0)}}, Registerer: pr, Gatherer: pr})
	s.AuditNow(context.Background())
	if _, body := get(t, hs, "/"); strings.Contains(body, "No registry.") {
		t.Errorf("a banner with a registry:\n%s", body)
	}
	if _, body := get(t, hs, "/metrics"); !strings.Contains(body, "keyguard_unregistered_keys ") {
		t.Errorf("no unregistered keys in the metrics with a registry:\n%s", body)
	}
}

// TestHeaders: pages forbid inline and foreign scripts, styles and frames.
func TestHeaders(t *testing.T) {
	_, hs := newTestServer(t, Config{Auditor: &fixedAuditor{reps: []*Report{smallReport(t0)}}})
	resp, err := hs.Client().Get(hs.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	csp := resp.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Error("no nosniff")
	}
}

// TestEscaping: key and template names are text, never markup.
func TestEscaping(t *testing.T) {
	rep := smallReport(t0)
	rep.Groups[2].Name = `<script>alert(1)</script>:{id}`
	rep.Groups[2].Example = "a\x00b\nc\xff"
	rep.Findings[3].Key = `<img src=x onerror=alert(1)>`
	s, hs := newTestServer(t, Config{Auditor: &fixedAuditor{reps: []*Report{rep}}})
	s.AuditNow(context.Background())
	for _, p := range []string{"/", "/unregistered", "/findings"} {
		_, body := get(t, hs, p)
		if strings.Contains(body, "<script>alert") || strings.Contains(body, "<img src=x") {
			t.Errorf("%s: unescaped markup", p)
		}
	}
	if _, body := get(t, hs, "/unregistered"); !strings.Contains(body, `a\x00b\nc\xff`) {
		t.Error("binary example key not escaped as text")
	}
}

// TestTrendsSkipPartial: an audit that stopped early is no point of the
// trend lines while complete ones exist.
func TestTrendsSkipPartial(t *testing.T) {
	part := smallReport(t0.Add(time.Minute))
	part.Complete = false
	s, hs := newTestServer(t, Config{Auditor: &fixedAuditor{reps: []*Report{smallReport(t0), part, smallReport(t0.Add(2 * time.Minute))}}})
	for range 3 {
		s.AuditNow(context.Background())
	}
	if n := len(s.trendPoints()); n != 2 {
		t.Errorf("%d trend points, want 2", n)
	}
	if _, body := get(t, hs, "/"); !strings.Contains(body, `data-points="2"`) || strings.Contains(body, `data-points="3"`) {
		t.Error("the overview's trends include the partial audit")
	}
	if _, body := get(t, hs, "/history"); strings.Count(body, "partial") != 1 {
		t.Error("the history page does not list the partial audit")
	}
}

// TestWriterTags: the writers page and the templates table mark a writer
// the registry does not allow, and a second writer; the findings page
// offers the owners that have findings.
func TestWriterTags(t *testing.T) {
	aud := &fixedAuditor{reps: []*Report{smallReport(t0)}}
	s, hs := newTestServer(t, Config{Auditor: aud, Writers: fixedWriters{
		{Template: "order:order:{orderId:int}:base", Owner: "order-team", Registered: true,
			Writers: []Writer{{Service: "order-team", Allowed: true}, {Service: "audit-team", Allowed: true}}},
		{Template: "promo:sku:{skuId:int}", Owner: "promo-team", Registered: true,
			Writers: []Writer{{Service: "promo-team", Allowed: true}, {Service: "order-team"}}},
		{Template: "seq:order:no", Owner: "order-team", Registered: true, Writers: []Writer{{Service: "order-team", Allowed: true}}},
	}})
	if err := s.AuditNow(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, body := get(t, hs, "/writers")
	var tags []string
	for _, row := range strings.Split(body, "<tr data-template=")[1:] {
		name, _, _ := strings.Cut(row, " ")
		tag := row[strings.Index(row, `<span class="tag `):]
		tag = tag[strings.Index(tag, ">")+1 : strings.Index(tag, "</span>")]
		tags = append(tags, name+" "+tag)
	}
	want := []string{`"promo:sku:{skuId:int}" violation`, `"order:order:{orderId:int}:base" second writer`, `"seq:order:no" one writer`}
	if strings.Join(tags, "; ") != strings.Join(want, "; ") {
		t.Errorf("writers page rows:\n%q\nwant\n%q", tags, want)
	}
	_, body = get(t, hs, "/templates")
	for _, w := range []string{`<span class="tag bad" title="promo-team, order-team">2</span>`, `<span class="tag warn" title="order-team, audit-team">2</span>`} {
		if !strings.Contains(body, w) {
			t.Errorf("templates: no %q", w)
		}
	}
	_, body = get(t, hs, "/findings")
	if !strings.Contains(body, `<select name="owner"><option value="">all</option><option>order-team</option><option>promo-team</option></select>`) {
		t.Error("findings: the owner menu does not list order-team and promo-team")
	}
}

// TestLongKeyCell: a long key stays on one line of its column, cut by
// the stylesheet, with the whole key in the cell's title for hovering.
func TestLongKeyCell(t *testing.T) {
	rep := smallReport(t0)
	long := "debug:dump:" + strings.Repeat("x", 1000)
	rep.Findings[3].Key = long
	s, hs := newTestServer(t, Config{Auditor: &fixedAuditor{reps: []*Report{rep}}})
	s.AuditNow(context.Background())
	if _, body := get(t, hs, "/findings"); !strings.Contains(body, `<td class="key" title="`+long+`">`) {
		t.Error("/findings: the long key's cell has no title holding the whole key")
	}
	_, css := get(t, hs, "/assets/style.css")
	for _, rule := range []string{"td.key { max-width: 32em; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }"} {
		if !strings.Contains(css, rule) {
			t.Errorf("style.css lacks %q", rule)
		}
	}
	if strings.Contains(css, "overflow-wrap: anywhere") {
		t.Error("style.css still wraps keys anywhere")
	}
}
