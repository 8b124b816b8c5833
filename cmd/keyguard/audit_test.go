package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/redistest"
	"github.com/redis/go-redis/v9"
)

const auditRegistry = "../../internal/audit/live/testdata/keyguard.yaml"

func loadAuditReport(t *testing.T, path string) *report.Report {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rep, err := report.ReadReport(f)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestAuditExitCodes(t *testing.T) {
	s := redistest.Start(t)
	c := s.Client(t)
	ctx := context.Background()
	c.Set(ctx, "order:misc:1", "x", time.Hour) // unregistered: an error finding
	c.HSet(ctx, "order:order:1:base", "orderId", "1")
	c.Expire(ctx, "order:order:1:base", time.Hour)
	dir := t.TempDir()
	out := filepath.Join(dir, "a.json")

	code, stdout, stderr := runCLI(t, "", "audit", "--registry", auditRegistry, "--redis", s.URL(), "--format", "json", "--out", out)
	if code != exitFindings || stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 1 and the report in %s", code, stdout, stderr, out)
	}
	rep := loadAuditReport(t, out)
	if rep.Summary.Keys != 2 || !rep.Complete || rep.Source.Target != s.URL() {
		t.Errorf("report: keys %d complete %v source %+v", rep.Summary.Keys, rep.Complete, rep.Source)
	}
	if code, _, stderr := runCLI(t, "", "audit", "--registry", auditRegistry, "--redis", s.URL(), "--fail-on", "never"); code != exitClean {
		t.Errorf("--fail-on never: exit %d %s", code, stderr)
	}
	for _, format := range []string{"text", "csv", "html"} {
		if code, stdout, stderr := runCLI(t, "", "audit", "--registry", auditRegistry, "--redis", s.URL(), "--format", format); code != exitFindings || stdout == "" {
			t.Errorf("--format %s: exit %d, %d bytes, %s", format, code, len(stdout), stderr)
		}
	}
}

func TestAuditConnectionErrorsAreOneLine(t *testing.T) {
	s := redistest.Start(t)
	ctx := context.Background()
	s.Client(t).Do(ctx, "ACL", "SETUSER", "auditor", "on", ">right", "~*", "+@all")
	tests := []struct {
		name, url, want string
		snapshot        bool
	}{
		{"refused", "redis://127.0.0.1:1", "connection refused", false},
		{"wrong password", "redis://auditor:wrong@" + s.Addr, "refused the credentials", false},
		{"bad scheme", "http://" + s.Addr, "the scheme must be redis://", false},
		{"a password nobody asks for", "redis://:wrong@" + s.Addr, "asks no password of its default user, yet --redis gives one", false},
		{"no such database", "redis://" + s.Addr + "/20", "has no such database (SELECT 20: ERR DB index is out of range)", false},
		// The snapshot holds every database: the one asked for is still
		// one the server has, or the report would say "complete, 0 keys".
		{"no such database in the snapshot", "redis://" + s.Addr + "/20", "has no such database (SELECT 20: ERR DB index is out of range)", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "a.json")
			args := []string{"audit", "--registry", auditRegistry, "--redis", tt.url, "--out", out}
			if tt.snapshot {
				args = append(args, "--snapshot")
			}
			code, stdout, stderr := runCLI(t, "", args...)
			if code != exitError || stdout != "" || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, tt.want)
			}
			if first, _, _ := strings.Cut(stderr, "\n"); !strings.Contains(first, tt.want) {
				t.Errorf("the reason is not on the first line: %q", stderr)
			}
			if strings.Contains(stderr, ":wrong") {
				t.Errorf("stderr shows the password: %q", stderr)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("--out written on a connection error")
			}
		})
	}
	// hotkeys, whose walk dials on its own, says the same.
	if code, _, stderr := runCLI(t, "", "hotkeys", "--redis", "redis://:wrong@"+s.Addr); code != exitError || !strings.Contains(stderr, "asks no password of its default user") {
		t.Errorf("hotkeys with a password nobody asks for: exit %d %q", code, stderr)
	}
	if code, _, stderr := runCLI(t, "", "audit", "--registry", auditRegistry); code != exitError || !strings.Contains(stderr, "--redis URL is required") {
		t.Errorf("no --redis: exit %d %q", code, stderr)
	}
}

// A timeout writes the partial report and exits 2; --resume finishes it.
func TestAuditTimeoutThenResume(t *testing.T) {
	s := redistest.Start(t)
	c := s.Client(t)
	ctx := context.Background()
	const n = 600
	for i := range n {
		c.Set(ctx, "cache:product:detail:p"+strconv.Itoa(i), "{}", time.Hour)
	}
	keys, _ := c.DBSize(ctx).Result()
	dir := t.TempDir()
	part := filepath.Join(dir, "part.json")
	code, _, stderr := runCLI(t, "", "audit", "--registry", auditRegistry, "--redis", s.URL(), "--count", "5", "--rate", "400", "--timeout", "300ms", "--format", "json", "--out", part)
	if code != exitError || !strings.Contains(stderr, "audit incomplete") || !strings.Contains(stderr, "--resume "+part) {
		t.Fatalf("exit %d stderr %q", code, stderr)
	}
	first := loadAuditReport(t, part)
	if first.Complete || len(first.Stopped) != 1 || first.Stopped[0].Reason != "timed out" {
		t.Fatalf("partial report: complete %v stopped %+v", first.Complete, first.Stopped)
	}
	rest := filepath.Join(dir, "rest.json")
	// Its groups are the registry's templates: a run without it is refused.
	if code, _, stderr := runCLI(t, "", "audit", "--redis", s.URL(), "--resume", part); code != exitError || !strings.Contains(stderr, "that audit ran with a registry ("+auditRegistry+")") {
		t.Errorf("resumed without its registry: exit %d %q", code, stderr)
	}
	code, _, stderr = runCLI(t, "", "audit", "--registry", auditRegistry, "--redis", s.URL(), "--resume", part, "--format", "json", "--out", rest, "--fail-on", "never")
	if code != exitClean {
		t.Fatalf("resume: exit %d %s", code, stderr)
	}
	second := loadAuditReport(t, rest)
	if !second.Complete || second.Summary.Keys != keys || second.ResumedFrom != part {
		t.Errorf("resumed: complete %v, %d keys (first run %d), want %d; resumed_from %q", second.Complete, second.Summary.Keys, first.Summary.Keys, keys, second.ResumedFrom)
	}
	// A partial run never replaces a complete report at --out unannounced.
	code, _, stderr = runCLI(t, "", "audit", "--registry", auditRegistry, "--redis", s.URL(), "--count", "5", "--rate", "400", "--timeout", "200ms", "--format", "json", "--out", rest)
	if kept := loadAuditReport(t, rest); code != exitError || !kept.Complete || !strings.Contains(stderr, "existing report at --out was kept") {
		t.Errorf("partial over a complete report: exit %d, complete report kept %v, stderr %q", code, kept.Complete, stderr)
	}
	if p := loadAuditReport(t, filepath.Join(dir, "rest.partial.json")); p.Complete {
		t.Error("the partial report beside it says complete")
	}
	if code, _, stderr := runCLI(t, "", "audit", "--registry", auditRegistry, "--redis", s.URL(), "--resume", rest); code != exitError || !strings.Contains(stderr, "nothing to resume") {
		t.Errorf("resume of a complete report: exit %d %q", code, stderr)
	}
}

// Say what was asked: one node of a Cluster audited alone says it is one
// master of three on stderr and in the header; --replicas without a
// replica is an error unless --replicas=prefer.
func TestAuditSaysWhatWasAsked(t *testing.T) {
	c := redistest.StartCluster(t, 3)
	ctx := context.Background()
	cc := c.Client(t)
	for i := range 300 {
		cc.Set(ctx, "order:misc:"+strconv.Itoa(i), "x", time.Hour)
	}
	code, stdout, stderr := runCLI(t, "", "audit", "--registry", auditRegistry, "--redis", "redis://"+c.Addrs[0], "--fail-on", "never")
	if code != exitClean || !strings.Contains(stderr, "1 of 3 masters, slots 0-5460") || !strings.Contains(stderr, "add --cluster for all") {
		t.Errorf("one node alone: exit %d, stderr %q", code, stderr)
	}
	if !strings.Contains(stdout, "coverage: 1 of 3 masters, slots 0-5460") {
		t.Errorf("the header does not say what the report covers:\n%s", stdout)
	}
	code, _, stderr = runCLI(t, "", "audit", "--registry", auditRegistry, "--redis", c.URL(), "--cluster", "--fail-on", "never")
	if code != exitClean || strings.Contains(stderr, "add --cluster") {
		t.Errorf("--cluster: exit %d, stderr %q", code, stderr)
	}

	s := redistest.Start(t)
	s.Client(t).Set(ctx, "order:misc:1", "x", time.Hour)
	code, _, stderr = runCLI(t, "", "audit", "--registry", auditRegistry, "--redis", s.URL(), "--replicas", "--fail-on", "never")
	if code != exitError || !strings.Contains(stderr, "no online replica") || !strings.Contains(stderr, "--replicas=prefer") {
		t.Errorf("--replicas without a replica: exit %d, stderr %q", code, stderr)
	}
	code, stdout, stderr = runCLI(t, "", "audit", "--registry", auditRegistry, "--redis", s.URL(), "--replicas=prefer", "--fail-on", "never")
	if code != exitClean || !strings.Contains(stdout, "the master itself was walked") {
		t.Errorf("--replicas=prefer: exit %d, stderr %q\n%s", code, stderr, stdout)
	}
}

// TestAuditHotFlag: --hot N lists the N keys with the highest LFU
// counters as hot-key findings, on a server that keeps LFU counters;
// --hot 0 is refused.
func TestAuditHotFlag(t *testing.T) {
	s := redistest.Start(t, "maxmemory-policy allkeys-lfu", "lfu-log-factor 0")
	c := s.Client(t)
	ctx := context.Background()
	const n = 8
	for i := range n {
		k := "order:order:" + strconv.Itoa(i) + ":base"
		c.HSet(ctx, k, "orderId", i)
		c.Expire(ctx, k, time.Hour)
		for range 40 + 10*i { // key i is read 40+10i times: key 7 the hottest
			c.HGet(ctx, k, "orderId")
		}
	}
	hot := func(args ...string) []string {
		t.Helper()
		out := filepath.Join(t.TempDir(), "a.json")
		args = append([]string{"audit", "--registry", auditRegistry, "--redis", s.URL(), "--format", "json", "--fail-on", "never", "--out", out}, args...)
		if code, _, stderr := runCLI(t, "", args...); code != exitClean {
			t.Fatalf("%v: exit %d %s", args, code, stderr)
		}
		var keys []string
		for _, f := range loadAuditReport(t, out).Findings {
			if f.Rule == "hot-key" {
				keys = append(keys, f.Key)
			}
		}
		slices.Sort(keys)
		return keys
	}
	if got := hot(); len(got) != n {
		t.Errorf("default: hot keys %v, want all %d (fewer than 20)", got, n)
	}
	got := hot("--hot", "2")
	if want := []string{"order:order:6:base", "order:order:7:base"}; !slices.Equal(got, want) {
		t.Errorf("--hot 2: hot keys %v, want %v", got, want)
	}
	if code, _, stderr := runCLI(t, "", "audit", "--registry", auditRegistry, "--redis", s.URL(), "--hot", "0"); code != exitError || !strings.Contains(stderr, "--hot") {
		t.Errorf("--hot 0: exit %d %q", code, stderr)
	}
}

// audit --snapshot: the report of the server's snapshot, named as the
// live server; flags that only a walk takes are refused.
func TestAuditSnapshot(t *testing.T) {
	s := redistest.Start(t, "repl-diskless-sync-delay 0")
	c := s.Client(t)
	ctx := context.Background()
	c.Set(ctx, "order:misc:1", "x", time.Hour) // unregistered
	c.HSet(ctx, "order:order:1:base", "orderId", "1")
	c.Expire(ctx, "order:order:1:base", time.Hour)
	out := filepath.Join(t.TempDir(), "a.json")
	code, stdout, stderr := runCLI(t, "", "audit", "--snapshot", "--registry", auditRegistry, "--redis", s.URL(), "--format", "json", "--out", out)
	if code != exitFindings || stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 1 and the report in %s", code, stdout, stderr, out)
	}
	rep := loadAuditReport(t, out)
	if rep.Summary.Keys != 2 || !rep.Complete || rep.Source.Kind != "redis" || rep.Source.Target != s.URL() || rep.Summary.Unregistered != 1 {
		t.Errorf("report: keys %d complete %v source %+v unregistered %d", rep.Summary.Keys, rep.Complete, rep.Source, rep.Summary.Unregistered)
	}
	for _, flag := range [][]string{{"--sample", "10"}, {"--rate", "100"}, {"--resume", out}, {"--count", "10"}} {
		code, _, stderr := runCLI(t, "", append([]string{"audit", "--snapshot", "--registry", auditRegistry, "--redis", s.URL()}, flag...)...)
		if code != exitError || !strings.Contains(stderr, flag[0][2:]) || !strings.Contains(stderr, "--snapshot") {
			t.Errorf("%v: exit %d, stderr %q; want a usage error naming both", flag, code, stderr)
		}
	}
	// --replicas=prefer takes the snapshot from the master of a server
	// without a replica, and says so; --replicas refuses.
	if code, _, stderr := runCLI(t, "", "audit", "--snapshot", "--replicas", "--registry", auditRegistry, "--redis", s.URL()); code != exitError || !strings.Contains(stderr, "no online replica") || !strings.Contains(stderr, "--replicas=prefer") {
		t.Errorf("--snapshot --replicas without a replica: exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = runCLI(t, "", "audit", "--snapshot", "--replicas=prefer", "--registry", auditRegistry, "--redis", s.URL(), "--format", "json", "--out", out)
	if rep := loadAuditReport(t, out); code != exitFindings || rep.Summary.Keys != 2 || !rep.Complete || !slices.ContainsFunc(rep.Notes, func(n string) bool { return strings.Contains(n, "the snapshot was taken from the master itself") }) {
		t.Errorf("--snapshot --replicas=prefer without a replica: exit %d, stderr %q, keys %d, notes %q", code, stderr, rep.Summary.Keys, rep.Notes)
	}
	// serve's scheduled audits take --snapshot with the same checks.
	if code, _, stderr := runCLI(t, "", "serve", "--snapshot", "--rate", "100", "--registry", auditRegistry, "--redis", s.URL()); code != exitError || !strings.Contains(stderr, "--snapshot") {
		t.Errorf("serve --snapshot --rate: exit %d, stderr %q", code, stderr)
	}
}

// audit --snapshot over TLS (rediss://): the snapshot arrives through the
// server's TLS connection (diskless, through its pipe) whole.
func TestAuditSnapshotTLS(t *testing.T) {
	plain, tlsAddr := tlsRedis(t)
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: plain})
	defer c.Close()
	if err := c.ConfigSet(ctx, "repl-diskless-sync-delay", "0").Err(); err != nil {
		t.Fatal(err)
	}
	for i := range 300 {
		c.HSet(ctx, "order:order:"+strconv.Itoa(i)+":base", "orderId", strconv.Itoa(i), "note", strings.Repeat("x", 400))
	}
	out := filepath.Join(t.TempDir(), "a.json")
	code, _, stderr := runCLI(t, "", "audit", "--snapshot", "--registry", auditRegistry, "--redis", "rediss://"+tlsAddr+"?skip_verify=true", "--format", "json", "--out", out, "--fail-on", "never")
	if code != exitClean {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if rep := loadAuditReport(t, out); rep.Summary.Keys != 300 || !rep.Complete {
		t.Errorf("keys %d complete %v; want 300 and complete", rep.Summary.Keys, rep.Complete)
	}
}

// TestResumeAndMergeWithoutRegistry: the reports of audits run without a
// registry resume and merge without one (no keyguard.yaml anywhere), and
// the merged report still says what went unchecked. A registry named for
// such reports, or reports made with and without one together, are
// refused: their groups are of different kinds.
func TestResumeAndMergeWithoutRegistry(t *testing.T) {
	reg, err := filepath.Abs(auditRegistry)
	if err != nil {
		t.Fatal(err)
	}
	s, s2 := twoServers(t, func(i int) string { return "report:daily:" + strconv.Itoa(i) }, 0)
	t.Chdir(t.TempDir())
	code, _, stderr := runCLI(t, "", "audit", "--redis", s.URL(), "--count", "5", "--rate", "400", "--timeout", "300ms", "--format", "json", "--out", "part.json")
	if code != exitError || !strings.Contains(stderr, "--resume part.json") {
		t.Fatalf("partial run without a registry: exit %d %q", code, stderr)
	}
	if code, _, stderr := runCLI(t, "", "audit", "--registry", reg, "--redis", s.URL(), "--resume", "part.json"); code != exitError || !strings.Contains(stderr, "that audit ran without a registry") {
		t.Errorf("resumed with a registry: exit %d %q", code, stderr)
	}
	code, _, stderr = runCLI(t, "", "audit", "--redis", s.URL(), "--resume", "part.json", "--format", "json", "--out", "a.json", "--fail-on", "never")
	if a := loadAuditReport(t, "a.json"); code != exitClean || !a.Complete || a.Summary.Keys != 600 || !a.WithoutRegistry() {
		t.Fatalf("resumed without a registry: exit %d %q; complete %v, %d keys, not checked %v", code, stderr, a.Complete, a.Summary.Keys, a.NotChecked)
	}
	if code, _, stderr := runCLI(t, "", "audit", "--redis", s2.URL(), "--format", "json", "--out", "b.json", "--fail-on", "never"); code != exitClean {
		t.Fatalf("second audit: exit %d %q", code, stderr)
	}
	code, _, stderr = runCLI(t, "", "merge", "a.json", "b.json", "--format", "json", "--out", "m.json", "--fail-on", "never")
	if m := loadAuditReport(t, "m.json"); code != exitClean || m.Summary.Keys != 700 || !m.WithoutRegistry() || len(m.Groups) < 2 {
		t.Fatalf("merge without a registry: exit %d %q; %d keys, not checked %v, %d groups", code, stderr, m.Summary.Keys, m.NotChecked, len(m.Groups))
	}
	if code, _, stderr := runCLI(t, "", "merge", "--registry", reg, "a.json", "b.json"); code != exitError || !strings.Contains(stderr, "made without a registry") {
		t.Errorf("merge with a registry named: exit %d %q", code, stderr)
	}
	if code, _, stderr := runCLI(t, "", "audit", "--registry", reg, "--redis", s2.URL(), "--format", "json", "--out", "c.json", "--fail-on", "never"); code != exitClean {
		t.Fatalf("audit with a registry: exit %d %q", code, stderr)
	}
	if code, _, stderr := runCLI(t, "", "merge", "--registry", reg, "a.json", "c.json"); code != exitError || !strings.Contains(stderr, "a.json was made without a registry and c.json with") {
		t.Errorf("merge of reports made with and without a registry: exit %d %q", code, stderr)
	}
}

// TestResumeAndMergeUnderChangedRegistry: a partial audit is not resumed,
// nor reports merged, under a registry that declares otherwise than the
// one their keys were grouped by (a template added since would have put
// the keys walked before in a family and those after in the template);
// an edit of comments alone is no change. diff says when its reports'
// registries differ.
func TestResumeAndMergeUnderChangedRegistry(t *testing.T) {
	s, s2 := twoServers(t, func(i int) string { return "legacy:cart:" + strconv.Itoa(1000+i) }, time.Hour)
	t.Chdir(t.TempDir())
	const before = "version: 1\ndomains:\n  order: {owner: order-team}\nkeys:\n  - key: \"order:order:{id:int}:base\"\n    type: hash\n    ttl: 1h\n"
	const added = before + "  - key: \"legacy:cart:{id:int}\"\n    ttl: 1h\n    owner: cart-team\n"
	write := func(yaml string) {
		t.Helper()
		if err := os.WriteFile("keyguard.yaml", []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(before)
	code, _, stderr := runCLI(t, "", "audit", "--redis", s.URL(), "--count", "5", "--rate", "400", "--timeout", "300ms", "--format", "json", "--out", "part.json")
	if code != exitError || !strings.Contains(stderr, "--resume part.json") {
		t.Fatalf("partial run: exit %d %q", code, stderr)
	}
	part := loadAuditReport(t, "part.json")
	if part.RegistryDigest == "" || part.Complete {
		t.Fatalf("partial report: digest %q, complete %v", part.RegistryDigest, part.Complete)
	}
	write(added)
	code, _, stderr = runCLI(t, "", "audit", "--redis", s.URL(), "--resume", "part.json", "--format", "json", "--out", "mixed.json", "--fail-on", "never")
	if code != exitError || !strings.Contains(stderr, "--resume part.json: that audit was made with a registry that declared otherwise") || !strings.Contains(stderr, part.RegistryDigest) {
		t.Fatalf("resumed under a registry with a template added: exit %d %q", code, stderr)
	}
	if _, err := os.Stat("mixed.json"); err == nil {
		t.Error("a refused resume wrote a report")
	}
	write("# the shop's keys, reviewed\n" + strings.Replace(before, "ttl: 1h\n", "ttl: 1h # an hour\n", 1))
	code, _, stderr = runCLI(t, "", "audit", "--redis", s.URL(), "--resume", "part.json", "--format", "json", "--out", "a.json", "--fail-on", "never")
	a := loadAuditReport(t, "a.json")
	if code != exitClean || !a.Complete || a.Summary.Keys != 600 || a.RegistryDigest != part.RegistryDigest {
		t.Fatalf("resumed under the registry with a comment added: exit %d %q; complete %v, %d keys, digest %q", code, stderr, a.Complete, a.Summary.Keys, a.RegistryDigest)
	}
	write(added)
	if code, _, stderr := runCLI(t, "", "audit", "--redis", s2.URL(), "--format", "json", "--out", "b.json", "--fail-on", "never"); code != exitClean {
		t.Fatalf("second audit: exit %d %q", code, stderr)
	}
	b := loadAuditReport(t, "b.json")
	if b.RegistryDigest == "" || b.RegistryDigest == a.RegistryDigest {
		t.Fatalf("digests: %q and %q", a.RegistryDigest, b.RegistryDigest)
	}
	if code, _, stderr := runCLI(t, "", "merge", "a.json", "b.json"); code != exitError || !strings.Contains(stderr, "a.json and b.json were made with registries that declared otherwise") {
		t.Errorf("merge of reports of two registries: exit %d %q", code, stderr)
	}
	if code, _, stderr := runCLI(t, "", "merge", "a.json", "a.json"); code != exitError || !strings.Contains(stderr, "a.json was made with a registry that declared otherwise than keyguard.yaml does now") {
		t.Errorf("merge under a registry that changed: exit %d %q", code, stderr)
	}
	code, stdout, stderr := runCLI(t, "", "diff", "a.json", "b.json")
	if code == exitError || !strings.Contains(stdout, "the registry declared otherwise when the new report was made") {
		t.Errorf("diff of reports of two registries: exit %d %q %q", code, stdout, stderr)
	}
}

// twoServers starts two servers for the resume and merge tests: 600 keys
// legacy:cart:N with a TTL of an hour on the first, 100 keys second(i)
// with ttl (0: none) on the second.
func twoServers(t *testing.T, second func(i int) string, ttl time.Duration) (*redistest.Server, *redistest.Server) {
	t.Helper()
	ctx := context.Background()
	s, s2 := redistest.Start(t), redistest.Start(t)
	c, c2 := s.Client(t), s2.Client(t)
	for i := range 600 {
		c.Set(ctx, "legacy:cart:"+strconv.Itoa(i), "{}", time.Hour)
	}
	for i := range 100 {
		c2.Set(ctx, second(i), "{}", ttl)
	}
	return s, s2
}

// TestValueFormatThroughResumeAndMerge: strings of another format than
// their template's JSON objects, found before an audit stopped, are in
// its resumed report; found on two shards, in their merged report.
func TestValueFormatThroughResumeAndMerge(t *testing.T) {
	ctx := context.Background()
	s, s2 := redistest.Start(t), redistest.Start(t)
	fill := func(c *redis.Client, from, n int) int {
		foreign := 0
		for i := from; i < from+n; i++ {
			v := `{"id":` + strconv.Itoa(i) + `,"name":"p"}`
			if i%10 == 3 {
				v, foreign = "legacy-"+strconv.Itoa(i), foreign+1
			}
			c.Set(ctx, "cache:product:"+strconv.Itoa(i), v, time.Hour)
		}
		return foreign
	}
	want1, want2 := fill(s.Client(t), 0, 600), fill(s2.Client(t), 1000, 100)
	t.Chdir(t.TempDir())
	reg := "version: 1\ndomains:\n  cache: {owner: cache-team}\nkeys:\n  - {key: \"cache:product:{id:int}\", type: string, ttl: 1h, fields: [id, name]}\n"
	if err := os.WriteFile("keyguard.yaml", []byte(reg), 0o644); err != nil {
		t.Fatal(err)
	}
	// A partial report that already holds value-format findings: the
	// deadline stops the walk, at 400 commands a second, before its 600
	// keys are all listed. A loaded machine can spend the first deadline
	// starting up (52 keys, none judged yet): a longer one is tried then.
	var (
		code   int
		stderr string
		part   *report.Report
	)
	for _, deadline := range []string{"300ms", "600ms", "1200ms"} {
		code, _, stderr = runCLI(t, "", "audit", "--redis", s.URL(), "--count", "5", "--rate", "400", "--timeout", deadline, "--format", "json", "--out", "part.json")
		part = loadAuditReport(t, "part.json")
		if part.Summary.ByRule["value-format"] > 0 {
			break
		}
	}
	if code != exitError || part.Complete || part.Summary.ByRule["value-format"] == 0 {
		t.Fatalf("partial run: exit %d %q, complete %v, %d value-format findings", code, stderr, part.Complete, part.Summary.ByRule["value-format"])
	}
	code, _, stderr = runCLI(t, "", "audit", "--redis", s.URL(), "--resume", "part.json", "--format", "json", "--out", "a.json", "--fail-on", "never")
	a := loadAuditReport(t, "a.json")
	if code != exitClean || !a.Complete || a.Summary.ByRule["value-format"] != int64(want1) {
		t.Fatalf("resumed: exit %d %q, complete %v, %d value-format findings, want %d", code, stderr, a.Complete, a.Summary.ByRule["value-format"], want1)
	}
	if code, _, stderr := runCLI(t, "", "audit", "--redis", s2.URL(), "--format", "json", "--out", "b.json", "--fail-on", "never"); code != exitClean {
		t.Fatalf("second audit: exit %d %q", code, stderr)
	}
	code, _, stderr = runCLI(t, "", "merge", "a.json", "b.json", "--format", "json", "--out", "m.json", "--fail-on", "never")
	m := loadAuditReport(t, "m.json")
	listed := 0
	for _, f := range m.Findings {
		if f.Rule == "value-format" {
			listed++
		}
	}
	if code != exitClean || m.Summary.ByRule["value-format"] != int64(want1+want2) || listed != want1+want2 {
		t.Errorf("merged: exit %d %q, %d value-format findings (%d listed), want %d", code, stderr, m.Summary.ByRule["value-format"], listed, want1+want2)
	}
}
