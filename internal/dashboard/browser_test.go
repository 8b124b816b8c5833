package dashboard

import (
	"context"
	"fmt"
	"math"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/keyguard/keyguard/internal/audit/live"
	"github.com/keyguard/keyguard/internal/redistest"
	"github.com/keyguard/keyguard/redishook"
	"github.com/keyguard/keyguard/registry"
)

// chromium finds the browser (KEYGUARD_CHROMIUM, else chromium on the
// PATH). It skips the test when there is none, unless
// KEYGUARD_REQUIRE_TOOLCHAINS is set.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("KEYGUARD_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("KEYGUARD_REQUIRE_TOOLCHAINS") != "" {
		t.Fatal("chromium not found and KEYGUARD_REQUIRE_TOOLCHAINS is set: install it (Debian package chromium; see .ci/run)")
	}
	t.Skip("chromium not found; set KEYGUARD_REQUIRE_TOOLCHAINS=1 to make this a failure")
	return ""
}

// browser starts a headless Chromium with a fresh profile.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1440, 1000),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	return ctx
}

// artifactDir is where screenshots go: KEYGUARD_ARTIFACTS, else a
// temporary directory of the test.
func artifactDir(t *testing.T) string {
	if d := os.Getenv("KEYGUARD_ARTIFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

type tmRect struct {
	Name   string  `json:"name"`
	Kind   string  `json:"kind"`
	Domain string  `json:"domain"`
	Keys   int64   `json:"keys"`
	Bytes  int64   `json:"bytes"`
	W      float64 `json:"w"`
	H      float64 `json:"h"`
}

type tableRow struct {
	Template string   `json:"template"`
	Cells    []string `json:"cells"`
}

// TestBrowserOverview loads the overview in headless Chromium against a
// real redis-server holding a generated dataset, and checks that the
// treemap and the template tables show the dataset's numbers, that the
// page loads nothing from elsewhere, and saves screenshots. One browser
// session walks three pages, hence the length.
func TestBrowserOverview(t *testing.T) {
	bctx := browser(t)
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	reg := testRegistry(t)
	ctx := context.Background()

	s, err := New(Config{Registry: reg, Auditor: NewAuditor(reg, liveTarget(t, srv.URL()), live.Options{}),
		Writers: NewWriterSource(rdb, reg, 24*time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	// Three audits of a growing keyspace, for the trend lines; the last
	// one after two services wrote promo:sku.
	var ds dataset
	for i, scale := range []int{1, 2, 3} {
		ds = writeDataset(t, rdb, scale)
		if i == 2 {
			writeAsServices(t, srv, reg)
		}
		if err := s.AuditNow(ctx); err != nil {
			t.Fatal(err)
		}
	}
	snap, _ := s.Latest()
	dbsize := rdb.DBSize(ctx).Val()
	if snap.Totals.Keys != dbsize {
		t.Fatalf("the audit counted %d keys, the server holds %d", snap.Totals.Keys, dbsize)
	}

	hs := httptest.NewServer(s.Handler())
	defer hs.Close()
	var mu sync.Mutex
	var foreign, complaints []string
	if err := chromedp.Listen(bctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			if !strings.HasPrefix(e.Request.URL, hs.URL) && !strings.HasPrefix(e.Request.URL, "data:") {
				foreign = append(foreign, e.Request.URL)
			}
		case *cdplog.EventEntryAdded: // CSP violations, failed loads, script errors
			if e.Entry.Level == cdplog.EntryLevelError || e.Entry.Level == cdplog.EntryLevelWarning {
				complaints = append(complaints, string(e.Entry.Source)+": "+e.Entry.Text+" "+e.Entry.URL)
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(bctx, chromedp.EmulateViewport(1440, 1000), chromedp.Navigate(hs.URL+"/"), chromedp.WaitVisible(chromedp.CSS("svg.treemap"))); err != nil {
		t.Fatal(err)
	}
	rects, err := chromedp.Run(bctx, chromedp.Evaluate[[]tmRect](`Array.from(document.querySelectorAll("svg.treemap rect.tm-item")).map(r => {
		const b = r.getBBox();
		return {name: r.dataset.name, kind: r.dataset.kind, domain: r.closest("g.tm-domain").dataset.domain,
			keys: +r.dataset.keys, bytes: +r.dataset.bytes, w: b.width, h: b.height};
	})`))
	if err != nil {
		t.Fatal(err)
	}
	checkTreemap(t, rects, ds, snap)

	top, err := chromedp.Run(bctx, chromedp.Evaluate[[]tableRow](rowsJS("#top-templates")))
	if err != nil {
		t.Fatal(err)
	}
	checkTable(t, "overview", top, ds, snap, 2, 3)
	total, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.getElementById("total-keys").textContent`))
	if err != nil || total != fmtCount(dbsize) {
		t.Errorf("total keys %q, want %s (%v)", total, fmtCount(dbsize), err)
	}
	dir := artifactDir(t)
	shot(t, bctx, filepath.Join(dir, "serve-overview.png"))

	if err := chromedp.Do(bctx, chromedp.Navigate(hs.URL+"/templates"), chromedp.WaitVisible(chromedp.CSS("#template-table"))); err != nil {
		t.Fatal(err)
	}
	all, err := chromedp.Run(bctx, chromedp.Evaluate[[]tableRow](rowsJS("#template-table")))
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(reg.Entries) {
		t.Errorf("the template table has %d rows, the registry %d templates", len(all), len(reg.Entries))
	}
	checkTable(t, "templates", all, ds, snap, 3, 4)
	// The search box filters the rows as one types.
	if err := chromedp.Do(bctx, chromedp.SendKeys(chromedp.CSS(`input[name=q]`), "promo")); err != nil {
		t.Fatal(err)
	}
	shown, err := chromedp.Run(bctx, chromedp.Evaluate[int](`Array.from(document.querySelectorAll("#template-table tbody tr")).filter(r => !r.hidden).length`))
	if err != nil || shown != 2 {
		t.Errorf("typing promo leaves %d rows, want 2 (%v)", shown, err)
	}
	shot(t, bctx, filepath.Join(dir, "serve-templates.png"))

	if err := chromedp.Do(bctx, chromedp.Navigate(hs.URL+templateURL("promo:sku:{skuId:int}")), chromedp.WaitVisible(chromedp.CSS("svg.ttlrange"))); err != nil {
		t.Fatal(err)
	}
	writers, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.querySelector("table.writers").innerText`))
	if err != nil || !strings.Contains(writers, "promo-team") || !strings.Contains(writers, "order-team") || !strings.Contains(writers, "neither the owner") {
		t.Errorf("the template page's writers: %q (%v)", writers, err)
	}
	shot(t, bctx, filepath.Join(dir, "serve-template.png"))

	mu.Lock()
	defer mu.Unlock()
	if len(foreign) > 0 {
		t.Errorf("the pages asked for other origins: %v", foreign)
	}
	if len(complaints) > 0 {
		t.Errorf("the browser complained: %v", complaints)
	}
}

// rowsJS reads a table's rows: the template and every cell's text.
func rowsJS(table string) string {
	return fmt.Sprintf(`Array.from(document.querySelectorAll(%q + " tbody tr")).map(r => ({template: r.dataset.template || "", cells: Array.from(r.cells).map(c => c.innerText.trim())}))`, table)
}

// checkTreemap: one rectangle per template with keys, with the dataset's
// key count and the audit's memory, and within a domain areas in
// proportion to memory; domains' areas in proportion to theirs too.
func checkTreemap(t *testing.T, rects []tmRect, ds dataset, snap *Snapshot) {
	t.Helper()
	seen := map[string]tmRect{}
	for _, r := range rects {
		seen[r.Name] = r
	}
	for tpl, n := range ds.keys {
		r, ok := seen[tpl]
		if !ok {
			t.Errorf("no treemap rectangle for %s", tpl)
			continue
		}
		row, _ := snap.Template(tpl)
		if r.Keys != int64(n) || r.Bytes != row.Bytes || r.Kind != "template" {
			t.Errorf("treemap %s: %d keys %d bytes, want %d keys %d bytes", tpl, r.Keys, r.Bytes, n, row.Bytes)
		}
	}
	if _, ok := seen["cache:unused:{id:int}"]; ok {
		t.Error("a template without keys has a rectangle")
	}
	fam := 0
	for _, r := range rects {
		if r.Kind == "family" {
			fam++
			if r.Domain != Unregistered {
				t.Errorf("family %s in domain %s", r.Name, r.Domain)
			}
		}
	}
	if fam != len(snap.Families) {
		t.Errorf("%d family rectangles, %d families", fam, len(snap.Families))
	}
	// Areas per byte, per domain: equal within 2% (coordinates are
	// written to 0.1 px).
	perDomain := map[string][]tmRect{}
	for _, r := range rects {
		perDomain[r.Domain] = append(perDomain[r.Domain], r)
	}
	for d, rs := range perDomain {
		ref := rs[0].W * rs[0].H / float64(rs[0].Bytes)
		for _, r := range rs[1:] {
			if got := r.W * r.H / float64(r.Bytes); math.Abs(got/ref-1) > 0.02 {
				t.Errorf("domain %s: %s has %.1f px² for %d bytes, %s %.1f px² for %d bytes: not proportional",
					d, r.Name, r.W*r.H, r.Bytes, rs[0].Name, rs[0].W*rs[0].H, rs[0].Bytes)
			}
		}
	}
}

// checkTable: each row shows the dataset's key count in column keysCol
// and the audit's memory in column bytesCol.
func checkTable(t *testing.T, name string, rows []tableRow, ds dataset, snap *Snapshot, keysCol, bytesCol int) {
	t.Helper()
	if len(rows) == 0 {
		t.Fatalf("%s: no rows", name)
	}
	for _, r := range rows {
		row, ok := snap.Template(r.Template)
		if !ok {
			t.Errorf("%s: row %q is no template", name, r.Template)
			continue
		}
		if len(r.Cells) <= bytesCol {
			t.Errorf("%s: row %s: %d cells", name, r.Template, len(r.Cells))
			continue
		}
		want := int64(ds.keys[r.Template])
		if strings.HasPrefix(r.Template, "keyguard:") {
			want = row.Keys // the writer records: not part of the dataset
		}
		if r.Cells[keysCol] != fmtCount(want) || r.Cells[bytesCol] != fmtBytes(row.Bytes) {
			t.Errorf("%s: %s shows %s keys, %s; want %s keys, %s", name, r.Template, r.Cells[keysCol], r.Cells[bytesCol], fmtCount(want), fmtBytes(row.Bytes))
		}
	}
}

func shot(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// writeAsServices has promo-team and order-team write promo:sku through
// the SDK, whose recorder leaves the writer records.
func writeAsServices(t *testing.T, srv *redistest.Server, reg *registry.Registry) {
	t.Helper()
	ctx := context.Background()
	rec := redishook.NewRecorder(srv.Client(t), redishook.RecorderOptions{})
	for _, svc := range []string{"promo-team", "order-team"} {
		c := srv.Client(t)
		redishook.New(reg, redishook.Options{Service: svc, Mode: redishook.Observe, Recorder: rec}).Install(c)
		if err := c.HSet(ctx, "promo:sku:500", "f0", secretValue).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}
