package rdb

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// corpus returns the committed RDB files and every byte fixture that
// decodes cleanly.
func corpus(t testing.TB) map[string][]byte {
	files, err := filepath.Glob(filepath.Join("testdata", "*.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(f)] = b
	}
	for _, f := range fixtures() {
		if f.errIs == nil {
			out["fixture:"+f.name] = f.build()
		}
	}
	return out
}

func TestTestdataFile(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "redis70.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	recs, meta, err := decodeAll(t, data, fixtureOpts)
	if err != nil {
		t.Fatal(err)
	}
	// The fixture was written by Redis 7.0 under allkeys-lfu (see
	// TestWriteTestdata): every encoding that server has, freq on every key.
	encs := map[string]bool{}
	for _, r := range recs {
		encs[string(r.Type)+"/"+r.Encoding] = true
		if r.Freq < 0 {
			t.Errorf("%q: no LFU freq", r.Key)
		}
	}
	for _, e := range []string{"string/int", "string/embstr", "string/raw", "list/quicklist", "set/intset",
		"set/hashtable", "zset/listpack", "zset/skiplist", "hash/listpack", "hash/hashtable", "stream/stream"} {
		if !encs[e] {
			t.Errorf("testdata/redis70.rdb has no %s key", e)
		}
	}
	if meta.Version != 10 || !meta.ChecksumVerified || len(meta.Resize) != 3 {
		t.Errorf("meta: %+v", meta)
	}
}

// TestTruncated cuts every file at every length: each prefix ends in an
// error wrapping io.ErrUnexpectedEOF, after returning exactly the records
// that lie entirely before the cut.
func TestTruncated(t *testing.T) {
	for name, data := range corpus(t) {
		t.Run(name, func(t *testing.T) {
			d := NewDecoder(bytes.NewReader(data), fixtureOpts)
			var keys []string
			var ends []int64
			for {
				r, err := d.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				keys = append(keys, string(r.Key))
				ends = append(ends, d.Offset())
			}
			for n := 0; n < len(data); n++ {
				recs, _, err := decodeAll(t, data[:n], fixtureOpts)
				if !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("prefix %d of %d: error %v, want unexpected EOF", n, len(data), err)
				}
				want := 0
				for want < len(ends) && ends[want] <= int64(n) {
					want++
				}
				if len(recs) != want {
					t.Fatalf("prefix %d: %d records, want %d", n, len(recs), want)
				}
				for i, r := range recs {
					if string(r.Key) != keys[i] {
						t.Fatalf("prefix %d: record %d is %q, want %q", n, i, r.Key, keys[i])
					}
				}
				var fe *FormatError
				if errors.As(err, &fe) && (fe.Offset < 0 || fe.Offset > int64(n)) {
					t.Fatalf("prefix %d: error offset %d", n, fe.Offset)
				}
			}
		})
	}
}

// TestBogusLengths: lengths far beyond the input never turn into big
// allocations; they end in an error once the input runs out.
func TestBogusLengths(t *testing.T) {
	const huge = 1 << 39
	cases := map[string]func(w *rdbWriter){
		"key": func(w *rdbWriter) { w.byte(tString); w.length(huge) },
		"string": func(w *rdbWriter) {
			w.key(tString, "k")
			w.length(huge)
		},
		"lzf": func(w *rdbWriter) {
			w.key(tString, "k")
			w.byte(0xC3)
			w.length(10)
			w.length(huge)
		},
		"lzf-clen": func(w *rdbWriter) {
			w.key(tString, "k")
			w.byte(0xC3)
			w.length(huge)
			w.length(10)
		},
		"listpack": func(w *rdbWriter) {
			w.key(tHashListpack, "k")
			w.length(huge)
		},
		"set-count": func(w *rdbWriter) {
			w.key(tSet, "k")
			w.length(1 << 60)
			w.str("a")
		},
		"aux": func(w *rdbWriter) { w.byte(opAux); w.length(huge) },
		"stream-pel": func(w *rdbWriter) {
			w.key(tStreamListpacks, "k")
			w.length(0)
			w.length(0)
			w.length(0)
			w.length(0)
			w.length(1)
			w.str("g")
			w.length(0)
			w.length(0)
			w.length(1 << 60)
		},
	}
	for name, build := range cases {
		t.Run(name, func(t *testing.T) {
			w := newRDB(10)
			build(w)
			w.raw(bytes.Repeat([]byte{'x'}, 1000))
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, _, err := decodeAll(t, w.b, fixtureOpts)
			runtime.ReadMemStats(&after)
			if err == nil {
				t.Fatal("no error")
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 8<<20 {
				t.Fatalf("allocated %d bytes for a %d-byte input", grew, len(w.b))
			}
		})
	}
}

// TestPartial: values and keys over MaxBlobBytes are counted from their
// headers and cut, not buffered.
func TestPartial(t *testing.T) {
	var members []any
	for i := range 50 {
		members = append(members, strings.Repeat("m", 10)+strconv.Itoa(i))
	}
	w := newRDB(10)
	w.key(tSetListpack, "raw")
	w.bytesStr(lpBuild(members...))
	w.key(tSetListpack, "lzf")
	w.lzfStr(lpBuild(members...))
	w.key(tSetIntset, "ints")
	w.bytesStr(intsetBuild(2, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48))
	long := strings.Repeat("k", 500)
	w.key(tString, long)
	w.str("v")
	recs, _, err := decodeAll(t, w.finish(true), Options{MaxBlobBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs[:3] {
		if !r.Partial || r.Elements != int64(len(members)) && r.Elements != 48 || r.MemoryEstimate <= 100 {
			t.Errorf("%q: partial %v elements %d memory %d", r.Key, r.Partial, r.Elements, r.MemoryEstimate)
		}
	}
	if k := recs[3]; len(k.Key) != 100 || k.KeyLen != 500 || string(k.Key) != long[:100] {
		t.Errorf("long key: %d bytes kept, KeyLen %d", len(k.Key), k.KeyLen)
	}
}

func TestRaxCounter(t *testing.T) {
	id := func(ms, seq uint64) []byte {
		b := make([]byte, 16)
		for i := range 8 {
			b[i] = byte(ms >> (56 - 8*i))
			b[8+i] = byte(seq >> (56 - 8*i))
		}
		return b
	}
	var r raxCounter
	if r.total() != 1 {
		t.Fatalf("empty: %d", r.total())
	}
	r.add(id(1000, 0))
	if r.total() != 2 { // compressed node + leaf
		t.Fatalf("one key: %d", r.total())
	}
	r.add(id(1000, 1))
	// Keys differ in the last byte: compressed prefix, branch, two leaves.
	if r.total() != 4 {
		t.Fatalf("two keys, last byte differs: %d", r.total())
	}
	var s raxCounter
	s.add(id(1, 0))
	s.add(id(2, 0))
	// Differ at byte 7: prefix, branch, two compressed tails, two leaves
	// (6 nodes, as measured on Redis 7.0 for a 2-entry PEL).
	if s.total() != 6 {
		t.Fatalf("two keys, byte 7 differs: %d", s.total())
	}
}

func FuzzDecode(f *testing.F) {
	for _, data := range corpus(f) {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		opts := Options{FieldSample: 8, WatchFields: []string{"__ns__"}, JSONKeys: 4, ValueLimit: 4096, MaxBlobBytes: 1 << 20}
		d := NewDecoder(bytes.NewReader(data), opts)
		for range 100000 {
			r, err := d.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				var fe *FormatError
				if !errors.As(err, &fe) {
					t.Fatalf("error %v (%T) is not a *FormatError", err, err)
				}
				if fe.Error() == "" {
					t.Fatal("empty error text")
				}
				return
			}
			if r.Elements < 0 || r.ValueBytes < 0 || r.MemoryEstimate <= 0 {
				t.Fatalf("record %+v", r)
			}
			if r.emptyCollection() {
				t.Fatalf("an empty collection returned (Redis drops them on load): %+v", r)
			}
		}
	})
}

// TestLook checks Options.Look: a record looked into for names only has
// no watched values, one looked into for watched fields only has no
// names or JSON keys, one not looked into has none of them, and all have
// everything else (type, encoding, counts, sizes, expiry) as a record
// looked into fully; the records around them are unaffected. Over the
// server-written file and every byte fixture, the four ways in turn.
func TestLook(t *testing.T) {
	files := map[string][]byte{}
	data, err := os.ReadFile(filepath.Join("testdata", "redis70.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	files["redis70.rdb"] = data
	for _, fx := range fixtures() {
		files[fx.name] = fx.build()
	}
	ways := []Look{0, LookNames, LookWatched, LookAll}
	dropped := map[Look]int{}
	for name, data := range files {
		// Look is called for every key, empty collections included.
		opts := fixtureOpts
		opts.KeepEmpty = true
		all, _, errAll := decodeAll(t, data, opts)
		var keys []string
		opts.ValueLimit = 0 // collecting values looks at everything
		full, _, _ := decodeAll(t, data, opts)
		opts.Look = func(key []byte) Look {
			keys = append(keys, string(key))
			return ways[(len(keys)-1)%len(ways)]
		}
		some, _, errSome := decodeAll(t, data, opts)
		if (errAll == nil) != (errSome == nil) || len(all) != len(some) || len(full) != len(some) {
			t.Errorf("%s: %d records (%v), with Look %d (%v)", name, len(all), errAll, len(some), errSome)
			continue
		}
		for i, r := range some {
			if keys[i] != string(r.Key) {
				t.Errorf("%s #%d: Look saw %q, record %q", name, i, keys[i], r.Key)
			}
			way := ways[i%len(ways)]
			want := *full[i]
			if way&LookNames == 0 {
				if len(want.Fields)+len(want.JSONKeys) > 0 {
					dropped[LookNames]++
				}
				want.Fields, want.MoreFields, want.JSONKeys, want.Form = nil, false, nil, 0
			}
			if way&LookWatched == 0 {
				if len(want.Watched) > 0 {
					dropped[LookWatched]++
				}
				want.Watched = nil
			}
			if !reflect.DeepEqual(normRecord(*r), normRecord(want)) {
				t.Errorf("%s #%d %q (look %d):\n got %+v\nwant %+v", name, i, r.Key, way, *r, want)
			}
		}
	}
	if dropped[LookNames] < 5 || dropped[LookWatched] < 2 {
		t.Fatalf("too few records lost something by not being looked into: %v", dropped)
	}
	t.Logf("%d files; records that lost names, watched values: %v", len(files), dropped)
}

// normRecord makes empty and nil slices compare equal.
func normRecord(r Record) Record {
	if len(r.Fields) == 0 {
		r.Fields = nil
	}
	if len(r.Watched) == 0 {
		r.Watched = nil
	}
	if len(r.JSONKeys) == 0 {
		r.JSONKeys = nil
	}
	return r
}
