package registry

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// nest builds a document nested depth levels deep in one of the shapes a
// nesting bomb takes, around a valid registry's "keys:" line.
func nest(shape string, depth int) string {
	switch shape {
	case "flow-seq":
		return "keys: " + strings.Repeat("[", depth) + strings.Repeat("]", depth) + "\n"
	case "flow-map":
		return "keys: " + strings.Repeat("{a: ", depth) + "1" + strings.Repeat("}", depth) + "\n"
	case "block-map":
		var b strings.Builder
		for i := range depth {
			b.WriteString(strings.Repeat(" ", i) + "a:\n")
		}
		return b.String()
	case "block-seq":
		return "keys:\n" + strings.Repeat("- ", depth) + "x\n"
	}
	panic(shape)
}

// TestNestingLimit: every shape of nesting is refused one level past the
// limit, with the line and column, and accepted up to it by the scan.
func TestNestingLimit(t *testing.T) {
	for _, shape := range []string{"flow-seq", "flow-map", "block-map", "block-seq"} {
		for _, depth := range []int{5, 20} {
			if _, _, found := nestedBeyond([]byte(nest(shape, depth)), depth+2); found {
				t.Errorf("%s: depth %d reported beyond %d", shape, depth, depth+2)
			}
			if _, _, found := nestedBeyond([]byte(nest(shape, depth+2)), depth); !found {
				t.Errorf("%s: depth %d not reported beyond %d", shape, depth+2, depth)
			}
		}
		_, err := ParseLimited("bomb.yaml", []byte(nest(shape, 100)), Limits{MaxDepth: 50})
		var el ErrorList
		if !errors.As(err, &el) || !strings.Contains(err.Error(), "nested deeper than 50 levels") || el[0].Pos.Line == 0 {
			t.Errorf("%s: %v", shape, err)
		}
	}
	// Quotes, comments and block scalars hold text, not structure.
	text := "keys:\n  - key: \"a:[[[[[[[[\" # [[[[[[[[[\n    desc: |\n      [[[[[[[[[[\n        [[[[[[[[\n    type: string\n"
	if line, col, found := nestedBeyond([]byte(text), 4); found {
		t.Errorf("text counted as nesting at %d:%d", line, col)
	}
}

// TestNestingBombCheap: a 200 KB nesting bomb of each shape is refused
// with an error before the parser runs, allocating a few megabytes at
// most (the parser alone would take gigabytes).
func TestNestingBombCheap(t *testing.T) {
	for _, shape := range []string{"flow-seq", "flow-map", "block-seq"} {
		data := []byte(nest(shape, 100_000))[:200_000]
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := Parse("bomb.yaml", data)
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), "nested deeper than") {
			t.Errorf("%s: %v", shape, err)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 50<<20 {
			t.Errorf("%s: %d bytes allocated to refuse a 200 KB file", shape, alloc)
		}
	}
}

// TestSizeLimit: a file over the limit is refused before it is read.
func TestSizeLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.yaml")
	data := []byte("version: 1\nkeys:\n" + strings.Repeat("  - {key: \"a:{id}\", type: string, ttl: 1h}\n", 30_000))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadLimited(path, Limits{MaxBytes: 1 << 20})
	if err == nil || !strings.Contains(err.Error(), "larger than 1 MiB") || !strings.Contains(err.Error(), "--max-registry-bytes") {
		t.Fatalf("over the limit: %v", err)
	}
	if _, err := ParseLimited(path, data, Limits{MaxBytes: 1000}); err == nil || !strings.Contains(err.Error(), "larger than 1000 bytes") {
		t.Fatalf("Parse over the limit: %v", err)
	}
	small := filepath.Join(t.TempDir(), "small.yaml")
	reg := []byte("version: 1\nkeys:\n  - {key: \"a:{id}\", type: string, ttl: 1h}\n")
	if err := os.WriteFile(small, reg, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadLimited(small, Limits{MaxBytes: int64(len(reg))}); err != nil {
		t.Fatalf("at the limit: %v", err)
	}
	if _, err := LoadLimited(small, Limits{MaxBytes: int64(len(reg)) - 1}); err == nil {
		t.Fatal("a byte over the limit loaded")
	}
}

// FuzzNestedBeyond holds two properties of the nesting scan: a file found
// nested beyond a limit is beyond every lower one; and on a line of flow
// brackets it agrees with the bracket depth counted plainly (plus the
// line's own block level).
func FuzzNestedBeyond(f *testing.F) {
	f.Add([]byte("keys: [[{a: [1]}]]"), uint8(3))
	f.Add([]byte("a:\n  b:\n    - - c\n"), uint8(2))
	f.Add([]byte("k: \"[[[\" # [[[\n"), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, m uint8) {
		lim := int(m%40) + 1
		if _, _, found := nestedBeyond(data, lim); found {
			for lower := lim - 1; lower >= 1; lower-- {
				if _, _, f := nestedBeyond(data, lower); !f {
					t.Fatalf("beyond %d but not beyond %d: %q", lim, lower, data)
				}
			}
		}
		brackets := make([]byte, 0, len(data))
		for _, c := range data {
			if c == '[' || c == ']' {
				brackets = append(brackets, c)
			}
		}
		depth, deepest := 0, 0
		for _, c := range brackets {
			if c == '[' {
				depth++
				deepest = max(deepest, depth)
			} else if depth > 0 {
				depth--
			}
		}
		_, _, found := nestedBeyond(append([]byte("k: "), brackets...), lim)
		if found != (deepest+1 > lim) {
			t.Fatalf("k: %s: found %v, plain depth %d (+1) against %d", brackets, found, deepest, lim)
		}
	})
}
