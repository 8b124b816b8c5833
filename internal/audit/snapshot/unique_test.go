package snapshot

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/keyguard/keyguard/internal/audit/inventory"
	"github.com/keyguard/keyguard/internal/redistest"
	"github.com/keyguard/keyguard/registry"
)

// TestTopKeysOfSharedFiles: one RDB file promises its lists unique keys
// (inventory.Options.UniqueKeys), several files do not: two snapshots of
// one server, taken before and after a third of its keys grew, shrank or
// were deleted and new ones were written, share most keys. Read together
// at 1 and 2 cores, each key is a top key once, at its larger size of the
// two files, and no key left out is larger than one listed. Each file
// alone lists each of its keys once, at its size.
func TestTopKeysOfSharedFiles(t *testing.T) {
	s := redistest.Start(t)
	ctx := context.Background()
	c := s.Client(t)
	keys := 3000
	if testing.Short() {
		keys = 1500
	}
	write := func(from, to, fields int, pick func(i int) bool) {
		p := c.Pipeline()
		for i := from; i < to; i++ {
			if !pick(i) {
				continue
			}
			db := i % 2
			name := fmt.Sprintf("order:order:%d:base", i)
			p.Do(ctx, "SELECT", db)
			p.Del(ctx, name)
			n := 1 + (i*7)%fields
			vals := make([]any, 0, 2*n)
			for f := range n {
				vals = append(vals, fmt.Sprintf("f%d", f), "v")
			}
			p.HSet(ctx, name, vals...)
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	save := func(name string) string {
		if err := c.Save(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(s.Dir, "dump.rdb"))
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	write(0, keys, 12, func(int) bool { return true })
	first := save("first.rdb")
	write(0, keys, 30, func(i int) bool { return i%3 == 0 })     // other sizes, larger and smaller
	write(keys, keys+keys/3, 12, func(int) bool { return true }) // new keys
	p := c.Pipeline()
	for i := 1; i < keys; i += 6 {
		p.Do(ctx, "SELECT", i%2)
		p.Del(ctx, fmt.Sprintf("order:order:%d:base", i))
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	second := save("second.rdb")

	reg, err := registry.Parse("r.yaml", []byte("version: 1\ndomains: {order: {owner: o}}\nkeys:\n  - {key: \"order:order:{id:int}:base\", type: hash, ttl: 1h}\n"))
	if err != nil {
		t.Fatal(err)
	}
	type id struct {
		key string
		db  int
	}
	run := func(top, procs int, files ...string) map[id]int64 {
		t.Helper()
		ins, err := Open(files, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer Close(ins)
		res, err := Run(ctx, reg, ins, Options{DB: -1, Procs: procs, Inventory: inventory.Options{TopKeys: top}})
		if err != nil {
			t.Fatal(err)
		}
		got := map[id]int64{}
		for _, k := range res.Report.TopKeys {
			x := id{k.Key, 0}
			if k.DB != nil {
				x.db = *k.DB
			}
			if _, ok := got[x]; ok {
				t.Errorf("%v at %d cores: top key %q of database %d listed twice", files, procs, x.key, x.db)
			}
			got[x] = k.Bytes
		}
		return got
	}
	// Each file alone, its every key listed: their sizes.
	best := map[id]int64{}
	for _, f := range []string{first, second} {
		for _, procs := range []int{1, 2} {
			all := run(10*keys, procs, f)
			if len(all) < keys*2/3 {
				t.Fatalf("%s: %d top keys, want every key (%d or more)", f, len(all), keys*2/3)
			}
			for k, b := range all {
				best[k] = max(best[k], b)
			}
		}
	}
	const top = 500
	for _, procs := range []int{1, 2} {
		got := run(top, procs, first, second)
		if len(got) != top {
			t.Fatalf("both files at %d cores: %d top keys, want %d", procs, len(got), top)
		}
		least := int64(-1)
		for k, b := range got {
			if b != best[k] {
				t.Errorf("both files at %d cores: top key %q of database %d at %d bytes, want its larger size %d", procs, k.key, k.db, b, best[k])
			}
			if least < 0 || b < least {
				least = b
			}
		}
		for k, b := range best {
			if _, ok := got[k]; !ok && b > least {
				t.Errorf("both files at %d cores: %q of database %d (%d bytes) left out, smaller keys listed (%d bytes)", procs, k.key, k.db, b, least)
			}
		}
	}
}
