package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// TestKeysExport: --keys writes one row per key, live (one database per
// run) and from the RDB (every database), as many rows per database as
// the server's DBSIZE, each key's exact bytes and type read back.
func TestKeysExport(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	n := 20_000
	if testing.Short() {
		n = 3_000
	}
	want := map[int]map[string]string{} // db → key → type
	for _, db := range []int{0, 3} {
		c := redis.NewClient(&redis.Options{Addr: srv.Addr, DB: db})
		t.Cleanup(func() { c.Close() })
		want[db] = map[string]string{}
		pipe := c.Pipeline()
		for i := range n {
			var key, typ string
			switch i % 5 {
			case 0:
				key, typ = fmt.Sprintf("order:order:%d:base", i), "hash"
				pipe.HSet(ctx, key, "a", i)
			case 1:
				key, typ = fmt.Sprintf("bin:\xff\xfe\x00%d", i), "string"
				pipe.Set(ctx, key, "v", time.Hour)
			case 2:
				key, typ = fmt.Sprintf("=cmd,\"q\"\r\n%d", i), "list"
				pipe.RPush(ctx, key, "x")
			case 3:
				key, typ = fmt.Sprintf("rank:%d", i), "zset"
				pipe.ZAdd(ctx, key, redis.Z{Score: 1, Member: "m"})
			default:
				key, typ = fmt.Sprintf("tag:%d", i), "set"
				pipe.SAdd(ctx, key, "m")
			}
			want[db][key] = typ
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if size := c.DBSize(ctx).Val(); size != int64(n) {
			t.Fatalf("db %d: DBSIZE %d, want %d", db, size, n)
		}
	}
	dir := t.TempDir()
	check := func(path string, dbs ...int) {
		t.Helper()
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		r, err := report.NewKeyReader(f)
		if err != nil {
			t.Fatal(err)
		}
		rows := map[int]int{}
		for {
			var row report.KeyRow
			err := r.Next(&row)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			rows[row.DB]++
			if typ, ok := want[row.DB][row.Key]; !ok || typ != row.Type || row.Bytes <= 0 || row.Group == "" {
				t.Fatalf("%s: row %+v: not a key of db %d (type %q)", path, row, row.DB, typ)
			}
		}
		for _, db := range dbs {
			if rows[db] != n {
				t.Errorf("%s: %d rows of db %d, DBSIZE %d", path, rows[db], db, n)
			}
		}
		if len(rows) != len(dbs) {
			t.Errorf("%s: rows of databases %v, want %v", path, rows, dbs)
		}
	}
	for _, ext := range []string{"csv", "jsonl"} {
		live := filepath.Join(dir, "live."+ext)
		if code, _, errOut := runCLI(t, "", "audit", "--redis", srv.URL(), "--keys", live, "--format", "json", "--out", filepath.Join(dir, "a.json")); code > 1 {
			t.Fatalf("audit --keys: exit %d: %s", code, errOut)
		}
		check(live, 0, 3) // every database, as the audit walks them without --db
		live3 := filepath.Join(dir, "live3."+ext)
		if code, _, errOut := runCLI(t, "", "audit", "--redis", srv.URL(), "--db", "3", "--keys", live3, "--format", "json", "--out", filepath.Join(dir, "a.json")); code > 1 {
			t.Fatalf("audit --db 3 --keys: exit %d: %s", code, errOut)
		}
		check(live3, 3)
	}
	if err := srv.Client(t).Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	dump := filepath.Join(srv.Dir, "dump.rdb")
	for _, ext := range []string{"csv", "jsonl"} {
		path := filepath.Join(dir, "rdb."+ext)
		if code, _, errOut := runCLI(t, "", "rdb", "--keys", path, "--format", "json", "--out", filepath.Join(dir, "r.json"), dump); code > 1 {
			t.Fatalf("rdb --keys: exit %d: %s", code, errOut)
		}
		check(path, 0, 3)
	}
	// The live export and the snapshot's agree key by key: a key diff of
	// the two finds nothing added, removed, retyped, grown or shrunk; the
	// one of db 3 alone against the snapshot finds db 0's keys removed.
	code, out, errOut := runCLI(t, "", "diff", filepath.Join(dir, "live.csv"), filepath.Join(dir, "rdb.jsonl"))
	if code != 0 || !strings.Contains(out, "0 added, 0 removed, 0 type, 0 grown, 0 shrunk") {
		t.Errorf("diff live.csv rdb.jsonl: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "", "diff", filepath.Join(dir, "rdb.jsonl"), filepath.Join(dir, "live3.csv"))
	if code != 0 || !strings.Contains(out, "0 added, "+human.Count(int64(n))+" removed, 0 type, 0 grown, 0 shrunk") {
		t.Errorf("diff live.csv rdb.jsonl: exit %d\n%s%s", code, out, errOut)
	}
	// A bad --keys-format is refused before anything runs.
	if code, _, errOut := runCLI(t, "", "rdb", "--keys", "x", "--keys-format", "xml", dump); code != 2 || !strings.Contains(errOut, "csv or jsonl") {
		t.Errorf("--keys-format xml: exit %d: %s", code, errOut)
	}
}

// TestFlagSpellings: --format and --fail-on take any case and the
// documented short forms; a flag whose help states its default does not
// print a second one.
func TestFlagSpellings(t *testing.T) {
	dir := t.TempDir()
	reg := filepath.Join(dir, "keyguard.yaml")
	if code, _, errOut := runCLI(t, "", "init", "--out", reg); code != 0 {
		t.Fatal(errOut)
	}
	for _, args := range [][]string{
		{"lint", "--registry", reg, "--format", "JSON"},
		{"lint", "--registry", reg, "--format", "Text", "--fail-on", "WARN"},
		{"lint", "--registry", reg, "--fail-on", "Warning"},
		{"lint", "--registry", reg, "--fail-on", "none"},
	} {
		if code, _, errOut := runCLI(t, "", args...); code != 0 {
			t.Errorf("%v: exit %d: %s", args, code, errOut)
		}
	}
	code, out, _ := runCLI(t, "", "lint", "--registry", reg, "--format", "JSON")
	if code != 0 || !strings.HasPrefix(strings.TrimSpace(out), "{") && !strings.HasPrefix(strings.TrimSpace(out), "[") {
		t.Errorf("--format JSON wrote no JSON: %q", out)
	}
	if code, _, errOut := runCLI(t, "", "lint", "--registry", reg, "--format", "yaml"); code != 2 || !strings.Contains(errOut, "use one of") {
		t.Errorf("--format yaml: exit %d: %s", code, errOut)
	}
	_, help, _ := runCLI(t, "", "audit", "-h")
	if strings.Contains(help, "(default -1)") || !strings.Contains(help, "(any case)") || !strings.Contains(help, "warn") {
		t.Errorf("audit -h:\n%s", help)
	}
}

// onePlural finds a count of one with a plural noun: "1 keys", "1 errors".
var onePlural = regexp.MustCompile(`(^|[^0-9.,])1 (keys|entries|findings|errors|warnings|templates|groups|values|files|nodes|families|domains|prefixes|masters|rules|bytes|lines|records|changes)\b`)

// TestNoOnePlurals runs the commands that count things over a keyspace of
// one key, one family and one finding, and reads every line they print:
// none may say "1 keys".
func TestNoOnePlurals(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	if err := srv.Client(t).Set(ctx, "legacy:cart:1", strings.Repeat("x", 2<<20), 0).Err(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Chdir(dir)
	reg := filepath.Join(dir, "one.yaml")
	os.WriteFile(reg, []byte("version: 1\ndomains:\n  order: {owner: order-team}\nkeys:\n  - key: \"order:{id:int}\"\n    type: hash\n    ttl: 1h\n    desc: one\n"), 0o644)
	var outputs []string
	runAll := func(args ...string) {
		_, out, errOut := runCLI(t, "", args...)
		outputs = append(outputs, strings.Join(args, " ")+"\n"+out+errOut)
	}
	runAll("audit", "--redis", srv.URL())
	runAll("audit", "--redis", srv.URL(), "--verbose")
	runAll("audit", "--redis", srv.URL(), "--format", "json", "--out", "a.json", "--keys", "k.csv")
	runAll("audit", "--redis", srv.URL(), "--registry", reg, "--verbose")
	runAll("audit", "--redis", srv.URL(), "--registry", reg, "--format", "html")
	runAll("init", "--from-audit", "a.json", "--out", "-")
	runAll("check", "--registry", reg, "legacy:cart:1")
	runAll("check", "--registry", reg, "order:1")
	runAll("lint", "--registry", reg)
	if err := srv.Client(t).Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	dump := filepath.Join(srv.Dir, "dump.rdb")
	runAll("rdb", "--verbose", dump)
	runAll("rdb", "--registry", reg, "--verbose", dump)
	srv.Client(t).Set(ctx, "legacy:cart:2", "y", time.Hour)
	runAll("audit", "--redis", srv.URL(), "--format", "json", "--out", "b.json", "--keys", "k2.csv")
	runAll("diff", "a.json", "b.json")
	runAll("diff", "k.csv", "k2.csv")
	runAll("diff", "k.csv", dump)
	for _, o := range outputs {
		for line := range strings.Lines(o) {
			if onePlural.MatchString(line) {
				t.Errorf("%q\n(from %s)", line, strings.SplitN(o, "\n", 2)[0])
			}
		}
	}
}

// TestTimeoutTooShort: an audit whose --timeout runs out before it could
// connect says that the timeout is the cause, not the network.
func TestTimeoutTooShort(t *testing.T) {
	srv := redistest.Start(t)
	code, _, errOut := runCLI(t, "", "audit", "--redis", srv.URL(), "--timeout", "1ns", "--registry", "testdata/clean.yaml")
	if code != 2 || !strings.Contains(errOut, "--timeout") || strings.Contains(errOut, "firewall") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

// TestInterruptExitCode: a run stopped by Ctrl-C (its context cancelled)
// writes what it has and exits 2, as an interrupted audit does, whatever
// the command.
func TestInterruptExitCode(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	for i := range 50 {
		srv.Client(t).Set(ctx, fmt.Sprintf("order:order:%d:base", i), "x", time.Hour)
	}
	for _, args := range [][]string{
		{"investigate", "--redis", srv.URL(), "--registry", "testdata/clean.yaml", "--key", "order:order:1:base", "--watch", "1m"},
		{"check", "--registry", "testdata/clean.yaml", "-"},
	} {
		cctx, cancel := context.WithCancel(ctx)
		time.AfterFunc(300*time.Millisecond, cancel)
		var out, errb strings.Builder
		pr, pw := io.Pipe() // check - reads stdin until the interrupt
		defer pw.Close()
		e := &env{stdin: pr, stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
		code := run(cctx, args, e)
		cancel()
		if code != 2 || !strings.Contains(errb.String(), "interrupted") {
			t.Errorf("%s interrupted: exit %d\n%s%s", args[0], code, out.String(), errb.String())
		}
		if args[0] == "investigate" && !strings.Contains(out.String(), "order:order:1:base") {
			t.Errorf("investigate interrupted wrote no report:\n%s", out.String())
		}
	}
}

// TestReportDocLinks: the findings of an audit report link their rule
// under the published docs by default, under --docs-url when given, and
// relative to the repository with --docs-url "".
func TestReportDocLinks(t *testing.T) {
	fixture := redistest.RDBFixture(t, "replicator__dumpV8.rdb")
	t.Chdir(t.TempDir())
	for _, tc := range []struct{ flag, prefix string }{
		{"", finding.DefaultDocsBase + "docs/rules.md#"},
		{"--docs-url=https://docs.example.com/kg", "https://docs.example.com/kg/docs/rules.md#"},
		{"--docs-url=", "docs/rules.md#"},
	} {
		for _, format := range []string{"json", "html", "text"} {
			args := []string{"rdb", "--format", format, fixture}
			if tc.flag != "" {
				args = append(args, tc.flag)
			}
			_, out, errOut := runCLI(t, "", args...)
			switch format {
			case "json":
				rep, err := report.ReadReport(strings.NewReader(out))
				if err != nil || len(rep.Findings) == 0 {
					t.Fatalf("%v %s", err, errOut)
				}
				for _, f := range rep.Findings {
					if f.Doc != tc.prefix+finding.Anchor(f.Rule) {
						t.Fatalf("%s: doc %q", tc.flag, f.Doc)
					}
				}
			case "html":
				if !strings.Contains(out, `href="`+tc.prefix+"no-ttl") {
					t.Errorf("%s html: no link %s", tc.flag, tc.prefix+"no-ttl")
				}
			default:
				if !strings.Contains(out, "findings by rule ("+strings.TrimSuffix(tc.prefix, "#")+" explains each)") {
					t.Errorf("%s text:\n%s", tc.flag, out)
				}
			}
		}
	}
}

// TestKeysFileErrors: a --keys file that cannot be written is named as
// --keys, and fails before anything is read.
func TestKeysFileErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ path, want string }{
		{filepath.Join(dir, "nodir", "k.csv"), "cannot write --keys " + filepath.Join(dir, "nodir", "k.csv") + ": the directory"},
		{dir, "--keys " + dir + " is a directory"},
		{"-", "--keys -: the rows would mix with the report"},
	} {
		code, _, errOut := runCLI(t, "", "rdb", "--keys", tc.path, "/nonexistent.rdb")
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("--keys %s: exit %d: %s", tc.path, code, errOut)
		}
	}
}

// TestDiffMixedInputs: a report cannot be diffed against a key export;
// the message names which is which.
func TestDiffMixedInputs(t *testing.T) {
	dir := t.TempDir()
	exp := filepath.Join(dir, "k.csv")
	os.WriteFile(exp, []byte("db,key,key_base64,type,encoding,bytes,elements,ttl_ms,group,kind,owner\n0,a:1,,string,,5,1,-1,a:{id},family,\n"), 0o644)
	rep := filepath.Join(dir, "r.json")
	os.WriteFile(rep, []byte(`{"source":{"kind":"rdb","target":"x","nodes":1},"groups":[],"top_keys":[],"findings":[]}`), 0o644)
	for _, args := range [][]string{{"diff", rep, exp}, {"diff", exp, rep}} {
		code, _, errOut := runCLI(t, "", args...)
		if code != 2 || !strings.Contains(errOut, rep+" is an audit report and "+exp+" is not") {
			t.Errorf("%v: exit %d: %s", args, code, errOut)
		}
	}
	if code, out, errOut := runCLI(t, "", "diff", "--format", "CSV", exp, exp); code != 0 || !strings.HasPrefix(out, "change,db,key") {
		t.Errorf("diff --format CSV: exit %d: %s%s", code, out, errOut)
	}
}
