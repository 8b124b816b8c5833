package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/redistest"
)

// TestMergeRefusesKeysCountedTwice: merge adds reports of different
// servers, databases or Cluster shards; reports that counted the same
// keys (one server's database audited twice, a partial report and its
// resumed one, a Cluster audit and one of its masters audited alone)
// are refused, naming what both counted, rather than merged into a
// report of twice the keys that calls itself complete.
func TestMergeRefusesKeysCountedTwice(t *testing.T) {
	ctx := context.Background()
	s := redistest.Start(t)
	c := s.Client(t)
	for i := range 600 {
		c.Set(ctx, "legacy:cart:"+strconv.Itoa(i), "{}", time.Hour)
	}
	c2 := redis.NewClient(&redis.Options{Addr: s.Addr, DB: 2})
	defer c2.Close()
	for i := range 40 {
		c2.Set(ctx, "legacy:cart:"+strconv.Itoa(i), "{}", time.Hour)
	}
	reg, err := filepath.Abs(auditRegistry)
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	audit := func(out string, args ...string) {
		t.Helper()
		args = append([]string{"audit", "--registry", reg, "--format", "json", "--out", out, "--fail-on", "never"}, args...)
		if code, _, stderr := runCLI(t, "", args...); code != exitClean {
			t.Fatalf("audit %v: exit %d %q", args, code, stderr)
		}
	}
	merge := func(files ...string) (int, string) {
		t.Helper()
		code, _, stderr := runCLI(t, "", append([]string{"merge", "--registry", reg, "--format", "json", "--out", "m.json", "--fail-on", "never"}, files...)...)
		return code, stderr
	}
	audit("a0.json", "--redis", s.URL()+"/0")
	audit("a2.json", "--redis", s.URL()+"/2")
	audit("b0.json", "--redis", s.URL()+"/0")
	if code, stderr := merge("a0.json", "a2.json"); code != exitClean {
		t.Fatalf("two databases of one server: exit %d %q", code, stderr)
	}
	if m := loadAuditReport(t, "m.json"); m.Summary.Keys != 640 || !m.Complete {
		t.Fatalf("two databases merged: %d keys, complete %v", m.Summary.Keys, m.Complete)
	}
	code, stderr := merge("a0.json", "a2.json", "b0.json")
	if code != exitError || !strings.Contains(stderr, "a0.json and b0.json both counted the keys of database 0 of "+s.Addr) || !strings.Contains(stderr, "counted twice") {
		t.Fatalf("database 0 audited twice: exit %d %q", code, stderr)
	}

	// A snapshot of the same server (its coverage carries the run_id too).
	if err := c.ConfigSet(ctx, "repl-diskless-sync-delay", "0").Err(); err != nil {
		t.Fatal(err)
	}
	audit("s0.json", "--redis", s.URL()+"/0", "--snapshot")
	if code, stderr := merge("a2.json", "s0.json", "a0.json"); code != exitError || !strings.Contains(stderr, "s0.json and a0.json both counted the keys of database 0 of "+s.Addr) {
		t.Fatalf("a walk and a snapshot of one server: exit %d %q", code, stderr)
	}

	// A partial report and the report that resumed it.
	code, _, stderr = runCLI(t, "", "audit", "--registry", reg, "--redis", s.URL()+"/0", "--count", "5", "--rate", "400", "--timeout", "300ms", "--format", "json", "--out", "part.json")
	if code != exitError || !strings.Contains(stderr, "--resume part.json") {
		t.Fatalf("partial run: exit %d %q", code, stderr)
	}
	audit("resumed.json", "--redis", s.URL()+"/0", "--resume", "part.json")
	if code, stderr := merge("part.json", "resumed.json"); code != exitError || !strings.Contains(stderr, "keep the resumed one") {
		t.Fatalf("a partial report and its resumed one: exit %d %q", code, stderr)
	}

	// RDB files: a master's and its replica's snapshots (one replication
	// ID) are refused; two databases of one file merge.
	rep := redistest.StartReplica(t, s)
	rep.WaitInfo(t, "keyspace", func(info string) bool {
		return strings.Contains(info, "db0:keys=600,") && strings.Contains(info, "db2:keys=40,")
	})
	rdbReport := func(out string, srv *redistest.Server, db string) {
		t.Helper()
		data := srv.Saved(t)
		name := strings.TrimSuffix(out, ".json") + ".rdb"
		if err := os.WriteFile(name, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if code, _, stderr := runCLI(t, "", "rdb", "--registry", reg, "--db", db, "--format", "json", "--out", out, "--fail-on", "never", name); code != exitClean {
			t.Fatalf("rdb %s: exit %d %q", name, code, stderr)
		}
	}
	rdbReport("m0.json", s, "0")
	rdbReport("m2.json", s, "2")
	rdbReport("r0.json", rep, "0")
	if code, stderr := merge("m0.json", "m2.json"); code != exitClean {
		t.Fatalf("two databases of one RDB file: exit %d %q", code, stderr)
	}
	if code, stderr := merge("m2.json", "m0.json", "r0.json"); code != exitError || !strings.Contains(stderr, "m0.json and r0.json both counted the keys of database 0 of the snapshots of one server (replication ID ") {
		t.Fatalf("a master's and its replica's RDB files: exit %d %q", code, stderr)
	}

	// A Cluster audit and one of its masters audited alone; the masters
	// audited one by one merge.
	cl := redistest.StartCluster(t, 3)
	cc := cl.Client(t)
	for i := range 300 {
		cc.Set(ctx, "legacy:cart:"+strconv.Itoa(i), "{}", time.Hour)
	}
	audit("cluster.json", "--redis", cl.URL(), "--cluster")
	var nodes []string
	for i, a := range cl.Addrs {
		f := "node" + strconv.Itoa(i) + ".json"
		audit(f, "--redis", "redis://"+a)
		nodes = append(nodes, f)
	}
	code, stderr = merge("cluster.json", nodes[1])
	if code != exitError || !strings.Contains(stderr, "cluster.json and node1.json both counted the keys of Cluster slots ") || !strings.Contains(stderr, " of "+cl.Addrs[1]+" (run_id ") {
		t.Fatalf("a Cluster and one of its masters: exit %d %q", code, stderr)
	}
	if code, stderr := merge(nodes...); code != exitClean {
		t.Fatalf("the masters one by one: exit %d %q", code, stderr)
	}
	if m := loadAuditReport(t, "m.json"); m.Summary.Keys != 300 || !m.Complete {
		t.Fatalf("the masters merged: %d keys of 300, complete %v", m.Summary.Keys, m.Complete)
	}
}
