package rdb

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/keyguard/keyguard/internal/redistest"
)

// A file of Redis 7.2 or later (RDB 11+) is sized as that server holds
// it: a set of at most 128 members of at most 64 bytes, not all integers,
// is a listpack there (set-max-listpack-entries, -value), so a plain set
// in such a file is sized as the listpack set Redis 7.2 itself writes for
// the same members; in a file of RDB 10 (Redis 7.0, no set listpacks) it
// stays a hashtable, and past either limit it is one in both.
func TestSetListpackByVersion(t *testing.T) {
	members := func(n, size int) []string {
		var out []string
		for i := range n {
			m := fmt.Sprintf("m%d-", i)
			out = append(out, m+strings.Repeat("x", max(0, size-len(m))))
		}
		return out
	}
	file := func(ver int, listpack bool, ms []string) *Record {
		w := newRDB(ver)
		w.selectDB(0)
		if listpack {
			w.key(tSetListpack, "s")
			var elems []any
			for _, m := range ms {
				elems = append(elems, m)
			}
			w.bytesStr(lpBuild(elems...))
		} else {
			w.key(tSet, "s")
			w.length(uint64(len(ms)))
			for _, m := range ms {
				w.str(m)
			}
		}
		recs, _, err := decodeAll(t, w.finish(true), Options{})
		if err != nil || len(recs) != 1 {
			t.Fatalf("v%d: %d records, %v", ver, len(recs), err)
		}
		return recs[0]
	}
	for _, c := range []struct {
		n, size int
		fits    bool
	}{{3, 10, true}, {128, 64, true}, {129, 10, false}, {20, 65, false}} {
		ms := members(c.n, c.size)
		v11, v10 := file(11, false, ms), file(10, false, ms)
		hashtable := int64(sizeRobj + sizeDict + 8*dictSlots(int64(c.n)) + keyOverhead(1))
		for _, m := range ms {
			hashtable += sizeDictEntry + sdsAlloc(int64(len(m)))
		}
		if v10.MemoryEstimate != hashtable {
			t.Errorf("%d members of %d bytes, RDB 10: %d bytes, want the hashtable's %d", c.n, c.size, v10.MemoryEstimate, hashtable)
		}
		switch {
		case c.fits:
			if lp := file(11, true, ms); v11.MemoryEstimate != lp.MemoryEstimate || v11.MemoryEstimate >= hashtable {
				t.Errorf("%d members of %d bytes, RDB 11: %d bytes, want the listpack set's %d (hashtable %d)", c.n, c.size, v11.MemoryEstimate, lp.MemoryEstimate, hashtable)
			}
		case v11.MemoryEstimate != hashtable:
			t.Errorf("%d members of %d bytes, RDB 11: %d bytes, want the hashtable's %d", c.n, c.size, v11.MemoryEstimate, hashtable)
		}
	}
	// Integers stay an intset on every version.
	ints := []string{"1", "2", "300"}
	if a, b := file(11, false, ints), file(10, false, ints); a.MemoryEstimate != b.MemoryEstimate || a.MemoryEstimate != sizeRobj+jeSize(intsetHeaderSize+2*3)+keyOverhead(1) {
		t.Errorf("intset: RDB 11 %d bytes, RDB 10 %d", a.MemoryEstimate, b.MemoryEstimate)
	}
}

// The report says whose MEMORY USAGE the sizes follow and how the file's
// writer differs, from the real files and from the aux fields of the
// servers the fixtures lack.
func TestSizedAs(t *testing.T) {
	for _, c := range []struct {
		file, model, differs string
	}{
		{"rdbtools__redis_50_with_streams.rdb", "Redis 7.0", ""},
		{"hdt__cases_expiration.rdb", "Redis 7.2", ""},                        // Redis 7.2.5
		{"hdt__cases_hash_with_hfe.rdb", "Redis 7.2", ""},                     // Redis 7.4.5
		{"replicator__dump-ttlhash.rdb", "Redis 7.2", ""},                     // Redis 8.0.2
		{"valkey__zset-ziplist.rdb", "Redis 7.0", ""},                         // a development build, RDB 10
		{"hdt__cases_valkey_hash2_with_hfe.rdb", "Redis 7.2", "Valkey 9.0.1"}, // VALKEY080
	} {
		data, err := os.ReadFile(redistest.RDBFixture(t, c.file))
		if err != nil {
			t.Fatal(err)
		}
		_, m, _ := decodeAll(t, data, Options{})
		model, differs := m.SizedAs()
		if model != c.model || (c.differs == "") != (differs == "") || !strings.Contains(differs, c.differs) {
			t.Errorf("%s: sized as %s, %q; want %s, %q", c.file, model, differs, c.model, c.differs)
		}
	}
	for _, c := range []struct {
		aux, ver string
		differs  string
	}{
		{"valkey-ver", "7.2.5", ""},
		{"valkey-ver", "8.0.2", "in its dict entry"},
		{"valkey-ver", "8.1.1", "without a dict entry per key"},
		{"redis-ver", "8.0.2", ""},
		{"redis-ver", "8.2.1", "kvobj"},
		{"redis-ver", "255.255.255", ""},
	} {
		w := newRDB(11)
		w.aux(c.aux, c.ver)
		w.key(tString, "k")
		w.str("v")
		_, m, err := decodeAll(t, w.finish(true), Options{})
		if err != nil {
			t.Fatal(err)
		}
		model, differs := m.SizedAs()
		if model != "Redis 7.2" || (c.differs == "") != (differs == "") || !strings.Contains(differs, c.differs) {
			t.Errorf("%s %s: sized as %s, %q; want %q", c.aux, c.ver, model, differs, c.differs)
		}
		if note := m.SizingNote("f.rdb"); (note == "") != (differs == "") || note != "" && !strings.HasPrefix(note, "f.rdb: memory is MEMORY USAGE as Redis 7.2 holds") {
			t.Errorf("%s %s: note %q", c.aux, c.ver, note)
		}
	}
}
