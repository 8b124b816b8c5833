package dashboard

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/keyguard/keyguard/internal/audit/report"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// TestHistoryBounded: memory keeps the newest max points, oldest first.
func TestHistoryBounded(t *testing.T) {
	h, latest, err := openHistory("", 3, quiet())
	if err != nil || latest != nil {
		t.Fatal(err, latest)
	}
	for i := range 5 {
		if err := h.add(smallReport(t0.Add(time.Duration(i) * time.Minute))); err != nil {
			t.Fatal(err)
		}
	}
	pts := h.Points()
	if len(pts) != 3 || !pts[0].At.Equal(t0.Add(2*time.Minute)) || !pts[2].At.Equal(t0.Add(4*time.Minute)) {
		t.Fatalf("points: %+v", pts)
	}
	if pts[0].Templates["promo:sku:{skuId:int}"].Keys != 38 || pts[0].Domains[Unregistered].Keys != 12 {
		t.Errorf("point totals: %+v", pts[0])
	}
	if h.Saved(pts[0].ID) {
		t.Error("saved without a directory")
	}
}

// TestHistoryDirectory: one file per audit, the newest max kept, and a
// new history on the same directory starts where the old one stopped.
func TestHistoryDirectory(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644) // not ours: left alone
	h, _, err := openHistory(dir, 4, quiet())
	if err != nil {
		t.Fatal(err)
	}
	var last *Report
	for i := range 6 {
		last = smallReport(t0.Add(time.Duration(i) * time.Minute))
		last.Summary.Keys = int64(100 + i)
		if err := h.add(last); err != nil {
			t.Fatal(err)
		}
	}
	names, err := h.files()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"report-20260129T120200.000Z.json", "report-20260129T120300.000Z.json", "report-20260129T120400.000Z.json", "report-20260129T120500.000Z.json"}
	if !slices.Equal(names, want) {
		t.Errorf("files %v, want %v", names, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.txt")); err != nil {
		t.Error("a file that is not a report was removed")
	}
	b, err := os.ReadFile(filepath.Join(dir, want[3]))
	if err != nil || !bytes.Equal(b, reportJSONBytes(t, last)) {
		t.Errorf("the saved report is not keyguard audit's JSON (%v)", err)
	}

	// A restart, keeping fewer.
	h2, latest, err := openHistory(dir, 3, quiet())
	if err != nil {
		t.Fatal(err)
	}
	if latest == nil || latest.Summary.Keys != 105 || len(latest.Findings) != len(last.Findings) {
		t.Fatalf("latest after restart: %+v", latest)
	}
	pts := h2.Points()
	if len(pts) != 3 || pts[0].Totals.Keys != 103 || pts[2].Totals.Keys != 105 {
		t.Errorf("points after restart: %+v", pts)
	}
	if !reflect.DeepEqual(pts[2], pointOf(last)) {
		t.Errorf("a point read back differs:\n%+v\n%+v", pts[2], pointOf(last))
	}
	if names, _ := h2.files(); len(names) != 3 {
		t.Errorf("%d files after a restart keeping 3", len(names))
	}
	if !h2.Saved(pts[0].ID) {
		t.Error("saved report not found by its id")
	}
	f, err := h2.open("../../etc/passwd")
	if err == nil {
		f.Close()
		t.Error("an id that is no time opened a file")
	}
}

// TestHistoryUnreadable: a broken file is skipped, the rest loads.
func TestHistoryUnreadable(t *testing.T) {
	dir := t.TempDir()
	h, _, _ := openHistory(dir, 10, quiet())
	h.add(smallReport(t0))
	h.add(smallReport(t0.Add(time.Minute)))
	os.WriteFile(filepath.Join(dir, historyName(t0.Add(30*time.Second))), []byte(`{"source": {"kind": "redis"`), 0o644)
	h2, latest, err := openHistory(dir, 10, quiet())
	if err != nil {
		t.Fatal(err)
	}
	if len(h2.Points()) != 2 || latest == nil || !latest.StartedAt.Equal(t0.Add(time.Minute)) {
		t.Errorf("points %d, latest %v", len(h2.Points()), latest)
	}
}

// TestServerRestartKeepsHistory: a server on a history directory shows
// the last run's audit until its first audit ends, and the trend goes on.
func TestServerRestartKeepsHistory(t *testing.T) {
	dir := t.TempDir()
	s1, _ := newTestServer(t, Config{Auditor: &fixedAuditor{reps: []*Report{smallReport(t0), smallReport(t0.Add(time.Minute))}}, HistoryDir: dir})
	s1.AuditNow(context.Background())
	s1.AuditNow(context.Background())

	s2, hs := newTestServer(t, Config{Auditor: &fixedAuditor{reps: []*Report{smallReport(t0.Add(2 * time.Minute))}}, HistoryDir: dir})
	_, body := get(t, hs, "/")
	if !strings.Contains(body, "Showing the last saved audit.") || !strings.Contains(body, `id="total-keys">130<`) {
		t.Errorf("after a restart:\n%s", body)
	}
	s2.AuditNow(context.Background())
	if n := len(s2.History().Points()); n != 3 {
		t.Errorf("%d points, want 3", n)
	}
	_, body = get(t, hs, "/history")
	if strings.Count(body, `href="/api/report.json?at=`) != 3 {
		t.Errorf("history page:\n%s", body)
	}
	code, js := get(t, hs, "/api/report.json?at=20260129T120000.000Z")
	if code != 200 || js != string(reportJSONBytes(t, smallReport(t0))) {
		t.Errorf("saved report: %d\n%s", code, js)
	}
}

// FuzzReadPoint holds readPoint, which skips the findings, to the point
// of the whole report.
func FuzzReadPoint(f *testing.F) {
	var buf bytes.Buffer
	writeReport(&buf, smallReport(t0))
	f.Add(buf.Bytes())
	f.Add([]byte(`{"source":{"kind":"redis"},"groups":[{"name":"a:{id}","kind":"template","domain":"a","keys":3}],"findings":[{"rule":"x"}]}`))
	f.Add([]byte(`{"Source":{"Kind":"rdb"},"GROUPS":[{"name":"x","kind":"prefix","keys":1,"bytes":2}],"summary":{"keys":1},"summary":{"bytes":9}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rep, err := readReport(bytes.NewReader(data))
		if err != nil {
			return
		}
		p, err := readPoint(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("readPoint fails where readReport reads: %v", err)
		}
		if want := pointOf(rep); !reflect.DeepEqual(p, want) {
			t.Fatalf("points differ:\n%+v\n%+v", p, want)
		}
	})
}

func TestHistoryName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"report-20260129T120000.000Z.json", true},
		{"report-20260129T120000.123Z.json", true},
		{"report-20260129T120000Z.json", false},
		{"report-20260129T120000.000Z.json.tmp", false},
		{".report-20260129T120000.000Z.json.123", false},
		{"report-20261329T120000.000Z.json", false},
	} {
		if _, ok := historyTime(tc.name); ok != tc.ok {
			t.Errorf("%s: %v", tc.name, ok)
		}
	}
}

// TestHistoryRegistryChanged: the history marks an audit made with a
// registry that declared otherwise than the one before, or the first made
// with one after audits without (its groups and findings may change by
// that alone), kept across a restart; it counts no key of an audit
// without a registry as unregistered; the history JSON names each
// audit's registry.
func TestHistoryRegistryChanged(t *testing.T) {
	dir := t.TempDir()
	withDigest := func(at time.Time, d string) *Report {
		r := smallReport(at)
		r.RegistryDigest = d
		return r
	}
	none := smallReport(t0.Add(-time.Minute)) // before keyguard.yaml was written
	none.NotChecked = report.NoRegistryChecks
	s1, _ := newTestServer(t, Config{Auditor: &fixedAuditor{reps: []*Report{none,
		withDigest(t0, "aaaaaaaaaaaaaaaa"), withDigest(t0.Add(time.Minute), "aaaaaaaaaaaaaaaa"),
		withDigest(t0.Add(2*time.Minute), "bbbbbbbbbbbbbbbb")}}, HistoryDir: dir})
	for range 4 {
		s1.AuditNow(context.Background())
	}
	s2, hs := newTestServer(t, Config{Auditor: &fixedAuditor{reps: []*Report{withDigest(t0.Add(3*time.Minute), "bbbbbbbbbbbbbbbb")}}, HistoryDir: dir})
	s2.AuditNow(context.Background())
	_, body := get(t, hs, "/history")
	if n := strings.Count(body, ">registry changed</span>"); n != 2 {
		t.Errorf("%d audits marked, want the first with a registry and the one whose registry changed:\n%s", n, body)
	}
	if n := strings.Count(body, `title="no registry: every key is of an inferred family">–</span>`); n != 1 {
		t.Errorf("%d audits without an unregistered count, want the one without a registry:\n%s", n, body)
	}
	// Its trend of unregistered keys leaves that audit out.
	_, home := get(t, hs, "/")
	if !strings.Contains(home, `aria-label="Keys" data-points="5"`) || !strings.Contains(home, `aria-label="Unregistered keys" data-points="4"`) {
		t.Errorf("trends: the unregistered keys of the audit without a registry drawn:\n%s", home)
	}
	// Every trend chart marks the two changes, at their audits' times:
	// five small charts (keys, memory, no TTL, unregistered, findings) and
	// memory by domain.
	for _, at := range []time.Time{t0, t0.Add(2 * time.Minute)} {
		mark := fmt.Sprintf("<title>registry changed at %s:", at.UTC().Format("2006-01-02 15:04"))
		if n := strings.Count(home, mark); n != 6 {
			t.Errorf("%d charts mark the registry change at %s, want 6:\n%s", n, at, home)
		}
	}
	_, js := get(t, hs, "/api/history.json")
	if strings.Count(js, `"registry_digest": "aaaaaaaaaaaaaaaa"`) != 2 || strings.Count(js, `"registry_digest": "bbbbbbbbbbbbbbbb"`) != 2 || strings.Count(js, `"no_registry": true`) != 1 {
		t.Errorf("history JSON:\n%s", js)
	}
}
