package rdb

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/keyguard/keyguard/internal/redistest"
)

// partRun is what one part's decoder gave.
type partRun struct {
	recs  []*Record
	began int64 // -1: never began
	end   int64 // ErrPartEnd at this offset; -1 otherwise
	err   error // io.EOF, or the error it stopped on (nil with end)
	meta  Meta
	empty int64
}

// decodeParts reads data cut at cuts the way snapshot's decoders do side
// by side, one part after the other (last first: a part reads on past
// its end when the next one never began). It returns the records of the
// whole file and how it ended, as the parts join them: up to the first
// part that stopped on an error, whose error ends the file.
func decodeParts(t testing.TB, data []byte, opts Options, cuts []int64) ([]*Record, error, Meta, int64) {
	t.Helper()
	runs := make([]partRun, len(cuts)+1)
	for i := len(cuts); i >= 0; i-- {
		o := opts
		if i > 0 {
			o.From = cuts[i-1]
		}
		if i < len(cuts) {
			o.Until = cuts[i]
		}
		d := NewDecoder(bytes.NewReader(data), o)
		p := partRun{began: -1, end: -1}
		for n := 0; ; n++ {
			if n > 1_000_000 {
				t.Fatalf("part %d of %v: no end, offset %d, %d records", i, cuts, d.Offset(), len(p.recs))
			}
			r, err := d.Next()
			if at, ok := d.Began(); ok && i > 0 {
				p.began = at
			}
			if err == ErrPartEnd {
				if runs[i+1].began == d.Offset() {
					p.end = d.Offset()
					break
				}
				if runs[i+1].began >= 0 {
					t.Fatalf("part %d ends at %d, part %d began at %d", i, d.Offset(), i+1, runs[i+1].began)
				}
				continue
			}
			if err != nil {
				var fe *FormatError
				if err != io.EOF && !errors.As(err, &fe) {
					t.Fatalf("error %v (%T) is not a *FormatError", err, err)
				}
				p.err = err
				break
			}
			p.recs = append(p.recs, r.Clone())
		}
		p.meta, p.empty = *d.Meta(), d.Meta().EmptySkipped
		runs[i] = p
	}
	var recs []*Record
	var empty int64
	for i, p := range runs {
		if i > 0 && p.began < 0 {
			break
		}
		recs = append(recs, p.recs...)
		empty += p.empty
		if p.end < 0 {
			return recs, p.err, p.meta, empty
		}
	}
	t.Fatal("the last part has an end")
	return nil, nil, Meta{}, 0
}

// checkParts compares the whole-file decode of data with the parts' at
// cuts: the same records, the same end (error text and offset), and the
// same file metadata.
func checkParts(t *testing.T, name string, data []byte, opts Options, cuts []int64) {
	t.Helper()
	d := NewDecoder(bytes.NewReader(data), opts)
	var want []*Record
	var wantErr error
	for {
		r, err := d.Next()
		if err != nil {
			wantErr = err
			break
		}
		want = append(want, r.Clone())
	}
	got, gotErr, meta, empty := decodeParts(t, data, opts, cuts)
	if len(got) != len(want) {
		t.Fatalf("%s cut at %v: %d records, whole file %d", name, cuts, len(got), len(want))
	}
	for i := range got {
		// Printed: empty and nil byte slices deep in a value look alike.
		if !reflect.DeepEqual(normRecord(*got[i]), normRecord(*want[i])) && printRec(got[i]) != printRec(want[i]) {
			t.Fatalf("%s cut at %v: record %d\n got %+v %+v\nwant %+v %+v", name, cuts, i, *got[i], got[i].Value, *want[i], want[i].Value)
		}
	}
	if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
		t.Fatalf("%s cut at %v: ends with %v, whole file with %v", name, cuts, gotErr, wantErr)
	}
	wm := *d.Meta()
	if empty != wm.EmptySkipped {
		t.Fatalf("%s cut at %v: %d empty collections skipped, whole file %d", name, cuts, empty, wm.EmptySkipped)
	}
	if wantErr == io.EOF {
		meta.EmptySkipped = wm.EmptySkipped
		if !reflect.DeepEqual(meta, wm) {
			t.Fatalf("%s cut at %v: meta\n got %+v\nwant %+v", name, cuts, meta, wm)
		}
	}
}

// cutsOf returns a few ways to cut a file of n bytes: in two at some 30
// offsets, and in three and four.
func cutsOf(n int, r *rand.Rand) [][]int64 {
	var out [][]int64
	step := max(1, n/31)
	for c := 1; c <= n+1; c += step {
		out = append(out, []int64{int64(c)})
	}
	for range 8 {
		a, b := 1+r.Int64N(int64(n)), 1+r.Int64N(int64(n))
		out = append(out, []int64{min(a, b), max(a, b)})
		c := []int64{1 + r.Int64N(int64(n)), 1 + r.Int64N(int64(n)), 1 + r.Int64N(int64(n))}
		if c[0] <= c[1] && c[1] <= c[2] {
			out = append(out, c)
		}
	}
	return out
}

// everyFile is every byte fixture, damaged ones included, the testdata
// files, the real RDB files, and the audit mix, by name.
func everyFile(t *testing.T) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	for _, fx := range fixtures() {
		files["fixture:"+fx.name] = fx.build()
	}
	paths, _ := filepath.Glob(filepath.Join("testdata", "*.rdb"))
	real, _ := filepath.Glob(filepath.Join(redistest.RDBFixtures(t), "*.rdb"))
	for _, p := range append(paths, real...) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Base(p)] = b
	}
	files["audit-mix"] = auditData()
	return files
}

// TestParts cuts every byte fixture, damaged ones included, the testdata
// files and the real RDB files into parts at many offsets: joined, the
// parts give what the whole file gives, record for record, and end the
// same way.
func TestParts(t *testing.T) {
	files := everyFile(t)
	r := rand.New(rand.NewPCG(1, 2))
	cut := 0
	for name, data := range files {
		for _, opts := range []Options{cmdOpts, fixtureOpts} {
			cs := cutsOf(len(data), r)
			if len(data) > 1<<20 || testing.Short() && len(data) > 64<<10 {
				cs = cs[:min(len(cs), 4)]
			}
			for _, c := range cs {
				checkParts(t, name, data, opts, c)
				cut++
			}
		}
		// Damaged copies: a byte flipped, the file cut short.
		if len(data) > 64<<10 {
			continue
		}
		for range 4 {
			bad := bytes.Clone(data)
			bad[r.IntN(len(bad))] ^= byte(1 + r.IntN(255))
			for _, c := range cutsOf(len(bad), r)[:10] {
				checkParts(t, name+" (damaged)", bad, fixtureOpts, c)
			}
			short := data[:r.IntN(len(data))]
			if len(short) > 0 {
				for _, c := range cutsOf(len(short), r)[:10] {
					checkParts(t, name+" (cut short)", short, fixtureOpts, c)
				}
			}
		}
	}
	t.Logf("%d files, %d ways of cutting them", len(files), cut)
}

// FuzzParts: a file cut in two decodes as the whole file does.
func FuzzParts(f *testing.F) {
	for _, data := range corpus(f) {
		f.Add(data, uint16(len(data)/2))
	}
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		if len(data) > 1<<16 {
			return
		}
		opts := Options{FieldSample: 8, WatchFields: []string{"__ns__"}, JSONKeys: 4, ValueLimit: 4096, MaxBlobBytes: 1 << 20}
		checkParts(t, "fuzz", data, opts, []int64{1 + int64(cut)})
	})
}

// printRec prints a record and its value, without the address of the value.
func printRec(r *Record) string {
	c := normRecord(*r)
	c.Value = nil
	return fmt.Sprintf("%+v %+v", c, r.Value)
}
