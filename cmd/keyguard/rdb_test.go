package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/audit/snapshot"
	"github.com/keyguard/keyguard/internal/plant"
	"github.com/keyguard/keyguard/internal/redistest"
	"github.com/keyguard/keyguard/registry"
)

// rdbTestRegistry is the audit tests' registry: one template per type, a
// guarded hash, a persistent key, big_key_elements 500.
const rdbTestRegistry = "../../internal/audit/live/testdata/keyguard.yaml"

// writeRDBDataset writes the audit tests' clean keys and anomalies
// (internal/plant; the server runs allkeys-lfu with lfu-log-factor 0, so
// one key is hot), a key that has expired by the time of the SAVE, and
// three keys in database 1. It returns the anomalies and the number of
// live keys in database 0.
func writeRDBDataset(t *testing.T, s *redistest.Server) ([]plant.Anomaly, int) {
	t.Helper()
	ctx := context.Background()
	c := s.Client(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	keys := plant.Clean(t, c, 500)
	ps := plant.Anomalies(t, c, true)
	keys += len(ps) + 10 // the anomalies and the second writer's ten keys

	// A key that expires before the SAVE but stays in memory (no active
	// expiry, nobody reads it): the file has it, Redis would drop it on
	// load, a live audit does not see it. ctime has a 1 s resolution.
	must(c.Do(ctx, "DEBUG", "SET-ACTIVE-EXPIRE", "0").Err())
	must(c.Set(ctx, "order:order:999999:base", "gone", time.Millisecond).Err())
	time.Sleep(1100 * time.Millisecond)

	c1 := redis.NewClient(&redis.Options{Addr: s.Addr, DB: 1})
	defer c1.Close()
	for i := range 3 {
		must(c1.Set(ctx, fmt.Sprintf("order:misc:db1:%d", i), "x", time.Hour).Err())
	}
	must(c.Save(ctx).Err())
	return ps, keys
}

// findingSet is the (rule, key) pairs of a report.
func rdbFindingSet(rep *report.Report) map[[2]string]bool {
	m := map[[2]string]bool{}
	for _, f := range rep.Findings {
		m[[2]string{f.Rule, f.Key}] = true
	}
	return m
}

func rdbReadReport(t *testing.T, path string) *report.Report {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rep, err := report.ReadReport(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rep
}

func TestRDBCommand(t *testing.T) {
	srv := redistest.Start(t, "maxmemory-policy allkeys-lfu", "lfu-log-factor 0")
	planted, keys := writeRDBDataset(t, srv)
	dump := filepath.Join(srv.Dir, "dump.rdb")
	dir := t.TempDir()

	rdbJSON := filepath.Join(dir, "rdb.json")
	code, stdout, stderr := runCLI(t, "", "rdb", "--registry", rdbTestRegistry, "--db", "0", "--format", "json", "--out", rdbJSON, dump)
	if code != exitFindings || stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 1 and the report in the --out file", code, stdout, stderr)
	}
	rep := rdbReadReport(t, rdbJSON)

	t.Run("planted anomalies", func(t *testing.T) {
		if rep.Source != (report.Source{Kind: "rdb", Target: dump, Nodes: 1}) || !rep.Complete || rep.Registry != rdbTestRegistry {
			t.Errorf("source %+v complete %v registry %q", rep.Source, rep.Complete, rep.Registry)
		}
		if rep.Summary.Keys != int64(keys) {
			t.Errorf("keys %d, want %d", rep.Summary.Keys, keys)
		}
		got := rdbFindingSet(rep)
		want := map[[2]string]bool{}
		for _, p := range planted {
			for _, r := range p.Rules {
				want[[2]string{r, p.Key}] = true
				if !got[[2]string{r, p.Key}] {
					t.Errorf("%s: no %s finding", p.Key, r)
				}
			}
		}
		for k := range got {
			if !want[k] {
				t.Errorf("unexpected finding %s on %q", k[0], k[1])
			}
		}
		if !slices.ContainsFunc(rep.Notes, func(n string) bool { return strings.HasPrefix(n, "1 key had already expired") }) {
			t.Errorf("no note on the expired key: %q", rep.Notes)
		}
	})

	t.Run("same as the live audit", func(t *testing.T) {
		// rdb reports keys as a server holds them once it has loaded the
		// file: audit one that did (the writer may hold more, in the
		// preallocated last node of each stream).
		if err := srv.Client(t).Do(context.Background(), "DEBUG", "RELOAD", "NOSAVE").Err(); err != nil {
			t.Fatal(err)
		}
		auditJSON := filepath.Join(dir, "audit.json")
		code, _, stderr := runCLI(t, "", "audit", "--registry", rdbTestRegistry, "--redis", srv.URL(), "--db", "0", "--format", "json", "--out", auditJSON)
		if code != exitFindings {
			t.Fatalf("audit: exit %d: %s", code, stderr)
		}
		live := rdbReadReport(t, auditJSON)
		a, b := live.Summary, rep.Summary
		if a.Keys != b.Keys || a.NoTTL != b.NoTTL || a.Unregistered != b.Unregistered || a.Findings != b.Findings ||
			a.BySeverity != b.BySeverity || !maps.Equal(a.ByRule, b.ByRule) {
			t.Errorf("summaries differ:\naudit %+v\nrdb   %+v", a, b)
		}
		// MEMORY USAGE against the decoder's estimate: the same bytes but
		// for skiplists, whose node levels are random.
		d := float64(b.Bytes-a.Bytes) / float64(a.Bytes)
		t.Logf("bytes: audit (MEMORY USAGE) %d, rdb (estimate) %d: %+.2f%%; findings %d, by rule %v", a.Bytes, b.Bytes, 100*d, a.Findings, a.ByRule)
		if d > 0.05 || d < -0.05 {
			t.Errorf("bytes: audit %d, rdb %d (%.1f%%)", a.Bytes, b.Bytes, 100*d)
		}
		fa, fr := rdbFindingSet(live), rdbFindingSet(rep)
		for k := range fa {
			if !fr[k] {
				t.Errorf("only the audit found %s on %q", k[0], k[1])
			}
		}
		for k := range fr {
			if !fa[k] {
				t.Errorf("only rdb found %s on %q", k[0], k[1])
			}
		}
		if len(live.Groups) != len(rep.Groups) {
			t.Errorf("groups: audit %d, rdb %d", len(live.Groups), len(rep.Groups))
		}
	})

	t.Run("databases", func(t *testing.T) {
		code, stdout, stderr := runCLI(t, "", "rdb", "--registry", rdbTestRegistry, "--format", "json", "--fail-on", "never", dump)
		all := rdbDecodeReport(t, code, stdout, stderr)
		if all.Summary.Keys != int64(keys+3) {
			t.Errorf("every database: %d keys, want %d", all.Summary.Keys, keys+3)
		}
		code, stdout, stderr = runCLI(t, "", "rdb", "--registry", rdbTestRegistry, "--format", "json", "--fail-on", "never", "--db", "1", dump)
		one := rdbDecodeReport(t, code, stdout, stderr)
		if one.Summary.Keys != 3 || one.Summary.Unregistered != 3 || !slices.Contains(one.Notes, "only database 1 was audited") {
			t.Errorf("--db 1: %+v, notes %q", one.Summary, one.Notes)
		}
		for _, f := range one.Findings {
			if !strings.HasPrefix(f.Key, "order:misc:db1:") {
				t.Errorf("--db 1 reports %q", f.Key)
			}
		}
	})

	t.Run("match", func(t *testing.T) {
		code, stdout, stderr := runCLI(t, "", "rdb", "--registry", rdbTestRegistry, "--format", "json", "--fail-on", "never", "--db", "0", "--match", "promo:order:*:promo-info", dump)
		m := rdbDecodeReport(t, code, stdout, stderr)
		if m.Summary.Keys != 50+10+3 {
			t.Errorf("--match: %d keys, want 63", m.Summary.Keys)
		}
		got := rdbFindingSet(m)
		if len(got) != 3 || !got[[2]string{finding.GuardForeign, "promo:order:900006:promo-info"}] {
			t.Errorf("--match findings %v", got)
		}
		code, stdout, stderr = runCLI(t, "", "rdb", "--registry", rdbTestRegistry, "--format", "json", "--fail-on", "never", "--match", `order:[^o]*`, dump)
		m = rdbDecodeReport(t, code, stdout, stderr)
		if m.Summary.Keys != 4+3 || m.Summary.Unregistered != 4+3 { // order:misc:900008, order:Misc:…, "order:misc name:…", the long one, db 1
			t.Errorf("--match 'order:[^o]*': %+v", m.Summary)
		}
	})

	t.Run("formats and exit codes", func(t *testing.T) {
		for _, format := range []string{"text", "csv", "html"} {
			code, stdout, stderr := runCLI(t, "", "rdb", "--registry", rdbTestRegistry, "--format", format, dump)
			if code != exitFindings || len(stdout) < 100 {
				t.Errorf("--format %s: exit %d, %d bytes, %s", format, code, len(stdout), stderr)
			}
		}
		if code, _, stderr := runCLI(t, "", "rdb", "--registry", rdbTestRegistry, "--fail-on", "never", dump); code != exitClean {
			t.Errorf("--fail-on never: exit %d %s", code, stderr)
		}
		if code, _, _ := runCLI(t, "", "rdb", "--registry", rdbTestRegistry, "--match", "cache:product:detail:p1?", "--db", "0", dump); code != exitClean {
			t.Errorf("clean keys only: exit %d", code)
		}
	})

	data, err := os.ReadFile(dump)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("stdin", func(t *testing.T) {
		code, stdout, stderr := runCLI(t, string(data), "rdb", "--registry", rdbTestRegistry, "--format", "json", "--fail-on", "never", "--db", "0", "-")
		r := rdbDecodeReport(t, code, stdout, stderr)
		if r.Summary.Keys != rep.Summary.Keys || r.Summary.Bytes != rep.Summary.Bytes || !maps.Equal(r.Summary.ByRule, rep.Summary.ByRule) || r.Source.Target != "-" {
			t.Errorf("stdin: %+v %+v, want %+v", r.Source, r.Summary, rep.Summary)
		}
	})

	t.Run("truncated", func(t *testing.T) {
		cut := filepath.Join(dir, "cut.rdb")
		if err := os.WriteFile(cut, data[:len(data)*6/10], 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "cut.json")
		code, stdout, stderr := runCLI(t, "", "rdb", "--registry", rdbTestRegistry, "--format", "json", "--out", out, dump, cut)
		if code != exitError || stdout != "" {
			t.Fatalf("exit %d, stdout %q; want 2", code, stdout)
		}
		if strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, cut+" stopped at byte ") || !strings.Contains(stderr, out) {
			t.Errorf("stderr is not one line naming the file, its offset and the report:\n%s", stderr)
		}
		t.Logf("stderr: %s", stderr)
		r := rdbReadReport(t, out) // valid JSON
		if r.Complete || len(r.Stopped) != 1 {
			t.Fatalf("complete %v, stopped %+v", r.Complete, r.Stopped)
		}
		st := r.Stopped[0]
		off, err := strconv.Atoi(st.Cursor)
		if st.Node != cut || err != nil || off <= 0 || off > len(data)*6/10 || !strings.Contains(st.Reason, "truncated") {
			t.Errorf("stop %+v", st)
		}
		// The whole file, plus what the cut copy had before the cut.
		if st.Keys <= 0 || r.Summary.Keys != int64(keys+3)+st.Keys || r.Source.Nodes != 2 {
			t.Errorf("keys %d with %d from the cut file, want %d + those", r.Summary.Keys, st.Keys, keys+3)
		}
	})

	t.Run("corrupt", func(t *testing.T) {
		bad := slices.Clone(data)
		for i := len(bad) / 2; i < len(bad)/2+16; i++ {
			bad[i] ^= 0x5a
		}
		path := filepath.Join(dir, "bad.rdb")
		if err := os.WriteFile(path, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr := runCLI(t, "", "rdb", "--registry", rdbTestRegistry, "--format", "json", path)
		if code != exitError || strings.Count(stderr, "\n") != 1 {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		var r report.Report
		if err := json.Unmarshal([]byte(stdout), &r); err != nil || r.Complete || len(r.Stopped) != 1 {
			t.Errorf("report: %v, complete %v, stopped %+v", err, r.Complete, r.Stopped)
		}
	})

	t.Run("unreadable files write nothing", func(t *testing.T) {
		notRDB := filepath.Join(dir, "keyguard.yaml")
		empty := filepath.Join(dir, "empty.rdb")
		os.WriteFile(notRDB, []byte("version: 1\n"), 0o644)
		os.WriteFile(empty, nil, 0o644)
		for _, tc := range []struct {
			args []string
			msg  string
		}{
			{[]string{filepath.Join(dir, "nope.rdb")}, "no such file"},
			{[]string{dump, filepath.Join(dir, "nope.rdb")}, "no such file"},
			{[]string{notRDB}, "not an RDB file"},
			{[]string{empty}, "is empty"},
			{[]string{dir}, "is a directory"},
			{[]string{dump, dump}, "named twice"},
			{nil, "name at least one RDB file"},
		} {
			out := filepath.Join(dir, "never.json")
			args := append([]string{"rdb", "--registry", rdbTestRegistry, "--out", out}, tc.args...)
			code, stdout, stderr := runCLI(t, "", args...)
			if code != exitError || stdout != "" || !strings.Contains(stderr, tc.msg) {
				t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 and %q", tc.args, code, stdout, stderr, tc.msg)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%q: %s was written", tc.args, out)
			}
		}
	})
}

func rdbDecodeReport(t *testing.T, code int, stdout, stderr string) *report.Report {
	t.Helper()
	if code != exitClean {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	rep, err := report.ReadReport(strings.NewReader(stdout))
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestRDBCluster saves every master of a 3-master Cluster and reads the
// three files as one report.
func TestRDBCluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	c := cl.Client(t)
	ctx := context.Background()
	const n = 3000
	for i := 0; i < n; i += 100 {
		p := c.Pipeline()
		for j := i; j < i+100; j++ {
			k := "order:order:" + strconv.Itoa(j) + ":base"
			p.HSet(ctx, k, "orderId", j, "status", "PAID")
			if j%10 != 0 {
				p.Expire(ctx, k, time.Hour) // every tenth key: no-ttl
			}
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var files []string
	var total int64
	for i, node := range cl.Nodes {
		nc := node.Client(t)
		size, err := nc.DBSize(ctx).Result()
		if err != nil || size == 0 {
			t.Fatalf("node %d: %d keys, %v", i, size, err)
		}
		total += size
		if err := nc.Save(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		files = append(files, filepath.Join(node.Dir, "dump.rdb"))
	}
	if total != n {
		t.Fatalf("the masters hold %d keys, want %d", total, n)
	}
	args := append([]string{"rdb", "--registry", rdbTestRegistry, "--format", "json", "--fail-on", "never"}, files...)
	code, stdout, stderr := runCLI(t, "", args...)
	rep := rdbDecodeReport(t, code, stdout, stderr)
	if rep.Summary.Keys != n || rep.Summary.NoTTL != n/10 || rep.Summary.ByRule[finding.NoTTL] != n/10 {
		t.Errorf("summary %+v, want %d keys, %d without TTL", rep.Summary, n, n/10)
	}
	if rep.Source != (report.Source{Kind: "rdb", Target: strings.Join(files, ","), Nodes: 3}) || !rep.Complete {
		t.Errorf("source %+v complete %v", rep.Source, rep.Complete)
	}
	nodes := map[string]bool{}
	for _, k := range rep.TopKeys {
		nodes[k.Node] = true
	}
	if len(nodes) < 2 {
		t.Errorf("top keys come from %v, want several files", nodes)
	}

	t.Run("same report whatever the number of aggregators", func(t *testing.T) {
		reg, err := registry.Load(rdbTestRegistry)
		if err != nil {
			t.Fatal(err)
		}
		var first string
		for _, procs := range []int{1, 3, 8} { // 1 decoder, 1 aggregator; 3 and 1; 3 and 4
			ins, err := snapshot.Open(files, nil)
			if err != nil {
				t.Fatal(err)
			}
			res, err := snapshot.Run(context.Background(), reg, ins, snapshot.Options{DB: -1, Procs: procs})
			snapshot.Close(ins)
			if err != nil {
				t.Fatal(err)
			}
			keys := res.Report.Summary.Keys
			res.Report.StartedAt, res.Report.DurationMS, res.Report.State = time.Time{}, 0, nil // the state counts asked keys, which depend on timing
			var b bytes.Buffer
			if err := res.Report.WriteJSON(&b); err != nil {
				t.Fatal(err)
			}
			switch {
			case keys != n:
				t.Errorf("procs %d: %d keys", procs, keys)
			case first == "":
				first = b.String()
			case b.String() != first:
				t.Errorf("procs %d: the report differs from procs 1", procs)
			}
		}
	})

	t.Run("interrupted", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var out, errb bytes.Buffer
		e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
		code := run(ctx, append([]string{"rdb", "--registry", rdbTestRegistry, "--format", "json"}, files...), e)
		r, err := report.ReadReport(&out)
		if code != exitError || err != nil || r.Complete || len(r.Stopped) != 3 || !strings.Contains(errb.String(), "interrupted") {
			t.Fatalf("exit %d, report %v, stderr %s", code, err, errb.String())
		}
		var keys int64
		for _, st := range r.Stopped {
			keys += st.Keys
			if !strings.HasPrefix(st.Reason, "interrupted") || st.Cursor == "" {
				t.Errorf("stop %+v", st)
			}
		}
		if keys != r.Summary.Keys || keys >= n {
			t.Errorf("%d keys in the report, %d in the stops, of %d", r.Summary.Keys, keys, n)
		}
	})
}

// TestRDBOddKeys: keys of any bytes and a 1 MB key go through the same
// way as in the live audit.
func TestRDBOddKeys(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	binary := "order:misc:\x00\xff\n\r"
	long := "order:misc:" + strings.Repeat("k", 1<<20)
	for _, k := range []string{binary, long} {
		if err := c.Set(ctx, k, "v", time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "", "rdb", "--registry", rdbTestRegistry, "--format", "json", "--fail-on", "never", filepath.Join(srv.Dir, "dump.rdb"))
	rep := rdbDecodeReport(t, code, stdout, stderr)
	if rep.Summary.Keys != 2 || rep.Summary.Unregistered != 2 {
		t.Fatalf("summary %+v", rep.Summary)
	}
	var sawBinary, sawLong bool
	for _, f := range rep.Findings {
		sawBinary = sawBinary || f.Rule == finding.Unregistered && f.Key == binary
		sawLong = sawLong || f.Rule == finding.Unregistered && f.KeyLen == len(long) && strings.HasPrefix(long, f.Key)
	}
	if !sawBinary || !sawLong {
		t.Errorf("unregistered findings: binary key %v, 1 MB key %v", sawBinary, sawLong)
	}
	code, stdout, stderr = runCLI(t, "", "audit", "--registry", rdbTestRegistry, "--redis", srv.URL(), "--format", "json", "--fail-on", "never")
	live := rdbDecodeReport(t, code, stdout, stderr)
	if !maps.Equal(rdbFindingSet(live), rdbFindingSet(rep)) || !maps.Equal(live.Summary.ByRule, rep.Summary.ByRule) {
		t.Errorf("audit and rdb differ:\naudit %v\nrdb   %v", live.Summary.ByRule, rep.Summary.ByRule)
	}
}

// TestRDBOfAppendOnlyFiles: the files of a Redis 7 append-only file, as a
// real server writes them: the manifest names its base snapshot (which
// keyguard rdb reads), and a file of commands is named as such, with the
// snapshot to read instead (both said "not an RDB file: it starts with
// \"*2\\r\\n$6\\r\\nS\"" before).
func TestRDBOfAppendOnlyFiles(t *testing.T) {
	srv := redistest.Start(t, "appendonly yes", "appendfsync always")
	rdb := srv.Client(t)
	ctx := context.Background()
	for i := range 50 {
		rdb.Set(ctx, fmt.Sprintf("user:profile:%d:base", i), "p", time.Hour)
	}
	if err := rdb.BgRewriteAOF(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	srv.WaitInfo(t, "persistence", func(info string) bool {
		return strings.Contains(info, "aof_rewrite_in_progress:0") && strings.Contains(info, "aof_rewrite_scheduled:0") && strings.Contains(info, "aof_last_bgrewrite_status:ok")
	})
	rdb.Set(ctx, "user:profile:99:base", "p", time.Hour) // into the incr file
	dir := filepath.Join(srv.Dir, "appendonlydir")
	manifest, _ := filepath.Glob(filepath.Join(dir, "*.manifest"))
	base, _ := filepath.Glob(filepath.Join(dir, "*.base.rdb"))
	incr, _ := filepath.Glob(filepath.Join(dir, "*.incr.aof"))
	if len(manifest) != 1 || len(base) != 1 || len(incr) == 0 {
		t.Fatalf("appendonlydir holds %v %v %v", manifest, base, incr)
	}
	code, _, errOut := runCLI(t, "", "rdb", manifest[0])
	if code != exitError || !strings.Contains(errOut, "is the manifest of a Redis 7 append-only file: its base is the snapshot: keyguard rdb "+base[0]) {
		t.Errorf("manifest: exit %d: %s", code, errOut)
	}
	code, _, errOut = runCLI(t, "", "rdb", incr[len(incr)-1])
	if code != exitError || !strings.Contains(errOut, "is an append-only file (AOF: the commands the server logged), not a snapshot") {
		t.Errorf("incr: exit %d: %s", code, errOut)
	}
	// The server's dir itself: the snapshot in it is named.
	code, _, errOut = runCLI(t, "", "rdb", srv.Dir)
	if code != exitError || !strings.Contains(errOut, "is a directory: it holds one snapshot, "+filepath.Base(base[0])+": keyguard rdb "+base[0]) {
		t.Errorf("the server's dir: exit %d: %s", code, errOut)
	}
	code, out, errOut := runCLI(t, "", "rdb", "--fail-on", "never", base[0])
	if code != 0 || !strings.Contains(out, "50 keys") || !strings.Contains(out, "complete") {
		t.Errorf("base: exit %d\n%s%s", code, out, errOut)
	}
}
