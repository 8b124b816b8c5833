package snapshot

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/audit/inventory"
	"github.com/keyguard/keyguard/internal/rdb"
	"github.com/keyguard/keyguard/internal/redistest"
	"github.com/keyguard/keyguard/internal/valueform"
	"github.com/keyguard/keyguard/registry"
)

// A snapshot with the same key name in database 0 and 3 holds two keys,
// and the report says which database each finding is in.
func TestSnapshotSameKeyInTwoDatabases(t *testing.T) {
	s := redistest.Start(t)
	ctx := context.Background()
	for _, db := range []int{0, 3} {
		c := redis.NewClient(&redis.Options{Addr: s.Addr, DB: db})
		if err := c.Set(ctx, "order:order:1:base", "x", 0).Err(); err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	if err := s.Client(t).Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	reg, err := registry.Parse("r.yaml", []byte("version: 1\ndomains: {order: {owner: o}}\nkeys:\n  - {key: \"order:order:{id:int}:base\", type: hash, ttl: 1h}\n"))
	if err != nil {
		t.Fatal(err)
	}
	ins, err := Open([]string{filepath.Join(s.Dir, "dump.rdb")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer Close(ins)
	res, err := Run(ctx, reg, ins, Options{DB: -1})
	if err != nil {
		t.Fatal(err)
	}
	rep := res.Report
	if rep.Summary.Keys != 2 || len(rep.Databases) != 2 {
		t.Fatalf("%d keys in databases %v, want 2 in [0 3]", rep.Summary.Keys, rep.Databases)
	}
	seen := map[int]bool{}
	for _, f := range rep.Findings {
		if f.Rule == "type-mismatch" && f.DB != nil {
			seen[*f.DB] = true
		}
	}
	if !seen[0] || !seen[3] {
		t.Errorf("type-mismatch findings in databases %v, want 0 and 3: %+v", seen, rep.Findings)
	}
}

// --db and --match keep only the keys of that database matching the glob.
func TestSnapshotDBAndMatch(t *testing.T) {
	s := redistest.Start(t)
	ctx := context.Background()
	for _, db := range []int{0, 3} {
		c := redis.NewClient(&redis.Options{Addr: s.Addr, DB: db})
		for _, k := range []string{"order:order:1:base", "order:order:2:base", "cart:1"} {
			if err := c.Set(ctx, k, "x", 0).Err(); err != nil {
				t.Fatal(err)
			}
		}
		c.Close()
	}
	if err := s.Client(t).Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	reg, err := registry.Parse("r.yaml", []byte("version: 1\ndomains: {order: {owner: o}}\nkeys:\n  - {key: \"order:order:{id:int}:base\", type: hash, ttl: 1h}\n"))
	if err != nil {
		t.Fatal(err)
	}
	// A database the file holds no key of is named, with those it does.
	empty := "only database 5 was audited, of which the snapshot declares no key; its keys are in database 0 (3 keys), 3 (3 keys)"
	for _, c := range []struct {
		db    int
		match string
		want  int64
		note  string
	}{
		{-1, "", 6, ""},
		{3, "", 3, "only database 3 was audited"},
		{-1, "order:*", 4, ""},
		{0, "order:order:1:*", 1, "only database 0 was audited"},
		{0, "nomatch*", 0, "only database 0 was audited"},
		{5, "", 0, empty},
	} {
		ins, err := Open([]string{filepath.Join(s.Dir, "dump.rdb")}, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(ctx, reg, ins, Options{DB: c.db, Match: c.match})
		Close(ins)
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Report.Summary.Keys; got != c.want {
			t.Errorf("db %d, match %q: %d keys, want %d", c.db, c.match, got, c.want)
		}
		notes := strings.Join(res.Report.Notes, "\n")
		if c.note != "" && !strings.Contains(notes, c.note) || c.note != empty && strings.Contains(notes, "declares no key") {
			t.Errorf("db %d, match %q: notes %q, want %q", c.db, c.match, res.Report.Notes, c.note)
		}
	}
}

// An RDB file holding collections without elements (Redis's own test
// file for it): the report leaves them out, as Redis does when it loads
// the file, and its notes count them as the server's log does.
func TestSnapshotEmptyCollections(t *testing.T) {
	path := redistest.RDBFixture(t, "redis__corrupt_empty_keys.rdb")
	s := redistest.Start(t)
	ctx := context.Background()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.Dir, "dump.rdb"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	c := s.Client(t)
	if err := c.Do(ctx, "DEBUG", "RELOAD", "NOSAVE").Err(); err != nil {
		t.Fatal(err)
	}
	held, err := c.DBSize(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`empty keys skipped: (\d+)`).FindStringSubmatch(s.Log())
	if m == nil {
		t.Fatalf("the server's log does not count skipped empty keys:\n%s", s.Log())
	}
	reg, err := registry.Parse("r.yaml", []byte("version: 1\ndomains: {order: {owner: o}}\nkeys: []\n"))
	if err != nil {
		t.Fatal(err)
	}
	ins, err := Open([]string{path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer Close(ins)
	res, err := Run(ctx, reg, ins, Options{DB: -1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Report.Summary.Keys != held {
		t.Errorf("report counts %d keys, the server holds %d", res.Report.Summary.Keys, held)
	}
	want := m[1] + " empty lists, sets, sorted sets or hashes were left out"
	if !slices.ContainsFunc(res.Report.Notes, func(n string) bool { return strings.HasPrefix(n, want) }) {
		t.Errorf("notes %q, want one starting %q", res.Report.Notes, want)
	}
}

// A snapshot with a stream says which memory figure it gives for it; one
// without says nothing about streams.
func TestSnapshotStreamNote(t *testing.T) {
	s := redistest.Start(t)
	ctx := context.Background()
	c := s.Client(t)
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	reg, err := registry.Parse("r.yaml", []byte("version: 1\ndomains: {order: {owner: o}}\nkeys: []\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, withStream := range []bool{false, true} {
		if withStream {
			if err := c.XAdd(ctx, &redis.XAddArgs{Stream: "events", Values: []any{"n", 1}}).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.Save(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		ins, err := Open([]string{filepath.Join(s.Dir, "dump.rdb")}, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(ctx, reg, ins, Options{DB: -1})
		Close(ins)
		if err != nil {
			t.Fatal(err)
		}
		noted := slices.ContainsFunc(res.Report.Notes, func(n string) bool { return strings.HasPrefix(n, "streams are sized as a server holds them") })
		if noted != withStream {
			t.Errorf("stream in the snapshot %v, note about streams %v: %q", withStream, noted, res.Report.Notes)
		}
	}
}

// The coverage block of an RDB report: each file with its databases, the
// keys counted equal to what the server held (DBSIZE) and to what the file
// declares; a truncated copy is complete for nothing and says where it
// stopped.
func TestSnapshotCoverage(t *testing.T) {
	s := redistest.Start(t)
	ctx := context.Background()
	want := map[int]int64{0: 700, 1: 20, 5: 3}
	for db, n := range want {
		c := redis.NewClient(&redis.Options{Addr: s.Addr, DB: db})
		pipe := c.Pipeline()
		for i := range n {
			pipe.Set(ctx, "k:"+strings.Repeat("x", int(i%7))+":"+string(rune('a'+db))+":"+itoa(i), strings.Repeat("v", 100), 0)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if got := c.DBSize(ctx).Val(); got != n {
			t.Fatalf("db %d holds %d keys, want %d", db, got, n)
		}
		c.Close()
	}
	if err := s.Client(t).Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	reg, err := registry.Parse("r.yaml", []byte("version: 1\nkeys: []\n"))
	if err != nil {
		t.Fatal(err)
	}
	dump := filepath.Join(s.Dir, "dump.rdb")
	run := func(path string) *Result {
		ins, err := Open([]string{path}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer Close(ins)
		res, err := Run(ctx, reg, ins, Options{DB: -1})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := run(dump)
	cov := res.Report.Coverage
	if cov == nil || !res.Complete || cov.Share != 1 || len(cov.NotCovered) != 0 || len(cov.Nodes) != 1 || cov.Nodes[0].Role != "snapshot" {
		t.Fatalf("coverage of a whole file: %+v", cov)
	}
	for _, d := range cov.Nodes[0].DBs {
		if d.Counted != want[d.DB] || d.KeysStart != want[d.DB] || !d.Complete {
			t.Errorf("db %d: counted %d, declared %d, complete %v; the server held %d", d.DB, d.Counted, d.KeysStart, d.Complete, want[d.DB])
		}
		delete(want, d.DB)
	}
	if len(want) != 0 {
		t.Errorf("databases missing from the coverage: %v", want)
	}
	nodes, _ := cov.Lines()
	if len(nodes) != 1 || !strings.Contains(nodes[0], "db 0 700 counted (the snapshot declares 700") {
		t.Errorf("coverage lines: %q", nodes)
	}
	// A copy cut in the middle: not complete, and the gap names the file.
	b, err := os.ReadFile(dump)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.rdb")
	if err := os.WriteFile(cut, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	res = run(cut)
	cov = res.Report.Coverage
	if res.Complete || cov == nil || len(cov.NotCovered) != 1 || !strings.Contains(cov.NotCovered[0].String(), "cut.rdb: stopped at byte") || cov.Share <= 0 || cov.Share >= 1 {
		t.Fatalf("coverage of a cut file: %+v", cov)
	}
	for _, d := range cov.Nodes[0].DBs {
		if d.Complete {
			t.Errorf("db %d of a cut file is complete", d.DB)
		}
	}
	// The same bytes from a pipe or a server's diskless snapshot, whose
	// length is not known: the share is the keys counted of those the
	// snapshot declared, not the bytes read of the bytes read.
	res, err = Run(ctx, reg, []*Input{Stream("cut", bytes.NewReader(b[:len(b)/2]), 0, nil)}, Options{DB: -1})
	if err != nil {
		t.Fatal(err)
	}
	cov = res.Report.Coverage
	var counted, declared int64
	for _, d := range cov.Nodes[0].DBs {
		counted, declared = counted+d.Counted, declared+d.KeysStart
	}
	if keys := float64(counted) / float64(declared); res.Complete || len(cov.NotCovered) != 1 || cov.Share > keys+0.01 || cov.Share < keys-0.01 {
		t.Fatalf("coverage of a cut stream: share %.3f, %d of %d keys counted: %+v", cov.Share, counted, declared, cov)
	}
}

func itoa(i int64) string { return strconv.FormatInt(i, 10) }

// batch.add writes a record into a reused slot field by field: a field
// added to inventory.Record must be written there too, or a record
// would carry the previous key's value.
func TestBatchAddWritesEveryField(t *testing.T) {
	names := []string{}
	rt := reflect.TypeOf(inventory.Record{})
	for i := range rt.NumField() {
		names = append(names, rt.Field(i).Name)
	}
	want := "Key DB Node Type Encoding Bytes Elements TTL Freq NS HasNS NSProbed Form Fields Set Weight"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("inventory.Record has the fields %s; batch.add writes %s: write the new ones there, then update this list", got, want)
	}
	// A slot that held another record gets none of it.
	var b batch
	var sets nameSets
	full := inventory.Record{Key: "old", DB: 3, Node: "n", Type: "hash", Encoding: "e", Bytes: 9, Elements: 9, TTL: 9, Freq: 9,
		NS: "x", HasNS: true, NSProbed: true, Fields: []string{"a"}, Set: sets.Of([]string{"a"}), Form: valueform.Text, Weight: 5}
	b.recs = append(b.recs, full)
	b.reset()
	b.add(&rdb.Record{Key: []byte("k"), Type: rdb.TypeList, Freq: -1}, -1, "f.rdb", &sets)
	if got := b.recs[0]; !reflect.DeepEqual(got, inventory.Record{Key: "k", Node: "f.rdb", Type: "list", TTL: -1, Freq: -1}) {
		t.Errorf("record in a reused slot: %+v", got)
	}
}

// TestJSONSetsByPointer holds nameSets.ofJSON, which compares the strings
// of a JSON value's keys by where they lie, to FieldSets.Of on values
// whose keys are the very strings of the last value, copies of them
// (equal bytes elsewhere), and other names of the same lengths.
func TestJSONSetsByPointer(t *testing.T) {
	vocab := []string{"id", "ab", "cd", "name", "nome", "price", "stock", "__ns__", ""}
	rng := rand.New(rand.NewPCG(7, 28))
	var c nameSets
	var last []string
	for step := range 20000 {
		var keys []string
		switch rng.IntN(4) {
		case 0, 1: // the last value's strings, maybe one swapped
			keys = slices.Clone(last)
			if len(keys) > 0 && rng.IntN(2) == 0 {
				keys[rng.IntN(len(keys))] = vocab[rng.IntN(len(vocab))]
			}
		case 2: // copies of them: the same names, elsewhere in memory
			for _, k := range last {
				keys = append(keys, strings.Clone(k))
			}
		default:
			for range rng.IntN(5) {
				keys = append(keys, vocab[rng.IntN(len(vocab))])
			}
		}
		got, want := c.ofJSON(keys), c.Of(keys)
		if got != want {
			t.Fatalf("step %d: ofJSON(%q) gave another set than Of", step, keys)
		}
		last = keys
	}
}
