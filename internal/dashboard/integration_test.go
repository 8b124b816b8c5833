package dashboard

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/hotkey"
	"github.com/keyguard/keyguard/internal/audit/live"
	"github.com/keyguard/keyguard/internal/audit/replsync"
	"github.com/keyguard/keyguard/internal/audit/snapshot"
	"github.com/keyguard/keyguard/internal/redistest"
)

func liveTarget(t testing.TB, url string) live.Target {
	t.Helper()
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	return live.Target{Conn: live.Conn{Addr: opt.Addr, Username: opt.Username, Password: opt.Password, DB: opt.DB}, Display: url}
}

// TestLiveAudit: against a real server, the dashboard counts the keys the
// dataset wrote, per template, and no page, API answer or metric shows a
// value.
func TestLiveAudit(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	reg := testRegistry(t)
	ds := writeDataset(t, rdb, 2)
	pr := prometheus.NewPedanticRegistry()
	s, hs := newTestServer(t, Config{Registry: reg, Auditor: NewAuditor(reg, liveTarget(t, srv.URL()), live.Options{}),
		Writers: NewWriterSource(rdb, reg, 24*time.Hour), HotKeys: NewHotKeySource(rdb, reg, 10*time.Minute, 50), Registerer: pr, Gatherer: pr})
	if err := s.AuditNow(context.Background()); err != nil {
		t.Fatal(err)
	}
	snap, st := s.Latest()
	if st.LastResult != resultComplete || !snap.Complete {
		t.Fatalf("status %+v", st)
	}
	if snap.Totals.Keys != int64(ds.total) || snap.Unregistered != int64(ds.unregistered) {
		t.Errorf("keys %d unregistered %d, want %d and %d", snap.Totals.Keys, snap.Unregistered, ds.total, ds.unregistered)
	}
	for tpl, n := range ds.keys {
		row, ok := snap.Template(tpl)
		if !ok || row.Keys != int64(n) || row.NoTTL != int64(ds.noTTL[tpl]) || row.Bytes <= 0 {
			t.Errorf("%s: %+v, want %d keys, %d without TTL", tpl, row, n, ds.noTTL[tpl])
		}
	}
	if row, _ := snap.Template("cache:unused:{id:int}"); row.Keys != 0 || !row.Declared {
		t.Errorf("unused template: %+v", row)
	}
	if len(snap.Families) != 2 {
		t.Errorf("families: %+v", snap.Families)
	}
	for _, p := range []string{"/", "/templates", "/unregistered", "/findings", "/hot-keys", "/writers", "/history", "/api/report.json",
		"/api/history.json", "/metrics", "/template?name=order%3Aorder%3A%7BorderId%3Aint%7D%3Abase"} {
		code, body := get(t, hs, p)
		if code != 200 {
			t.Errorf("%s: %d", p, code)
		}
		if strings.Contains(body, secretValue) {
			t.Errorf("%s shows a value", p)
		}
	}
}

// TestSnapshotAudit: serve --snapshot's audits read the server's
// snapshot; the dashboard counts the same keys as the walk's, and a
// server that refuses SYNC leaves no report but an error that says so.
func TestSnapshotAudit(t *testing.T) {
	srv := redistest.Start(t, "repl-diskless-sync-delay 0")
	rdb := srv.Client(t)
	reg := testRegistry(t)
	ds := writeDataset(t, rdb, 2)
	walk := NewAuditor(reg, liveTarget(t, srv.URL()), live.Options{})
	snapper := NewSnapshotAuditor(reg, SnapshotOptions{Nodes: replsync.Options{Target: liveTarget(t, srv.URL())}, Read: snapshot.Options{DB: -1}})
	for name, a := range map[string]Auditor{"walk": walk, "snapshot": snapper} {
		s, _ := newTestServer(t, Config{Registry: reg, Auditor: a})
		if err := s.AuditNow(context.Background()); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		snap, st := s.Latest()
		if st.LastResult != resultComplete || !snap.Complete || snap.Totals.Keys != int64(ds.total) || snap.Unregistered != int64(ds.unregistered) {
			t.Fatalf("%s: status %+v, keys %d unregistered %d; want %d and %d", name, st, snap.Totals.Keys, snap.Unregistered, ds.total, ds.unregistered)
		}
		for tpl, n := range ds.keys {
			if row, ok := snap.Template(tpl); !ok || row.Keys != int64(n) || row.NoTTL != int64(ds.noTTL[tpl]) {
				t.Errorf("%s: %s: %+v, want %d keys, %d without TTL", name, tpl, row, n, ds.noTTL[tpl])
			}
		}
	}
	if err := rdb.Do(context.Background(), "ACL", "SETUSER", "reader", "on", ">pw", "~*", "+@read", "+info", "+client").Err(); err != nil {
		t.Fatal(err)
	}
	tg := liveTarget(t, srv.URL())
	tg.Conn.Username, tg.Conn.Password = "reader", "pw"
	_, err := NewSnapshotAuditor(reg, SnapshotOptions{Nodes: replsync.Options{Target: tg}, Read: snapshot.Options{DB: -1}}).Audit(context.Background())
	if err == nil || !strings.Contains(err.Error(), "+replconf +sync") {
		t.Errorf("a user without SYNC: %v", err)
	}
}

// TestRedisGoesAway: the server keeps serving the last good audit while
// Redis is down, says so, and recovers when Redis is back.
func TestRedisGoesAway(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	reg := testRegistry(t)
	ds := writeDataset(t, rdb, 1)
	if err := rdb.Save(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	pr := prometheus.NewPedanticRegistry()
	s, hs := newTestServer(t, Config{Registry: reg, Auditor: NewAuditor(reg, liveTarget(t, srv.URL()), live.Options{RetryFor: time.Second}),
		Writers: NewWriterSource(rdb, reg, time.Hour), Registerer: pr, Gatherer: pr})
	ctx := context.Background()
	if err := s.AuditNow(ctx); err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	err := s.AuditNow(ctx)
	if err == nil {
		t.Fatal("an audit of a dead server succeeded")
	}
	code, body := get(t, hs, "/")
	if code != 200 || !strings.Contains(body, "The last audit failed.") || !strings.Contains(body, srv.Addr) ||
		!strings.Contains(body, "the last complete audit ended at") || !strings.Contains(body, `id="total-keys">`+fmtCount(int64(ds.total))+`<`) {
		t.Errorf("while Redis is down (%v):\n%s", err, body)
	}
	_, metrics := get(t, hs, "/metrics")
	if !strings.Contains(metrics, "keyguard_audit_success 0") || !strings.Contains(metrics, "keyguard_keyspace_keys "+strconv.Itoa(ds.total)) {
		t.Errorf("metrics while Redis is down:\n%s", metrics)
	}

	srv.Restart(t)
	if err := s.AuditNow(ctx); err != nil {
		t.Fatal(err)
	}
	_, body = get(t, hs, "/")
	if strings.Contains(body, "The last audit failed.") || !strings.Contains(body, `id="total-keys">`+fmtCount(int64(ds.total))+`<`) {
		t.Errorf("after Redis is back:\n%s", body)
	}
	if _, st := s.Latest(); st.Results[resultFailed] != 1 || st.Results[resultComplete] != 2 || st.Failures != 0 {
		t.Errorf("status: %+v", st)
	}
}

// TestClusterAudit: every master of a 3-master Cluster is audited.
func TestClusterAudit(t *testing.T) {
	c := redistest.StartCluster(t, 3)
	cc := c.Client(t)
	reg := testRegistry(t)
	ds := writeDataset(t, cc, 1)
	tgt := liveTarget(t, "redis://"+c.Addrs[0])
	tgt.Cluster, tgt.Seeds, tgt.Display = true, c.Addrs[1:], c.URL()
	s, hs := newTestServer(t, Config{Registry: reg, Auditor: NewAuditor(reg, tgt, live.Options{})})
	if err := s.AuditNow(context.Background()); err != nil {
		t.Fatal(err)
	}
	snap, _ := s.Latest()
	if snap.Totals.Keys != int64(ds.total) || snap.Nodes != 3 || snap.Kind != "cluster" {
		t.Errorf("cluster audit: %d keys on %d nodes (%s), want %d", snap.Totals.Keys, snap.Nodes, snap.Kind, ds.total)
	}
	if _, body := get(t, hs, "/"); !strings.Contains(body, "3 nodes") {
		t.Error("the header does not say 3 nodes")
	}
}

// TestSDKRecords: writer records and hot-key reports written by the SDK
// show on the pages and in the metrics.
func TestSDKRecords(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	reg := testRegistry(t)
	writeDataset(t, rdb, 1)
	writeAsServices(t, srv, reg)
	ctx := context.Background()
	det, err := hotkey.NewDetector(reg, hotkey.DetectorOptions{Service: "catalog-team"})
	if err != nil {
		t.Fatal(err)
	}
	defer det.Close()
	for range 5000 {
		det.Observe("cache:product:detail:p-3")
	}
	det.Observe("cache:product:detail:p-4")
	if err := det.Flush(ctx, rdb); err != nil {
		t.Fatal(err)
	}
	pr := prometheus.NewPedanticRegistry()
	s, hs := newTestServer(t, Config{Registry: reg, Auditor: NewAuditor(reg, liveTarget(t, srv.URL()), live.Options{}),
		Writers: NewWriterSource(rdb, reg, time.Hour), HotKeys: NewHotKeySource(rdb, reg, 10*time.Minute, 50), Registerer: pr, Gatherer: pr})
	if err := s.AuditNow(ctx); err != nil {
		t.Fatal(err)
	}
	snap, _ := s.Latest()
	row, _ := snap.Template("promo:sku:{skuId:int}")
	if len(row.Writers) != 2 || row.Disallowed() != 1 {
		t.Errorf("promo:sku writers: %+v", row.Writers)
	}
	if len(snap.HotKeys) == 0 || snap.HotKeys[0].Key != "cache:product:detail:p-3" || snap.HotKeys[0].Template != "cache:product:detail:{productNo}" ||
		snap.HotKeys[0].Owner != "catalog-team" || snap.HotKeys[0].Source != "SDK" {
		t.Errorf("hot keys: %+v", snap.HotKeys)
	}
	_, body := get(t, hs, "/writers")
	if !strings.Contains(body, "violation") || !strings.Contains(body, "order-team") {
		t.Errorf("writers page:\n%s", body)
	}
	_, body = get(t, hs, "/hot-keys")
	if !strings.Contains(body, "cache:product:detail:p-3") || !strings.Contains(body, "reported by catalog-team") {
		t.Errorf("hot keys page:\n%s", body)
	}
	text := gatherText(t, pr)
	for _, line := range []string{
		`keyguard_template_writers{allowed="false",owner="promo-team",template="promo:sku:{skuId:int}"} 1`,
		`keyguard_hot_keys{owner="catalog-team",source="sdk",template="cache:product:detail:{productNo}"} 2`,
	} {
		if !strings.Contains(text, line+"\n") {
			t.Errorf("no %s in\n%s", line, text)
		}
	}
}

// countingAuditor counts the audits of the auditor it wraps.
type countingAuditor struct {
	Auditor
	n atomic.Int64
}

func (c *countingAuditor) Audit(ctx context.Context) (*Report, error) {
	c.n.Add(1)
	return c.Auditor.Audit(ctx)
}

// TestRun: Run audits on its schedule while it serves; scrapes run no
// audit; cancelling the context stops it.
func TestRun(t *testing.T) {
	srv := redistest.Start(t)
	reg := testRegistry(t)
	writeDataset(t, srv.Client(t), 1)
	aud := &countingAuditor{Auditor: NewAuditor(reg, liveTarget(t, srv.URL()), live.Options{})}
	pr := prometheus.NewPedanticRegistry()
	s, err := New(Config{Registry: reg, Auditor: aud, Interval: 200 * time.Millisecond, Registerer: pr, Gatherer: pr})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, ln) }()
	url := "http://" + ln.Addr().String()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, st := s.Latest(); st.Results[resultComplete] >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no three audits in 30 s")
		}
		resp, err := http.Get(url + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not stop")
	}
	_, st := s.Latest()
	if got := st.Results[resultComplete] + st.Results[resultPartial] + st.Results[resultFailed]; aud.n.Load() < got || aud.n.Load() > got+1 {
		t.Errorf("%d audits ran, %d recorded: scrapes ran audits", aud.n.Load(), got)
	}
	if _, err := http.Get(url + "/healthz"); err == nil || errors.Is(err, context.Canceled) {
		t.Error("the server still answers after Run returned")
	}
}

// documentedACL returns the rules of the ACL SETUSER line in
// docs/serve.md, the password placeholder replaced.
func documentedACL(t *testing.T, password string) []string {
	t.Helper()
	b, err := os.ReadFile("../../docs/serve.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "ACL SETUSER keyguard-serve "); ok {
			if !strings.Contains(rest, ">CHANGE-ME") {
				t.Fatalf("docs/serve.md: the ACL line has no >CHANGE-ME password: %s", rest)
			}
			return strings.Fields(strings.ReplaceAll(rest, ">CHANGE-ME", ">"+password))
		}
	}
	t.Fatal("docs/serve.md has no ACL SETUSER keyguard-serve line")
	return nil
}

// TestDocumentedACL: the server audits and reads the SDK's records with
// exactly the user docs/serve.md documents, and that user cannot write.
func TestDocumentedACL(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	reg := testRegistry(t)
	ctx := context.Background()
	ds := writeDataset(t, admin, 1)
	writeAsServices(t, srv, reg)
	det, err := hotkey.NewDetector(reg, hotkey.DetectorOptions{Service: "catalog-team"})
	if err != nil {
		t.Fatal(err)
	}
	defer det.Close()
	det.Observe("cache:product:detail:p-1")
	if err := det.Flush(ctx, admin); err != nil {
		t.Fatal(err)
	}
	args := []any{"ACL", "SETUSER", "keyguard-serve", "reset"}
	for _, r := range documentedACL(t, "pw-1") {
		args = append(args, r)
	}
	if err := admin.Do(ctx, args...).Err(); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	url := "redis://keyguard-serve:pw-1@" + srv.Addr
	user := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "keyguard-serve", Password: "pw-1"})
	defer user.Close()
	s, _ := newTestServer(t, Config{Registry: reg, Auditor: NewAuditor(reg, liveTarget(t, url), live.Options{}),
		Writers: NewWriterSource(user, reg, time.Hour), HotKeys: NewHotKeySource(user, reg, 10*time.Minute, 10)})
	if err := s.AuditNow(ctx); err != nil {
		t.Fatal(err)
	}
	snap, _ := s.Latest()
	if !snap.Complete || snap.WritersErr != "" || snap.HotKeysErr != "" {
		t.Errorf("complete %v, writers %q, hot keys %q", snap.Complete, snap.WritersErr, snap.HotKeysErr)
	}
	if row, _ := snap.Template("promo:sku:{skuId:int}"); len(row.Writers) != 2 {
		t.Errorf("writers with the documented user: %+v", row.Writers)
	}
	if snap.Totals.Keys < int64(ds.total) || len(snap.HotKeys) == 0 {
		t.Errorf("%d keys, %d hot keys", snap.Totals.Keys, len(snap.HotKeys))
	}
	if err := user.Set(ctx, "x", "y", 0).Err(); err == nil || !strings.Contains(err.Error(), "NOPERM") {
		t.Errorf("the documented user can write: %v", err)
	}
}

// TestProgress: while an audit runs, the pages say how far it is. The
// audit is held at its first progress report with keys scanned (live.Run
// waits for its progress callback) until the page has been read.
func TestProgress(t *testing.T) {
	srv := redistest.Start(t)
	reg := testRegistry(t)
	ds := writeDataset(t, srv.Client(t), 4)
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	hold := func(p live.Progress) {
		if p.Scanned > 0 {
			once.Do(func() {
				close(held)
				<-release
			})
		}
	}
	aud := NewAuditor(reg, liveTarget(t, srv.URL()), live.Options{Rate: 1000, Count: 50, ProgressEvery: 20 * time.Millisecond, Progress: hold})
	s, hs := newTestServer(t, Config{Registry: reg, Auditor: aud})
	done := make(chan error, 1)
	go func() { done <- s.AuditNow(context.Background()) }()
	select {
	case <-held:
	case err := <-done:
		close(release)
		t.Fatalf("the audit ended (%v) without reporting progress", err)
	}
	_, body := get(t, hs, "/")
	close(release)
	want := " of " + fmtCount(int64(ds.total)) + " keys, "
	if !strings.Contains(body, want) || !strings.Contains(body, "An audit is running") {
		t.Errorf("the page during the audit says neither %q nor that an audit is running:\n%s", want, body)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, ok := aud.(progresser).Progress(); ok {
		t.Error("progress left over after the audit")
	}
	if _, body := get(t, hs, "/"); strings.Contains(body, "An audit is running") {
		t.Error("still running after the audit")
	}
}

// TestClusterAuditPartial: a master and its replica lost during an audit
// of a Cluster: serve shows the audit as partial, names the slots not
// covered, and its metrics say so.
func TestClusterAuditPartial(t *testing.T) {
	c := redistest.StartClusterWithReplicas(t, 3, 1, "cluster-require-full-coverage no")
	reg := testRegistry(t)
	ds := writeDataset(t, c.Client(t), 40) // about 6,000 keys: a walk of a few seconds at --rate 4000
	tgt := liveTarget(t, "redis://"+c.Addrs[0])
	tgt.Cluster, tgt.Seeds, tgt.Display = true, c.Addrs[1:], c.URL()
	var once sync.Once
	killed := make(chan struct{})
	progress := func(p live.Progress) {
		if p.Scanned >= int64(ds.total)/4 {
			once.Do(func() {
				c.Replicas[1].Kill()
				c.Nodes[1].Kill()
				close(killed)
			})
		}
	}
	pr := prometheus.NewPedanticRegistry()
	s, hs := newTestServer(t, Config{Registry: reg, Registerer: pr, Gatherer: pr,
		Auditor: NewAuditor(reg, tgt, live.Options{Rate: 4000, RetryFor: time.Second, Progress: progress, ProgressEvery: 10 * time.Millisecond})})
	if err := s.AuditNow(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-killed:
	default:
		t.Fatal("the audit ended before the master was lost")
	}
	snap, st := s.Latest()
	if snap.Complete || st.LastResult != resultPartial || len(snap.Uncovered) == 0 || snap.Covered >= 1 || snap.Covered <= 0 {
		t.Fatalf("complete %v result %s uncovered %q covered %v", snap.Complete, st.LastResult, snap.Uncovered, snap.Covered)
	}
	_, body := get(t, hs, "/")
	for _, want := range []string{"Incomplete audit.", "Not covered: " + c.Nodes[1].Addr + " slots ", `id="coverage"`, "partial", "3 masters, slots "} {
		if !strings.Contains(body, want) {
			t.Errorf("the overview lacks %q", want)
		}
	}
	_, metrics := get(t, hs, "/metrics")
	labels := `{kind="cluster",target="` + c.URL() + `"}`
	for _, want := range []string{"keyguard_audit_success 0", `keyguard_audits_total{result="partial"} 1`, "keyguard_audit_complete" + labels + " 0",
		"keyguard_audit_covered_ratio" + labels + " 0."} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}
