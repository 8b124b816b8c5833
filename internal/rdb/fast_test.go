package rdb

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// The decoder takes fast paths when it does not collect values
// (Options.ValueLimit 0): listpacks walked without decoding elements it
// does not need, strings looked at in place, compressed listpacks counted
// from their header. With ValueLimit set it takes the general paths. The
// tests here decode the same input both ways and compare.

// fastOpts and slowOpts differ only in value collection.
var (
	fastOpts = Options{FieldSample: 3, WatchFields: []string{"__ns__", "7"}, JSONKeys: 4}
	slowOpts = Options{FieldSample: 3, WatchFields: []string{"__ns__", "7"}, JSONKeys: 4, ValueLimit: 1 << 30}
)

// fastCorpus is an RDB with every listpack form the fast paths read, raw
// and LZF-compressed: integer names and watched values of every width,
// 12- and 32-bit string lengths, two-byte backlens, unknown counts, JSON
// strings (compressed or not, with and without leading blanks). big adds
// 4 KiB strings (32-bit lengths, three-byte backlens), which make the
// input too big to fuzz well.
func fastCorpus(big bool) []byte {
	ints := []any{int64(0), int64(127), int64(-1), int64(4095), int64(-4096), int64(32767), int64(-32768),
		int64(8388607), int64(-8388608), int64(math.MaxInt32), int64(math.MinInt32), int64(math.MaxInt64), int64(math.MinInt64)}
	strs := []any{"", "a", strings.Repeat("b", 63), strings.Repeat("c", 64), strings.Repeat("d", 130)}
	var mixed []any
	for i := range max(len(ints), len(strs)) {
		mixed = append(mixed, ints[i%len(ints)], strs[i%len(strs)])
	}
	w := newRDB(11)
	w.selectDB(0)
	blob := func(lzf bool, b []byte) {
		if lzf {
			w.lzfStr(b)
		} else {
			w.bytesStr(b)
		}
	}
	unknown := func(b []byte) []byte {
		b[4], b[5] = 0xFF, 0xFF
		return b
	}
	for _, lzf := range []bool{false, true} {
		sfx := strconv.FormatBool(lzf)
		hashes := [][]any{
			{"__ns__", "team", "f", int64(1)},
			{int64(7), int64(-300), "__ns__", int64(123456), "x", strings.Repeat("y", 200)},
			{"a", "1", "b", "2", "c", "3", "d", "4", "__ns__", strings.Repeat("n", 2000)},
			mixed,
		}
		for i, h := range hashes {
			w.key(tHashListpack, "h"+strconv.Itoa(i)+sfx)
			blob(lzf, lpBuild(h...))
			w.key(tHashListpack, "hu"+strconv.Itoa(i)+sfx)
			blob(lzf, unknown(lpBuild(h...)))
		}
		if big {
			w.key(tHashListpack, "big"+sfx)
			blob(lzf, lpBuild("e", strings.Repeat("e", 4096), "__ns__", int64(-1)))
			w.key(tSetListpack, "sbig"+sfx)
			blob(lzf, lpBuild("e", strings.Repeat("e", 4096)))
		}
		w.key(tZSetListpack, "z"+sfx)
		blob(lzf, lpBuild("m", int64(1), "n", int64(2), strings.Repeat("o", 100), int64(300)))
		w.key(tZSetListpack, "zu"+sfx)
		blob(lzf, unknown(lpBuild("m", int64(1), "n", int64(2))))
		w.key(tSetListpack, "s"+sfx)
		blob(lzf, lpBuild(mixed...))
		w.key(tSetListpack, "su"+sfx)
		blob(lzf, unknown(lpBuild(mixed...)))
		w.key(tListQuicklist2, "l"+sfx)
		w.length(3)
		w.length(2)
		blob(lzf, lpBuild(mixed...))
		w.length(1)
		w.str(strings.Repeat("p", 500))
		w.length(2)
		blob(lzf, unknown(lpBuild("q", "r", int64(5))))
		json := []byte(`{"sku":"` + strings.Repeat("s", 40) + `","price":10,"tags":["a","b"],"more":{"x":1}}`)
		w.key(tString, "j"+sfx)
		blob(lzf, json)
		w.key(tString, "jw"+sfx)
		blob(lzf, append([]byte("   \n  "), json...))
		w.key(tString, "nj"+sfx)
		blob(lzf, []byte(strings.Repeat("not json at all ", 8)))
		w.key(tString, "int"+sfx)
		w.str("12345")
	}
	return w.finish(true)
}

// compareFast decodes data with slowOpts, and with fastOpts twice.
//
// With checkAll set the fast paths must give the same records and the
// same error as the general ones, except that the general path inflates
// compressed elements the fast one skips (it collects them), so it alone
// fails on their corrupt LZF; then the fast path must still give the
// records before that.
//
// Without checkAll the fast paths may accept more than with it (a
// compressed listpack counted from its header, a compressed string that is
// not JSON, are not inflated), never less, and must return the same
// records where the checkAll run does.
func compareFast(t *testing.T, data []byte) {
	t.Helper()
	slow, _, errS := decodeAll(t, data, slowOpts)
	strict, errC := decodeWith(t, data, fastOpts, true)
	lzfOnly := errS != nil && strings.Contains(errS.Error(), "LZF")
	if !lzfOnly && (fmt.Sprint(errC) != fmt.Sprint(errS) || len(strict) != len(slow)) || len(strict) < len(slow) {
		t.Fatalf("fast path, checkAll: %d records, error %v; general path %d, error %v", len(strict), errC, len(slow), errS)
	}
	sameRecords(t, slow, strict[:len(slow)])
	fast, errF := decodeWith(t, data, fastOpts, false)
	if len(fast) < len(strict) || errC == nil && (errF != nil || len(fast) != len(strict)) {
		t.Fatalf("fast path: %d records, error %v; with checkAll %d, error %v", len(fast), errF, len(strict), errC)
	}
	sameRecords(t, strict, fast[:len(strict)])
}

func sameRecords(t *testing.T, want, got []*Record) {
	t.Helper()
	for i, w := range want {
		g, w := *got[i], *w
		g.Value, w.Value = nil, nil
		if fmt.Sprintf("%+v", g) != fmt.Sprintf("%+v", w) {
			t.Fatalf("record %d:\n fast    %+v\n general %+v", i, g, w)
		}
	}
}

// decodeWith is decodeAll with the decoder's checkAll switch.
func decodeWith(t *testing.T, data []byte, opts Options, checkAll bool) ([]*Record, error) {
	t.Helper()
	d := NewDecoder(bytes.NewReader(data), opts)
	d.checkAll = checkAll
	var out []*Record
	for {
		r, err := d.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v (%T) is not a *FormatError", err, err)
			}
			return out, err
		}
		out = append(out, r.Clone())
	}
}

func TestFastPaths(t *testing.T) {
	data := fastCorpus(true)
	recs, _, err := decodeAll(t, data, fastOpts)
	if err != nil {
		t.Fatal(err)
	}
	// Spot checks: what the fast paths found is what was written.
	byKey := map[string]*Record{}
	for _, r := range recs {
		byKey[string(r.Key)] = r
	}
	for _, sfx := range []string{"false", "true"} {
		h := byKey["hu1"+sfx]
		if h.Elements != 3 || len(h.Fields) != 3 || string(h.Fields[0]) != "7" || len(h.Watched) != 2 ||
			string(h.Watched[0].Value) != "-300" || string(h.Watched[1].Value) != "123456" {
			t.Errorf("hu1%s: %+v", sfx, h)
		}
		if h := byKey["h2"+sfx]; !h.MoreFields || len(h.Watched) != 1 || len(h.Watched[0].Value) != maxWatchedValue {
			t.Errorf("h2%s: %+v", sfx, h)
		}
		if z := byKey["zu"+sfx]; z.Elements != 2 {
			t.Errorf("zu%s: %d elements", sfx, z.Elements)
		}
		if l := byKey["l"+sfx]; l.Elements != 13*2+1+3 {
			t.Errorf("l%s: %d elements", sfx, l.Elements)
		}
		for _, k := range []string{"j", "jw"} {
			if j := byKey[k+sfx]; strings.Join(j.JSONKeys, ",") != "sku,price,tags,more" {
				t.Errorf("%s%s: JSON keys %q", k, sfx, j.JSONKeys)
			}
		}
		if j := byKey["nj"+sfx]; len(j.JSONKeys) != 0 {
			t.Errorf("nj%s: JSON keys %q", sfx, j.JSONKeys)
		}
	}
	if h := byKey["bigtrue"]; h.Elements != 2 || len(h.Watched) != 1 || string(h.Watched[0].Value) != "-1" {
		t.Errorf("bigtrue: %+v", h)
	}
	compareFast(t, data)
	for _, c := range corpus(t) {
		compareFast(t, c)
	}
	compareFast(t, auditRDB(500))
}

// TestFastPathsMutated flips, sets and drops bytes of the corpus at random
// (fixed seed) and compares the two paths on each result.
func TestFastPathsMutated(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	inputs := [][]byte{fastCorpus(true), fastCorpus(false), auditRDB(200)}
	for _, c := range corpus(t) {
		inputs = append(inputs, c)
	}
	n := 3000
	if testing.Short() {
		n = 300
	}
	for i := range n {
		in := inputs[i%len(inputs)]
		data := bytes.Clone(in)
		for range 1 + rng.IntN(3) {
			p := rng.IntN(len(data))
			switch rng.IntN(4) {
			case 0:
				data[p] ^= 1 << rng.IntN(8)
			case 1:
				data[p] = byte(rng.IntN(256))
			case 2:
				data[p] = []byte{0x00, 0x7F, 0x80, 0xBF, 0xC0, 0xE0, 0xF0, 0xF1, 0xF4, 0xFE, 0xFF}[rng.IntN(11)]
			default:
				data = append(data[:p], data[p+1:]...)
			}
		}
		compareFast(t, data)
	}
}

func FuzzFastPaths(f *testing.F) {
	f.Add(fastCorpus(false))
	for _, data := range corpus(f) {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		compareFast(t, data)
	})
}

// TestLPCountFast: the count-only walk agrees with lpIter on every cut
// and every single-byte change of a listpack.
func TestLPCountFast(t *testing.T) {
	lp := lpBuild(int64(1), "ab", strings.Repeat("c", 70), int64(-5000), int64(1<<40), strings.Repeat("d", 200), "")
	check := func(b []byte) {
		want, wantErr := 0, error(nil)
		it, declared, err := newLPIter(b)
		if err == nil {
			for {
				_, ok, err := it.next()
				if err != nil {
					wantErr = err
					break
				}
				if !ok {
					break
				}
				want++
			}
			if wantErr == nil && declared >= 0 && declared != want {
				wantErr = errors.New("count")
			}
		} else {
			wantErr = err
		}
		got, ok := lpCountFast(b)
		if ok != (wantErr == nil) || ok && got != want {
			t.Fatalf("% x: lpCountFast %d %v, lpIter %d %v", b, got, ok, want, wantErr)
		}
	}
	check(lp)
	for n := range len(lp) {
		check(lp[:n])
	}
	for i := range lp {
		for _, v := range []byte{0x00, 0x01, 0x3F, 0x7F, 0x80, 0x81, 0xBF, 0xC0, 0xDF, 0xE0, 0xEF, 0xF0, 0xF1, 0xF4, 0xF5, 0xFE, 0xFF} {
			b := bytes.Clone(lp)
			b[i] = v
			check(b)
		}
	}
}

// TestLPHashFieldsMutated: every single-byte change and cut of a hash
// listpack decodes the same through lpHashFields as through the general
// walk.
func TestLPHashFieldsMutated(t *testing.T) {
	lp := lpBuild(int64(7), "ab", "__ns__", int64(-5000), strings.Repeat("c", 70), int64(1<<40),
		"x", strings.Repeat("d", 200), "", "__ns__")
	file := func(b []byte) []byte {
		w := newRDB(10)
		w.key(tHashListpack, "h")
		w.bytesStr(b)
		w.key(tString, "after")
		w.str("v")
		return w.finish(true)
	}
	compareFast(t, file(lp))
	for n := range len(lp) {
		compareFast(t, file(lp[:n]))
	}
	for i := range lp {
		for _, v := range []byte{0x00, 0x01, 0x3F, 0x7F, 0x80, 0x81, 0xBF, 0xC0, 0xDF, 0xE0, 0xEF, 0xF0, 0xF1, 0xF4, 0xF5, 0xFE, 0xFF} {
			b := bytes.Clone(lp)
			b[i] = v
			compareFast(t, file(b))
			b[i] = lp[i] ^ 0x80
			compareFast(t, file(b))
		}
	}
}

// TestTruncatedFast is TestTruncated through the fast paths: every prefix
// of an input ends in io.ErrUnexpectedEOF after exactly the records that
// lie entirely before the cut.
func TestTruncatedFast(t *testing.T) {
	for name, data := range map[string][]byte{"fast": fastCorpus(true), "audit": auditRDB(300)} {
		t.Run(name, func(t *testing.T) {
			d := NewDecoder(bytes.NewReader(data), fastOpts)
			var ends []int64
			for {
				_, err := d.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				ends = append(ends, d.Offset())
			}
			step := max(1, len(data)/2000) // every cut would take a while
			if testing.Short() {
				step *= 7
			}
			for n := 0; n < len(data); n += step {
				recs, _, err := decodeAll(t, data[:n], fastOpts)
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
			}
		})
	}
}

func TestIsWatched(t *testing.T) {
	d := NewDecoder(bytes.NewReader(nil), Options{WatchFields: []string{"__ns__", "", "a", "averyveryverylongname", "averyveryverylongnamf"}})
	for name, want := range map[string]bool{
		"__ns__": true, "": true, "a": true, "averyveryverylongname": true, "averyveryverylongnamf": true,
		"__ns_": false, "__ns__x": false, "_": false, "b": false, "ab": false, "averyveryverylongnam": false,
		"averyveryverylongnamg": false, "bveryveryverylongname": false,
	} {
		if got := d.isWatched([]byte(name)); got != want {
			t.Errorf("isWatched(%q) = %v", name, got)
		}
	}
	if NewDecoder(bytes.NewReader(nil), Options{WatchFields: []string{"x"}}).isWatched(nil) {
		t.Error(`"" is watched`)
	}
}
