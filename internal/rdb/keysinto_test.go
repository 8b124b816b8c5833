package rdb

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/keyguard/keyguard/internal/jsonkeys"
)

// checkKeysInto decodes data twice, the second time with the keys
// appended to a buffer of the caller's (KeysInto) that is kept, cut back,
// replaced by a small one or by nil between records, as a batch is, and
// JSON values handed over (Options.JSONRaw, at one of three bounds) for
// jsonkeys.Top to read: both give the same records and end the same way,
// and every key kept in the buffer still holds its bytes at the end.
func checkKeysInto(t *testing.T, name string, data []byte, opts Options, r *rand.Rand) {
	t.Helper()
	want := NewDecoder(bytes.NewReader(data), opts)
	gopts := opts
	gopts.JSONRaw = []int{0, 16, 1 << 20}[r.IntN(3)]
	got := NewDecoder(bytes.NewReader(data), gopts)
	var buf []byte
	got.KeysInto(&buf)
	type kept struct {
		key  []byte // in buf, or a buffer it replaced
		want string
	}
	var keys []kept
	for n := 0; n < 200000; n++ {
		switch r.IntN(8) {
		case 0:
			buf = buf[:r.IntN(len(buf)+1)] // a record left out: its key is cut off
			keys = keys[:0]                // (the bytes past the cut may be written again)
		case 1:
			buf, keys = nil, keys[:0]
		case 2:
			buf = make([]byte, 0, r.IntN(4)) // a new batch: the old keys stay where they are
		}
		wr, werr := want.Next()
		gr, gerr := got.Next()
		if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
			t.Fatalf("%s: record %d: error %v, without KeysInto %v", name, n, gerr, werr)
		}
		if werr != nil {
			break
		}
		if gr.JSON != nil {
			if opts.JSONKeys == 0 || len(gr.JSON) > gopts.JSONRaw || len(gr.JSONKeys) > 0 {
				t.Fatalf("%s: record %d: JSON handed over with JSONKeys %d, JSONRaw %d: %q, keys %q", name, n, opts.JSONKeys, gopts.JSONRaw, gr.JSON, gr.JSONKeys)
			}
			gr.JSONKeys, gr.JSON = jsonkeys.Top(nil, gr.JSON, opts.JSONKeys, nil), nil
		}
		if printRec(gr) != printRec(wr) {
			t.Fatalf("%s: record %d\n got %s\nwant %s", name, n, printRec(gr), printRec(wr))
		}
		if len(gr.Key) > 0 && &buf[len(buf)-len(gr.Key)] != &gr.Key[0] {
			t.Fatalf("%s: record %d: the key is not at the end of the caller's buffer", name, n)
		}
		keys = append(keys, kept{gr.Key, string(wr.Key)})
	}
	for i, k := range keys {
		if string(k.key) != k.want {
			t.Fatalf("%s: key %d kept as %q, was %q", name, i, k.key, k.want)
		}
	}
}

// TestKeysInto runs checkKeysInto over every byte fixture, damaged ones
// included, the testdata files, the real RDB files and cut copies of
// them.
func TestKeysInto(t *testing.T) {
	files := everyFile(t)
	r := rand.New(rand.NewPCG(5, 28))
	for name, data := range files {
		for i, opts := range []Options{cmdOpts, fixtureOpts, {MaxBlobBytes: 16}} {
			if testing.Short() && len(data) > 64<<10 && i > 0 {
				break // -short: the large files once
			}
			checkKeysInto(t, name, data, opts, r)
			if len(data) > 8 {
				cut := 1 + r.IntN(len(data)-1)
				checkKeysInto(t, name+" cut", data[:cut], opts, r)
			}
		}
	}
}

func FuzzKeysInto(f *testing.F) {
	for _, data := range corpus(f) {
		f.Add(data, uint64(1))
	}
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		opts := Options{FieldSample: 8, WatchFields: []string{"__ns__"}, JSONKeys: 4, ValueLimit: 4096, MaxBlobBytes: 1 << 20}
		if seed%3 == 0 {
			opts.MaxBlobBytes = 16 // long keys read as a prefix
		}
		checkKeysInto(t, "input", data, opts, rand.New(rand.NewPCG(seed, 1)))
	})
}
