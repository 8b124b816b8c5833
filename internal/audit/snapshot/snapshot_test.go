package snapshot

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/redistest"
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
	for _, c := range []struct {
		db    int
		match string
		want  int64
	}{
		{-1, "", 6},
		{3, "", 3},
		{-1, "order:*", 4},
		{0, "order:order:1:*", 1},
		{0, "nomatch*", 0},
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
	}
}
