package snapshot

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// TestListsOfFileRepeatingKeys: a file promises its lists each key once
// (one RDB file), but a damaged one, or one Redis did not write, may
// repeat a key. The file here is a real server's save with five of its
// largest and hottest keys renamed, byte for byte, to the name of the
// next one down, so that each of those names is in the file twice. At 1
// and 2 cores, the top and hot lists name each key once, at its larger
// record, rank the keys as the file does, and a note says the file
// repeats keys; the groups still count every record.
func TestListsOfFileRepeatingKeys(t *testing.T) {
	s := redistest.Start(t, "maxmemory-policy allkeys-lfu", "lfu-log-factor 0", "rdbcompression no")
	ctx := context.Background()
	c := s.Client(t)
	const keys = 2000
	name := func(i int) string { return fmt.Sprintf("blob:%04d", i) }
	// The 24 largest keys grow by 30% each, so that no two share an
	// allocator's size class: their sizes in the report differ too.
	const large = 24
	p := c.Pipeline()
	size := 200.0
	for i := range keys {
		n := 20 + i%50
		if i >= keys-large {
			n, size = int(size), size*1.3
		}
		p.Set(ctx, name(i), strings.Repeat("v", n), 0)
	}
	for i := keys - 40; i < keys; i++ {
		for range 40 + i - (keys - 40) { // hotter with i, past the floor of 32
			p.Get(ctx, name(i))
		}
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(s.Dir, "dump.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	// blob:1999 becomes a second blob:1998, blob:1997 a second blob:1996…
	repeated := 0
	for i := keys - 1; i > keys-11; i -= 2 {
		from, to := []byte(name(i)), []byte(name(i-1))
		if bytes.Count(data, from) != 1 {
			t.Fatalf("%s is not in the file once", from)
		}
		at := bytes.Index(data, from)
		copy(data[at:], to)
		repeated++
	}
	clear(data[len(data)-8:]) // a checksum of 0: not checked
	path := filepath.Join(t.TempDir(), "repeats.rdb")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	// The ranking the lists must follow: each name once, by its larger
	// record, which is the later (larger, hotter) key of each pair.
	var want []string
	for i := keys - 1; i >= 0; i-- {
		if i >= keys-10 && i%2 == 1 {
			continue // renamed: its record is the next name's larger one
		}
		want = append(want, name(i))
	}
	reg, err := registry.Parse("r.yaml", []byte("version: 1\ndomains: {blob: {owner: o}}\nkeys:\n  - {key: \"blob:{id:int}\", type: string, ttl: 1h}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, procs := range []int{1, 2} {
		for _, top := range []int{8, large - 2*repeated} {
			ins, err := Open([]string{path}, nil)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Run(ctx, reg, ins, Options{DB: -1, Procs: procs, Inventory: inventory.Options{TopKeys: top, HotKeys: top}})
			Close(ins)
			if err != nil {
				t.Fatal(err)
			}
			rep := res.Report
			where := fmt.Sprintf("%d cores, top %d", procs, top)
			if rep.Summary.Keys != keys {
				t.Errorf("%s: %d keys counted, want every record (%d)", where, rep.Summary.Keys, keys)
			}
			var got []string
			var sizes []int64
			for _, k := range rep.TopKeys {
				got = append(got, k.Key)
				sizes = append(sizes, k.Bytes)
			}
			// The list is the ranking's head: no name twice, none skipped.
			// The two records of a name may both have been kept where
			// another key would have been (the list looks for repeats once,
			// when it is read): shorter than asked by at most the names
			// repeated. (Top 8 lists the first 4.)
			if len(got) < top-repeated || !slices.Equal(got, want[:len(got)]) {
				t.Errorf("%s: top keys %v, want the head of %v (at least %d)", where, got, want[:top], top-repeated)
			}
			if !slices.IsSortedFunc(sizes, func(a, b int64) int { return int(b - a) }) {
				t.Errorf("%s: top keys not largest first: %v", where, sizes)
			}
			var hot []string
			for _, f := range rep.Findings {
				if f.Rule == "hot-key" {
					hot = append(hot, f.Key)
				}
			}
			slices.Sort(hot)
			if len(hot) != len(slices.Compact(slices.Clone(hot))) {
				t.Errorf("%s: a hot key listed twice: %v", where, hot)
			}
			note := slices.ContainsFunc(rep.Notes, func(n string) bool { return strings.Contains(n, "more than once in the file") })
			if !note {
				t.Errorf("%s: no note of the repeated keys: %q", where, rep.Notes)
			}
		}
	}
}
