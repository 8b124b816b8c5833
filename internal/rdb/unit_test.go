package rdb

import (
	"bytes"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
)

func TestCRC64(t *testing.T) {
	// Check value from Redis's crc64.c self-test.
	if got := CRC64([]byte("123456789")); got != 0xe9c6d914c4b8d9ca {
		t.Fatalf("CRC64(123456789) = %x, want e9c6d914c4b8d9ca", got)
	}
	// Slicing-by-8 agrees with the bytewise loop on every length and split.
	data := []byte(strings.Repeat("keyguard rdb crc64 ", 50))
	bytewise := func(p []byte) uint64 {
		var c uint64
		for _, b := range p {
			c = crcTab[0][byte(c)^b] ^ c>>8
		}
		return c
	}
	for n := 0; n <= len(data); n += 7 {
		want := bytewise(data[:n])
		if got := CRC64(data[:n]); got != want {
			t.Fatalf("len %d: %x != bytewise %x", n, got, want)
		}
		if got := crc64Update(CRC64(data[:n/2]), data[n/2:n]); got != want {
			t.Fatalf("len %d split: %x != %x", n, got, want)
		}
	}
}

func TestLZF(t *testing.T) {
	inputs := [][]byte{
		[]byte("a"),
		[]byte(strings.Repeat("abc", 1000)),
		[]byte(strings.Repeat("x", 5000)),
		[]byte("The quick brown fox jumps over the lazy dog; the quick brown fox again."),
	}
	for _, in := range inputs {
		c := lzfCompress(in)
		out, err := lzfDecompress(c, make([]byte, len(in)), len(in))
		if err != nil || !bytes.Equal(out, in) {
			t.Fatalf("round trip of %d bytes: err %v, equal %v", len(in), err, bytes.Equal(out, in))
		}
		if p := lzfPrefix(c, 10); !bytes.Equal(p, in[:min(10, len(in))]) {
			t.Fatalf("prefix %q, want %q", p, in[:min(10, len(in))])
		}
		// Every truncation and wrong length is an error, not a panic.
		for n := 0; n < len(c); n++ {
			if _, err := lzfDecompress(c[:n], make([]byte, len(in)), len(in)); err == nil && len(in) > 0 {
				t.Fatalf("truncated to %d of %d: no error", n, len(c))
			}
		}
		if _, err := lzfDecompress(c, make([]byte, len(in)+1), len(in)+1); err == nil {
			t.Fatal("wrong length: no error")
		}
	}
	// A back reference before the start of the output.
	if _, err := lzfDecompress([]byte{0x20, 0x05}, make([]byte, 3), 3); err == nil {
		t.Fatal("reference before start: no error")
	}
}

func TestListpackWalk(t *testing.T) {
	vals := []any{int64(0), int64(127), int64(128), int64(-1), int64(-4096), int64(4095),
		int64(-32768), int64(32767), int64(8388607), int64(-8388608), int64(math.MaxInt32),
		int64(math.MinInt32), int64(math.MaxInt64), int64(math.MinInt64),
		"", "a", strings.Repeat("b", 63), strings.Repeat("c", 64), strings.Repeat("d", 4095), strings.Repeat("e", 4096)}
	lp := lpBuild(vals...)
	it, n, err := newLPIter(lp)
	if err != nil || n != len(vals) {
		t.Fatalf("header: n %d err %v", n, err)
	}
	for i, want := range vals {
		e, ok, err := it.next()
		if err != nil || !ok {
			t.Fatalf("elem %d: ok %v err %v", i, ok, err)
		}
		switch w := want.(type) {
		case int64:
			if !e.isInt || e.i != w {
				t.Fatalf("elem %d: got %+v want int %d", i, e, w)
			}
			if e.lpSize() != lpIntEntrySize(w) {
				t.Fatalf("elem %d size", i)
			}
		case string:
			if e.isInt || string(e.s) != w {
				t.Fatalf("elem %d: got %q want %q", i, e.s, w)
			}
		}
	}
	if _, ok, err := it.next(); ok || err != nil {
		t.Fatalf("end: ok %v err %v", ok, err)
	}
	if got, want := len(lp), lpEmptyBytes+sumLPSizes(vals); got != want {
		t.Fatalf("listpack %d bytes, size model says %d", got, want)
	}
}

func sumLPSizes(vals []any) int {
	n := 0
	for _, v := range vals {
		switch v := v.(type) {
		case int64:
			n += lpIntEntrySize(v)
		case string:
			n += lpEntrySize([]byte(v))
		}
	}
	return n
}

func TestZiplistWalk(t *testing.T) {
	vals := []any{int64(0), int64(12), int64(13), int64(-128), int64(1000), int64(-70000),
		int64(1 << 30), int64(1 << 40), "", "x", strings.Repeat("y", 300), strings.Repeat("z", 20000)}
	zl := zlBuild(vals...)
	it, n, err := newZLIter(zl)
	if err != nil || n != len(vals) {
		t.Fatalf("header: n %d err %v", n, err)
	}
	for i, want := range vals {
		e, ok, err := it.next()
		if err != nil || !ok {
			t.Fatalf("elem %d: ok %v err %v", i, ok, err)
		}
		if w, isInt := want.(int64); isInt && (!e.isInt || e.i != w) {
			t.Fatalf("elem %d: got %+v want %d", i, e, w)
		}
		if w, isStr := want.(string); isStr && string(e.s) != w {
			t.Fatalf("elem %d: got %q", i, e.s)
		}
	}
	if _, ok, err := it.next(); ok || err != nil {
		t.Fatalf("end: ok %v err %v", ok, err)
	}
}

func TestParseInt64(t *testing.T) {
	for s, want := range map[string]bool{
		"0": true, "-1": true, "123": true, "9223372036854775807": true, "-9223372036854775808": true,
		"9223372036854775808": false, "007": false, "+1": false, "-0": false, "": false, "1 ": false, "1.5": false, "-": false,
	} {
		if _, ok := parseInt64([]byte(s)); ok != want {
			t.Errorf("parseInt64(%q) ok = %v, want %v", s, ok, want)
		}
	}
}

func TestJeSize(t *testing.T) {
	for _, c := range [][2]int64{{1, 8}, {8, 8}, {9, 16}, {17, 32}, {24, 32}, {33, 48}, {64, 64}, {65, 80},
		{128, 128}, {129, 160}, {536, 640}, {1025, 1280}, {4097, 5120}, {14337, 16384}, {16385, 20480}} {
		if got := jeSize(c[0]); got != c[1] {
			t.Errorf("jeSize(%d) = %d, want %d", c[0], got, c[1])
		}
	}
}

func TestModuleName(t *testing.T) {
	// A module type id is 9 characters of 6 bits each, then 10 bits of
	// encoding version.
	name := "ReJSON-RL"
	var id uint64
	for i := 0; i < 9; i++ {
		id = id<<6 | uint64(strings.IndexByte(moduleNameAlphab, name[i]))
	}
	id = id<<10 | 3
	if got := moduleName(id); got != name {
		t.Fatalf("moduleName = %q, want %q", got, name)
	}
}

// decodeAll returns clones of every record and the final error (nil when
// the file ended with io.EOF).
func decodeAll(t testing.TB, data []byte, opts Options) ([]*Record, *Meta, error) {
	t.Helper()
	d := NewDecoder(bytes.NewReader(data), opts)
	var out []*Record
	for {
		r, err := d.Next()
		if err == io.EOF {
			return out, d.Meta(), nil
		}
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v (%T) is not a *FormatError", err, err)
			}
			return out, d.Meta(), err
		}
		out = append(out, r.Clone())
	}
}
