package rdb

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/keyguard/keyguard/internal/redistest"
)

// hfeField is a hash field with its expiry in Unix ms (0: none).
type hfeField struct {
	name, value string
	exp         int64
}

// hfeFile writes hashes with field TTLs in one encoding — HASH_METADATA
// (Redis 7.4: the minimum expiry, then each TTL as expiry-min+1 before
// its field), HASH_LISTPACK_EX (the minimum, then a listpack of field,
// value, expiry triplets) or Valkey 9's HASH_2 (each value followed by
// its expiry in ms, -1 = none) — in a file written at ctime (seconds).
func hfeFile(enc string, ctime int64, hashes map[string][]hfeField) []byte {
	var w *rdbWriter
	if enc == "valkey" {
		w = &rdbWriter{b: []byte("VALKEY080"), ver: 80}
		w.aux("valkey-ver", "9.0.1")
	} else {
		w = newRDB(12)
		w.aux("redis-ver", "7.4.5")
	}
	w.aux("ctime", strconv.FormatInt(ctime, 10))
	w.selectDB(0)
	names := make([]string, 0, len(hashes))
	for k := range hashes {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		fs := hashes[k]
		minExp := int64(math.MaxInt64)
		for _, f := range fs {
			if f.exp != 0 {
				minExp = min(minExp, f.exp)
			}
		}
		if minExp == math.MaxInt64 {
			minExp = 0
		}
		switch enc {
		case "metadata":
			w.key(tHashMetadata, k)
			w.u64le(uint64(minExp))
			w.length(uint64(len(fs)))
			for _, f := range fs {
				if f.exp == 0 {
					w.length(0)
				} else {
					w.length(uint64(f.exp - minExp + 1))
				}
				w.str(f.name)
				w.str(f.value)
			}
		case "listpackex":
			w.key(tHashListpackEx, k)
			w.u64le(uint64(minExp))
			var elems []any
			for _, f := range fs {
				elems = append(elems, f.name, f.value, f.exp)
			}
			w.bytesStr(lpBuild(elems...))
		case "valkey":
			w.key(tHashMetadataPreGA, k)
			w.length(uint64(len(fs)))
			for _, f := range fs {
				w.str(f.name)
				w.str(f.value)
				if f.exp == 0 {
					w.u64le(math.MaxUint64)
				} else {
					w.u64le(uint64(f.exp))
				}
			}
		}
	}
	return w.finish(true)
}

// Hash fields whose expiry had passed when the file was written are left
// out, as Redis leaves them out on load: a file holding them decodes to
// the records of the same file without them (elements, field TTLs,
// memory, sampled names, values), and a hash all of whose fields had
// expired is skipped and counted, in each encoding that carries field
// expiries. Options.KeepExpiredFields keeps them.
func TestExpiredHashFields(t *testing.T) {
	const ctime = 1_750_000_000 // seconds
	now := int64(ctime) * 1000
	past, later := now-60_000, now+3_600_000
	with := map[string][]hfeField{
		"mixed": {{"a", "1", 0}, {"b", "gone", past}, {"c", "3", later}, {"d", "old", past - 1}, {"__ns__", "promo", 0}},
		"gone":  {{"x", "1", past}, {"y", "2", past - 5}},
		"kept":  {{"p", "1", later}, {"q", "2", 0}},
	}
	without := map[string][]hfeField{
		"mixed": {{"a", "1", 0}, {"c", "3", later}, {"__ns__", "promo", 0}},
		"kept":  {{"p", "1", later}, {"q", "2", 0}},
	}
	opts := Options{ValueLimit: 1 << 20, FieldSample: 8, WatchFields: []string{"__ns__"}}
	for _, enc := range []string{"metadata", "listpackex", "valkey"} {
		got, meta, err := decodeAll(t, hfeFile(enc, ctime, with), opts)
		if err != nil {
			t.Fatalf("%s: %v", enc, err)
		}
		ref, _, err := decodeAll(t, hfeFile(enc, ctime, without), opts)
		if err != nil {
			t.Fatalf("%s: %v", enc, err)
		}
		if len(got) != len(ref) {
			t.Fatalf("%s: %d keys, want %d (the hash whose fields all expired skipped)", enc, len(got), len(ref))
		}
		for i, r := range got {
			w := ref[i]
			if string(r.Key) != string(w.Key) || r.Elements != w.Elements || r.FieldTTLs != w.FieldTTLs || r.MemoryEstimate != w.MemoryEstimate {
				t.Errorf("%s: %q: %d elements, %d TTLs, %d bytes; without the expired fields %q: %d, %d, %d", enc, r.Key, r.Elements, r.FieldTTLs, r.MemoryEstimate,
					w.Key, w.Elements, w.FieldTTLs, w.MemoryEstimate)
			}
			if !slices.EqualFunc(r.Fields, w.Fields, bytes.Equal) || len(r.Watched) != len(w.Watched) {
				t.Errorf("%s: %q: fields %q watched %v, want %q %v", enc, r.Key, r.Fields, r.Watched, w.Fields, w.Watched)
			}
			if len(r.Value.Elems) != len(w.Value.Elems) {
				t.Errorf("%s: %q: %d values, want %d", enc, r.Key, len(r.Value.Elems), len(w.Value.Elems))
			}
		}
		mixed := got[1] // gone, kept, mixed: gone is skipped
		if string(mixed.Key) != "mixed" || mixed.FieldsExpired != 2 || meta.HashesExpired != 1 || meta.FieldsExpired != 4 || meta.EmptySkipped != 0 {
			t.Errorf("%s: %d fields of %q expired; file: %d hashes, %d fields expired, %d empty", enc, mixed.FieldsExpired, mixed.Key, meta.HashesExpired, meta.FieldsExpired, meta.EmptySkipped)
		}
		keep := opts
		keep.KeepExpiredFields = true
		all, meta, err := decodeAll(t, hfeFile(enc, ctime, with), keep)
		if err != nil || len(all) != 3 || all[1].Elements != 2 || all[2].Elements != 5 || meta.HashesExpired != 0 || meta.FieldsExpired != 0 {
			t.Errorf("%s: KeepExpiredFields: %d keys, meta %+v, err %v", enc, len(all), meta, err)
		}
	}
}

// The real file of Redis 8.0 with field TTLs holds none expired at its
// ctime; written a little over two days later (its ctime moved on, the
// checksum then off), the fields expired by then are left out, as the
// format says, and the rest decodes as before.
func TestExpiredHashFieldsRealFile(t *testing.T) {
	data, err := os.ReadFile(redistest.RDBFixture(t, "replicator__dump-ttlhash.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{ValueLimit: 1 << 20, SkipChecksum: true}
	base, meta, err := decodeAll(t, data, opts)
	if err != nil {
		t.Fatal(err)
	}
	if meta.FieldsExpired != 0 {
		t.Fatalf("%d fields expired at the file's own ctime", meta.FieldsExpired)
	}
	ctime, _ := meta.Created()
	// Redis writes ctime as an integer-encoded string: 0xC2 and 32 bits
	// LE after the aux field's name.
	at := bytes.Index(data, []byte("\x05ctime\xc2"))
	if at < 0 {
		t.Fatal("no integer ctime aux field in the file")
	}
	moved := slices.Clone(data)
	binary.LittleEndian.PutUint32(moved[at+7:], uint32(ctime.Unix()+200_000))
	cut := (ctime.Unix() + 200_000) * 1000
	later, meta, err := decodeAll(t, moved, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(later) != len(base) {
		t.Fatalf("%d keys, before %d", len(later), len(base))
	}
	var gone int64
	for i, r := range later {
		b := base[i]
		var expired, ttls int64
		for _, e := range b.Value.Elems {
			switch {
			case e.ExpireAt != 0 && e.ExpireAt < cut:
				expired++
			case e.ExpireAt != 0:
				ttls++
			}
		}
		gone += expired
		if r.FieldsExpired != expired || r.Elements != b.Elements-expired || r.FieldTTLs != ttls || int64(len(r.Value.Elems)) != r.Elements {
			t.Errorf("%q: %d expired, %d elements, %d TTLs; want %d, %d, %d", r.Key, r.FieldsExpired, r.Elements, r.FieldTTLs, expired, b.Elements-expired, ttls)
		}
		// A listpack shrinks by the expired entries' bytes, which may stay
		// in its allocation's size class; a hashtable frees each field.
		if expired > 0 && (r.MemoryEstimate > b.MemoryEstimate || r.Encoding == EncHashtable && r.MemoryEstimate >= b.MemoryEstimate) {
			t.Errorf("%q: %d bytes with %d fields gone, %d before", r.Key, r.MemoryEstimate, expired, b.MemoryEstimate)
		}
	}
	if gone < 5 || meta.FieldsExpired != gone {
		t.Errorf("%d fields expired (meta %d): the moved ctime does not test it", gone, meta.FieldsExpired)
	}
}
