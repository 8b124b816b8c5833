package live

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/audit/inventory"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/audit/snapshot"
	"github.com/keyguard/keyguard/internal/plant"
	"github.com/keyguard/keyguard/internal/redistest"
	"github.com/keyguard/keyguard/registry"
)

// lfuConfig makes OBJECT FREQ count every access (factor 0), so that 100
// GETs make a hot key and a handful of writes do not.
var lfuConfig = []string{"maxmemory-policy allkeys-lfu", "lfu-log-factor 0"}

func standalone(s *redistest.Server) Target {
	opt, _ := redis.ParseURL(s.URL())
	return Target{Conn: connFrom(opt), Display: s.URL()}
}

func clusterTarget(c *redistest.Cluster) Target {
	opt, _ := redis.ParseURL("redis://" + c.Addrs[0])
	return Target{Conn: connFrom(opt), Cluster: true, Seeds: c.Addrs[1:], Display: c.URL()}
}

// dumpReport saves s's data set and audits its dump.rdb, every database,
// as keyguard rdb does: the report the live audit is held to.
func dumpReport(t *testing.T, s *redistest.Server, reg *registry.Registry, inv inventory.Options) *report.Report {
	t.Helper()
	if err := s.Client(t).Save(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	return rdbReport(t, filepath.Join(s.Dir, "dump.rdb"), reg, inv)
}

// rdbReport audits the RDB file path, every database.
func rdbReport(t *testing.T, path string, reg *registry.Registry, inv inventory.Options) *report.Report {
	t.Helper()
	ins, err := snapshot.Open([]string{path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer snapshot.Close(ins)
	res, err := snapshot.Run(context.Background(), reg, ins, snapshot.Options{DB: -1, Inventory: inv})
	if err != nil {
		t.Fatal(err)
	}
	return res.Report
}

// found returns the report's findings as "rule key" lines, sorted.
func found(rep *report.Report) []string {
	var out []string
	for _, f := range rep.Findings {
		out = append(out, f.Rule+" "+f.Key)
	}
	sort.Strings(out)
	return out
}

func expected(ps []plant.Anomaly) []string {
	var out []string
	for _, p := range ps {
		for _, r := range p.Rules {
			out = append(out, r+" "+p.Key)
		}
	}
	sort.Strings(out)
	return out
}

func TestPlantedAnomaliesAreFound(t *testing.T) {
	reg := testRegistry(t)
	tests := []struct {
		name   string
		target func(t *testing.T) (Target, redis.Cmdable)
	}{
		{"standalone", func(t *testing.T) (Target, redis.Cmdable) {
			s := redistest.Start(t, lfuConfig...)
			return standalone(s), s.Client(t)
		}},
		{"cluster", func(t *testing.T) (Target, redis.Cmdable) {
			c := redistest.StartCluster(t, 3, lfuConfig...)
			return clusterTarget(c), c.Client(t)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target, c := tt.target(t)
			clean := plant.Clean(t, c, 300)
			ps := plant.Anomalies(t, c, true)
			want := len(ps) + 10 + clean
			res, err := Run(context.Background(), reg, target, Options{Count: 50, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			rep := res.Report
			if !res.Complete || !rep.Complete {
				t.Fatalf("incomplete: %+v", res.Stopped)
			}
			if got, exp := found(rep), expected(ps); !slices.Equal(got, exp) {
				t.Errorf("findings:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(exp, "\n     "))
			}
			if rep.Summary.Keys != int64(want) || res.Probed != int64(want) || res.Scanned != int64(want) {
				t.Errorf("keys: report %d, probed %d, scanned %d; want %d each", rep.Summary.Keys, res.Probed, res.Scanned, want)
			}
			if rep.Source.Kind != map[bool]string{false: "redis", true: "cluster"}[target.Cluster] {
				t.Errorf("source %+v", rep.Source)
			}
			for _, n := range rep.Notes {
				if strings.Contains(n, "hot-key data unavailable") {
					t.Errorf("LFU server, yet: %s", n)
				}
			}
		})
	}
}

func TestCleanDatasetHasNoFindings(t *testing.T) {
	reg := testRegistry(t)
	s := redistest.Start(t)
	n := plant.Clean(t, s.Client(t), 500)
	res, err := Run(context.Background(), reg, standalone(s), Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep := res.Report
	if len(rep.Findings) != 0 || rep.Summary.Findings != 0 {
		t.Errorf("findings on a clean dataset: %s", strings.Join(found(rep), "; "))
	}
	if rep.Summary.Keys != int64(n) || !rep.Complete {
		t.Errorf("keys %d complete %v, want %d true", rep.Summary.Keys, rep.Complete, n)
	}
	// Not LFU: the report says why there is no hot-key data.
	if !hasNote(rep, "hot-key data unavailable") {
		t.Errorf("no note on hot-key data: %q", rep.Notes)
	}
	for _, g := range rep.Groups {
		if g.Kind != report.KindTemplate {
			t.Errorf("group %q of kind %s on a clean dataset", g.Name, g.Kind)
		}
	}
}

// Every key is counted once across the masters, and per template.
func TestClusterCountsEveryKeyOnce(t *testing.T) {
	reg := testRegistry(t)
	c := redistest.StartCluster(t, 3)
	cc := c.Client(t)
	n := plant.Clean(t, cc, 2000)
	ctx := context.Background()
	perNode := map[string]int64{}
	for i, s := range c.Nodes {
		k, err := s.Client(t).DBSize(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		if k == 0 {
			t.Fatalf("node %d holds no key: the test does not spread keys", i)
		}
		perNode[s.Addr] = k
	}
	res, err := Run(ctx, reg, clusterTarget(c), Options{Count: 100})
	if err != nil {
		t.Fatal(err)
	}
	rep := res.Report
	if rep.Summary.Keys != int64(n) || res.Scanned != int64(n) || rep.Source.Nodes != 3 {
		t.Fatalf("keys %d scanned %d nodes %d; want %d %d 3", rep.Summary.Keys, res.Scanned, rep.Source.Nodes, n, n)
	}
	checkTemplateGroups(t, rep, 2000/10)
}

// checkTemplateGroups checks a report of the Cluster dataset: perTemplate
// keys in every group (the one sequence counter alone in its own) and no
// finding.
func checkTemplateGroups(t *testing.T, rep *report.Report, perTemplate int64) {
	t.Helper()
	for _, g := range rep.Groups {
		want := perTemplate
		if g.Name == "seq:order:no" {
			want = 1
		}
		if g.Keys != want {
			t.Errorf("group %s: %d keys, want %d", g.Name, g.Keys, want)
		}
	}
	if len(rep.Findings) != 0 {
		t.Errorf("findings: %s", strings.Join(found(rep), "; "))
	}
}

func hasNote(rep *report.Report, s string) bool {
	for _, n := range rep.Notes {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// progressAt returns a Progress callback that closes the returned channel
// once at least n keys were scanned.
func progressAt(n int64) (func(Progress), <-chan struct{}) {
	ch := make(chan struct{})
	var once sync.Once
	return func(p Progress) {
		if p.Scanned >= n {
			once.Do(func() { close(ch) })
		}
	}, ch
}

// A master killed mid-audit: its NodeStop says how far it got, the other
// masters finish, and the report counts exactly what was walked.
func TestClusterNodeKilledMidAudit(t *testing.T) {
	reg := testRegistry(t)
	c := redistest.StartCluster(t, 3, "cluster-require-full-coverage no")
	ctx := context.Background()
	n := plant.Clean(t, c.Client(t), 1500)
	victim := c.Nodes[1]
	others := int64(0)
	for _, s := range c.Nodes {
		if s != victim {
			k, _ := s.Client(t).DBSize(ctx).Result()
			others += k
		}
	}
	progress, reached := progressAt(int64(n) / 4)
	type outcome struct {
		res *Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := Run(ctx, reg, clusterTarget(c), Options{Rate: 1500, RetryFor: time.Second, Progress: progress, ProgressEvery: 10 * time.Millisecond})
		done <- outcome{res, err}
	}()
	select {
	case <-reached:
	case o := <-done:
		t.Fatalf("the audit ended before the kill: %+v %v", o.res, o.err)
	}
	victim.Kill()
	o := <-done
	if o.err != nil {
		t.Fatal(o.err)
	}
	res := o.res
	if res.Complete || len(res.Stopped) != 1 {
		t.Fatalf("complete %v, stopped %+v; want the victim only", res.Complete, res.Stopped)
	}
	st := res.Stopped[0]
	if st.Node != victim.Addr || !strings.Contains(st.Reason, "node down") || !report.ValidSlotRanges(st.Slots) {
		t.Errorf("stop %+v; want node %s, a reason, the slots not counted", st, victim.Addr)
	}
	cov := res.Report.Coverage
	if len(cov.NotCovered) != 1 || cov.NotCovered[0].Slots != st.Slots || cov.Share >= 1 || cov.Cluster.Slots+len(report.ParseSlotRanges(st.Slots)) != report.ClusterSlots {
		t.Errorf("coverage %+v %+v; want the victim's slots %s not covered, every other slot counted", cov, cov.Cluster, st.Slots)
	}
	if res.Report.Complete || len(res.Report.Stopped) != 1 {
		t.Errorf("report complete %v stopped %+v", res.Report.Complete, res.Report.Stopped)
	}
	if got, want := res.Report.Summary.Keys, others+st.Keys; got != want {
		t.Errorf("report counts %d keys; want %d on the live masters + %d walked on the victim", got, others, st.Keys)
	}
}

// Ctrl-C writes a partial report with a cursor; resuming from it counts
// the rest, and the two runs count every key exactly once.
func TestInterruptAndResume(t *testing.T) {
	reg := testRegistry(t)
	s := redistest.Start(t)
	n := plant.Clean(t, s.Client(t), 1000)
	ctx, cancel := context.WithCancel(context.Background())
	progress, reached := progressAt(int64(n) / 3)
	go func() {
		<-reached
		cancel()
	}()
	first, err := Run(ctx, reg, standalone(s), Options{Count: 20, Rate: 3000, Progress: progress, ProgressEvery: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if first.Complete || len(first.Stopped) != 1 || first.Stopped[0].Reason != "interrupted" || first.Stopped[0].Cursor == "0" {
		t.Fatalf("first run: complete %v stopped %+v", first.Complete, first.Stopped)
	}
	// Through JSON, as --resume reads it.
	var buf bytes.Buffer
	if err := first.Report.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := report.ReadReport(&buf)
	if err != nil {
		t.Fatal(err)
	}
	second, err := Run(context.Background(), reg, standalone(s), Options{Resume: back})
	if err != nil {
		t.Fatal(err)
	}
	if !second.Complete {
		t.Fatalf("second run stopped: %+v", second.Stopped)
	}
	if got := second.Report.Summary.Keys; got != int64(n) {
		t.Errorf("the resumed report counts %d keys (the first run %d); want %d", got, first.Report.Summary.Keys, n)
	}
	if first.Stopped[0].Keys != first.Report.Summary.Keys {
		t.Errorf("stop says %d keys, report %d", first.Stopped[0].Keys, first.Report.Summary.Keys)
	}
}

func TestTimeoutStopsWithPartialReport(t *testing.T) {
	reg := testRegistry(t)
	s := redistest.Start(t)
	plant.Clean(t, s.Client(t), 500)
	// The deadline passes once the walk is under way (a second's work at
	// this rate), however long dialling and the checks before it took.
	ctx := newEventDeadline()
	res, err := Run(ctx, reg, standalone(s), Options{Count: 10, Rate: 500, ProgressEvery: 5 * time.Millisecond, Progress: func(p Progress) {
		if p.Scanned > 0 {
			ctx.expire()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Complete || len(res.Stopped) != 1 || res.Stopped[0].Reason != "timed out" {
		t.Fatalf("complete %v stopped %+v", res.Complete, res.Stopped)
	}
}

// Keys of any bytes: binary, CR/LF, invalid UTF-8, and a 1 MB name.
func TestKeysOfAnyBytes(t *testing.T) {
	reg := testRegistry(t)
	s := redistest.Start(t)
	c := s.Client(t)
	ctx := context.Background()
	huge := "order:huge:" + strings.Repeat("a", 1<<20)
	keys := []string{"bin:\x00\xff\xfe", "crlf:\r\n*3\r\n$3\r\nSET", "order:order:7\n:base", "\x80\x81", huge, "sp ace", ""}
	for _, k := range keys {
		if err := c.Set(ctx, k, "v", time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.HSet(ctx, "hash\x00key", "f\x00", "v").Err(); err != nil {
		t.Fatal(err)
	}
	res, err := Run(ctx, reg, standalone(s), Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep := res.Report
	if !rep.Complete || rep.Summary.Keys != int64(len(keys)+1) || rep.Summary.Unregistered != int64(len(keys)+1) {
		t.Fatalf("complete %v keys %d unregistered %d; want %d", rep.Complete, rep.Summary.Keys, rep.Summary.Unregistered, len(keys)+1)
	}
	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := report.ReadReport(&buf)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range back.Findings {
		seen[f.Key] = true
	}
	if !seen["bin:\x00\xff\xfe"] || !seen["\x80\x81"] {
		t.Errorf("binary keys did not survive the JSON report")
	}
	hugeSeen := false
	for _, tk := range back.TopKeys {
		if tk.KeyLen == len(huge) {
			hugeSeen = true
		}
	}
	if !hugeSeen {
		t.Errorf("the 1 MB key is not among the top keys with its length")
	}
}

func TestSampleExtrapolates(t *testing.T) {
	reg := testRegistry(t)
	s := redistest.Start(t)
	n := plant.Clean(t, s.Client(t), 2000)
	res, err := Run(context.Background(), reg, standalone(s), Options{Sample: 500, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	rep := res.Report
	if !rep.Estimate || rep.Sample == nil || res.Scanned != int64(n) {
		t.Fatalf("estimate %v sample %+v scanned %d", rep.Estimate, rep.Sample, res.Scanned)
	}
	// Binomial(2001, 0.25): the sample is 500 ± 20; 7 standard deviations.
	if res.Probed < 360 || res.Probed > 640 {
		t.Errorf("probed %d keys for --sample 500", res.Probed)
	}
	if rep.Summary.Keys < int64(n)*7/10 || rep.Summary.Keys > int64(n)*13/10 {
		t.Errorf("extrapolated %d keys, real %d", rep.Summary.Keys, n)
	}
	if !hasNote(rep, "sampled") {
		t.Errorf("no sampling note: %q", rep.Notes)
	}
}

func TestMatchAndDB(t *testing.T) {
	reg := testRegistry(t)
	s := redistest.Start(t)
	ctx := context.Background()
	opt, _ := redis.ParseURL(s.URL() + "/3")
	c3 := redis.NewClient(opt)
	defer c3.Close()
	n := plant.Clean(t, c3, 100)
	target := standalone(s)
	target.Conn.DB = 3
	res, err := Run(ctx, reg, target, Options{Match: "order:*"})
	if err != nil {
		t.Fatal(err)
	}
	if want := int64((n - 1) / 9); res.Report.Summary.Keys != want {
		t.Errorf("--match order:* counted %d keys, want %d", res.Report.Summary.Keys, want)
	}
	if !hasNote(res.Report, "matching") {
		t.Errorf("no --match note: %q", res.Report.Notes)
	}
}

func TestReplicaIsWalked(t *testing.T) {
	reg := testRegistry(t)
	m := redistest.Start(t, "repl-diskless-sync-delay 0")
	r := redistest.Start(t, "replicaof 127.0.0.1 "+strings.TrimPrefix(m.Addr, "127.0.0.1:"))
	ctx := context.Background()
	n := plant.Clean(t, m.Client(t), 200)
	r.WaitInfo(t, "keyspace", func(in string) bool { return strings.Contains(in, fmt.Sprintf("db0:keys=%d,", n)) })
	m.WaitInfo(t, "replication", func(in string) bool { return strings.Contains(in, "state=online") })
	res, err := Run(ctx, reg, standalone(m), Options{Replicas: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Report.Summary.Keys != int64(n) || !hasNote(res.Report, "walked replica "+r.Addr) {
		t.Errorf("keys %d notes %q", res.Report.Summary.Keys, res.Report.Notes)
	}
}

// A replica whose master is gone still answers reads with what it held:
// the audit of it says so, while the audit of a replica in sync says
// nothing of the kind.
func TestStaleReplicaNamed(t *testing.T) {
	reg := testRegistry(t)
	m := redistest.Start(t, "repl-diskless-sync-delay 0")
	r := redistest.Start(t, "replicaof 127.0.0.1 "+strings.TrimPrefix(m.Addr, "127.0.0.1:"))
	ctx := context.Background()
	n := plant.Clean(t, m.Client(t), 200)
	link := func(status string) {
		t.Helper()
		r.WaitInfo(t, "", func(in string) bool {
			return strings.Contains(in, "master_link_status:"+status) && strings.Contains(in, fmt.Sprintf("db0:keys=%d,", n))
		})
	}
	link("up")
	res, err := Run(ctx, reg, standalone(r), Options{})
	if err != nil || res.Report.Summary.Keys != int64(n) || hasNote(res.Report, "older than the master's") {
		t.Fatalf("a replica in sync: %v, keys %d, notes %q", err, res.Report.Summary.Keys, res.Report.Notes)
	}
	m.Stop()
	link("down")
	res, err = Run(ctx, reg, standalone(r), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Report.Summary.Keys != int64(n) || !hasNote(res.Report, r.Addr+" is a replica whose link to its master "+m.Addr+" was down") {
		t.Errorf("a replica of a master gone: keys %d, notes %q", res.Report.Summary.Keys, res.Report.Notes)
	}
}

// A Cluster master that hangs for less than the Cluster's node timeout
// (so that it is not yet marked failed) but longer than its replica's
// repl-timeout: the walk with --replicas reads that replica, and the
// report says its keys may be older than the master's.
func TestStaleClusterReplicaNamed(t *testing.T) {
	reg := testRegistry(t)
	c := redistest.StartClusterWithReplicas(t, 3, 1, "cluster-node-timeout 60000", "cluster-replica-no-failover yes")
	ctx := context.Background()
	n := plant.Clean(t, c.Client(t), 600)
	m, r := c.Nodes[0], c.Replicas[0]
	if err := r.Client(t).ConfigSet(ctx, "repl-timeout", "1").Err(); err != nil {
		t.Fatal(err)
	}
	m.Freeze(t)
	r.WaitInfo(t, "replication", func(in string) bool { return strings.Contains(in, "master_link_status:down") })
	tg := Target{Conn: Conn{Addr: c.Addrs[1]}, Cluster: true, Seeds: c.Addrs[2:], Display: "redis://" + c.Addrs[1]}
	res, err := Run(ctx, reg, tg, Options{Replicas: true, RetryFor: 2 * time.Second, IOTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	stale := r.Addr + " is a replica whose link to its master " + m.Addr + " was down"
	if res.Report.Summary.Keys != int64(n) || !hasNote(res.Report, stale) {
		t.Errorf("keys %d of %d, complete %v, notes %q", res.Report.Summary.Keys, n, res.Complete, res.Report.Notes)
	}
	// The walk of the other tools says it too.
	var listed atomic.Int64
	wr, err := Walk(ctx, tg, WalkOptions{Replicas: true, RetryFor: 2 * time.Second, IOTimeout: time.Second,
		Visit: func(_ context.Context, b *Batch) error { listed.Add(int64(len(b.Keys))); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if listed.Load() != int64(n) || !slices.ContainsFunc(wr.Notes, func(s string) bool { return strings.Contains(s, stale) }) {
		t.Errorf("walk: %d keys of %d, complete %v, coverage %+v, notes %q", listed.Load(), n, wr.Complete, wr.Coverage, wr.Notes)
	}
}

// A Cluster with a replica per master: --replicas walks the replicas
// (SCAN runs there and not on the masters), counts every key once, and
// finds what a masters-only audit finds.
func TestClusterReplicasAreWalked(t *testing.T) {
	reg := testRegistry(t)
	c := redistest.StartClusterWithReplicas(t, 3, 1)
	cc := c.Client(t)
	ctx := context.Background()
	n := plant.Clean(t, cc, 600)
	ps := plant.Anomalies(t, cc, false)
	want := int64(n + len(ps) + 10) // + the ten keys of the second writer's style
	masters := make([]*redis.Client, len(c.Nodes))
	replicas := make([]*redis.Client, len(c.Replicas))
	for i := range c.Nodes {
		masters[i], replicas[i] = c.Nodes[i].Client(t), c.Replicas[i].Client(t)
	}
	total := int64(0)
	for i := range masters {
		k := waitSameDBSize(t, masters[i], replicas[i])
		if k == 0 {
			t.Fatalf("master %s holds no key: the test does not spread keys", c.Addrs[i])
		}
		total += k
	}
	if total != want {
		t.Fatalf("the masters hold %d keys, planted %d", total, want)
	}
	for _, rdb := range append(append([]*redis.Client{}, masters...), replicas...) {
		if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
			t.Fatal(err)
		}
	}

	opts := Options{Count: 50, Seed: 1}
	ro := opts
	ro.Replicas = true
	res, err := Run(ctx, reg, clusterTarget(c), ro)
	if err != nil {
		t.Fatal(err)
	}
	rep := res.Report
	if !res.Complete || !rep.Complete {
		t.Fatalf("incomplete: %+v", res.Stopped)
	}
	if rep.Summary.Keys != want || res.Scanned != want || res.Probed != want || rep.Source.Nodes != 3 {
		t.Errorf("keys: report %d, scanned %d, probed %d, nodes %d; want %d each and 3 nodes", rep.Summary.Keys, res.Scanned, res.Probed, rep.Source.Nodes, want)
	}
	// What the report says about the nodes walked.
	if !hasNote(rep, "replicas were walked instead of masters") || hasNote(rep, "has no healthy replica") {
		t.Errorf("notes %q; want the replicas note and no master walked in a replica's stead", rep.Notes)
	}
	isReplica := map[string]bool{}
	for _, r := range c.Replicas {
		isReplica[r.Addr] = true
	}
	if len(rep.TopKeys) == 0 {
		t.Errorf("no top keys")
	}
	for _, tk := range rep.TopKeys {
		if !isReplica[tk.Node] {
			t.Errorf("top key %q read on %s, not on a replica", tk.Key, tk.Node)
			break
		}
	}
	// And what the servers say: SCAN ran on every replica, on no master.
	for i := range masters {
		if got := scanCalls(t, masters[i]); got != 0 {
			t.Errorf("master %s ran SCAN %d times", c.Addrs[i], got)
		}
		if got := scanCalls(t, replicas[i]); got == 0 {
			t.Errorf("replica %s ran no SCAN", c.Replicas[i].Addr)
		}
	}

	base, err := Run(ctx, reg, clusterTarget(c), opts)
	if err != nil {
		t.Fatal(err)
	}
	if base.Report.Summary.Keys != want || !base.Complete {
		t.Errorf("masters-only: keys %d complete %v; want %d true", base.Report.Summary.Keys, base.Complete, want)
	}
	got, exp := found(rep), found(base.Report)
	if !slices.Equal(got, exp) {
		t.Errorf("findings:\n replicas %s\n masters  %s", strings.Join(got, "\n          "), strings.Join(exp, "\n          "))
	}
	if planted := expected(ps); !slices.Equal(exp, planted) {
		t.Errorf("masters-only findings:\n got %s\nwant %s", strings.Join(exp, "\n     "), strings.Join(planted, "\n     "))
	}
}

// waitSameDBSize waits until the replica holds as many keys as its master
// and returns the count. Replication is asynchronous; the test's own
// deadline bounds the wait.
func waitSameDBSize(t *testing.T, master, replica *redis.Client) int64 {
	t.Helper()
	ctx := context.Background()
	for {
		m, err := master.DBSize(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		r, err := replica.DBSize(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		if m == r {
			return m
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// scanCalls is how often the server ran SCAN since CONFIG RESETSTAT, from
// INFO commandstats ("cmdstat_scan:calls=3,usec=…").
func scanCalls(t *testing.T, rdb *redis.Client) int64 {
	t.Helper()
	text, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	v, ok := parseInfo(text)["cmdstat_scan"]
	if !ok {
		return 0
	}
	for _, kv := range strings.Split(v, ",") {
		if k, x, _ := strings.Cut(kv, "="); k == "calls" {
			n, err := strconv.ParseInt(x, 10, 64)
			if err != nil {
				t.Fatalf("cmdstat_scan %q", v)
			}
			return n
		}
	}
	t.Fatalf("cmdstat_scan %q has no calls", v)
	return 0
}

func TestConnectFailures(t *testing.T) {
	reg := testRegistry(t)
	s := redistest.Start(t)
	ctx := context.Background()
	if err := s.Client(t).ConfigSet(ctx, "requirepass", "secret").Err(); err != nil {
		t.Fatal(err)
	}
	defer func() { // let the cleanup's client in again
		opt, _ := redis.ParseURL("redis://:secret@" + s.Addr)
		c := redis.NewClient(opt)
		c.ConfigSet(ctx, "requirepass", "")
		c.Close()
	}()
	tests := []struct {
		name string
		url  string
		auth bool
	}{
		{"wrong password", "redis://:nope@" + s.Addr, true},
		{"no password", "redis://" + s.Addr, true},
		{"refused", "redis://127.0.0.1:1", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opt, _ := redis.ParseURL(tt.url)
			_, err := Run(ctx, reg, Target{Conn: connFrom(opt)}, Options{})
			var ce *ConnectError
			if !errors.As(err, &ce) || ce.Auth != tt.auth {
				t.Fatalf("err %v (%T); want a ConnectError with Auth %v", err, err, tt.auth)
			}
		})
	}
	opt, _ := redis.ParseURL("redis://:secret@" + s.Addr)
	if _, err := Run(ctx, reg, Target{Conn: connFrom(opt), Cluster: true}, Options{}); err == nil || !strings.Contains(err.Error(), "not a Redis Cluster") {
		t.Errorf("--cluster on a standalone server: %v", err)
	}
}

// eventDeadline is a context whose deadline passes when the test says so
// (expire), not after a time a loaded machine may overrun.
type eventDeadline struct {
	context.Context
	done chan struct{}
	once sync.Once
}

func newEventDeadline() *eventDeadline {
	return &eventDeadline{Context: context.Background(), done: make(chan struct{})}
}

func (c *eventDeadline) expire() { c.once.Do(func() { close(c.done) }) }

func (c *eventDeadline) Done() <-chan struct{} { return c.done }

func (c *eventDeadline) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}
