package hugepage

import (
	"testing"
	"unsafe"
)

// check makes n elements of type T and holds the slice to MakeSlice's
// promises: n zero values, capacity n, and from 2 MiB on a start at (or
// less than one element past) a 2 MiB boundary, with pages covering
// every whole 2 MiB of it from that boundary.
func check[T comparable](t *testing.T, n int) {
	t.Helper()
	var zero T
	sz := unsafe.Sizeof(zero)
	s := MakeSlice[T](n)
	defer Filled(s) // the other tests look at what is advised
	if len(s) != n || cap(s) != n {
		t.Fatalf("MakeSlice[%d bytes](%d): len %d cap %d", sz, n, len(s), cap(s))
	}
	for i := range s {
		if s[i] != zero {
			t.Fatalf("MakeSlice[%d bytes](%d)[%d] is not zero", sz, n, i)
		}
	}
	p := pages(s)
	if uintptr(n)*sz < size {
		if p != nil {
			t.Fatalf("MakeSlice[%d bytes](%d): %d bytes of pages in less than 2 MiB", sz, n, len(p))
		}
		return
	}
	start := uintptr(unsafe.Pointer(&s[0]))
	end := start + uintptr(n)*sz
	lo := start &^ (size - 1)
	if start-lo >= sz {
		t.Fatalf("MakeSlice[%d bytes](%d) starts %d bytes past a 2 MiB boundary", sz, n, start-lo)
	}
	if len(p) == 0 {
		t.Fatalf("MakeSlice[%d bytes](%d) at [%#x, %#x): no pages", sz, n, start, end)
	}
	pl := uintptr(unsafe.Pointer(&p[0]))
	if pl != lo || pl+uintptr(len(p)) != end&^(size-1) {
		t.Fatalf("MakeSlice[%d bytes](%d) at [%#x, %#x): pages [%#x, %#x), want [%#x, %#x)",
			sz, n, start, end, pl, pl+uintptr(len(p)), lo, end&^(size-1))
	}
	s[n-1] = s[0] // the caller's memory to its end
}

func TestMakeSlice(t *testing.T) {
	for _, n := range []int{0, 1, size - 1, size, size + 1, 2*size - 1, 2 * size, 3*size + 12345, 9 << 20} {
		check[byte](t, n)
	}
	for _, n := range []int{size/32 - 1, size / 32, size/32 + 1, 3*size/32 + 77} {
		check[[32]byte](t, n)
	}
	// Element sizes that do not divide 2 MiB: a top list's values, a
	// report's entries.
	for _, n := range []int{size / 24, size/24 + 1, size/24 + 5, 2*size/24 + 3, 5 * size / 24} {
		check[[24]byte](t, n)
	}
	for _, n := range []int{size/120 + 1, 100_000} {
		check[[120]byte](t, n)
	}
}

// A slice not made by MakeSlice (a plain make of 2 MiB or more) has as
// pages only what lies inside it.
func TestPagesOfAPlainSlice(t *testing.T) {
	s := make([]byte, 5<<20)
	p := pages(s)
	start := uintptr(unsafe.Pointer(&s[0]))
	if len(p) == 0 {
		t.Fatal("no pages in 5 MiB")
	}
	pl := uintptr(unsafe.Pointer(&p[0]))
	if pl < start || pl+uintptr(len(p)) > start+uintptr(len(s)) || pl%size != 0 || len(p)%size != 0 {
		t.Fatalf("pages [%#x, +%d) of [%#x, +%d)", pl, len(p), start, len(s))
	}
}

func TestHasPointers(t *testing.T) {
	type flat struct {
		a, b int64
		c    [3]uint32
	}
	type withString struct {
		n int
		s string
	}
	for _, c := range []struct {
		got, want bool
		what      string
	}{
		{HasPointers[[4]int64](), false, "[4]int64"},
		{HasPointers[flat](), false, "a struct of integers"},
		{HasPointers[[0]string](), false, "[0]string"},
		{HasPointers[[1]*int](), true, "[1]*int"},
		{HasPointers[withString](), true, "a struct with a string"},
		{HasPointers[[]byte](), true, "[]byte"},
		{HasPointers[map[int]int](), true, "a map"},
		{HasPointers[any](), true, "an interface"},
	} {
		if c.got != c.want {
			t.Errorf("HasPointers[%s] = %v, want %v", c.what, c.got, c.want)
		}
	}
}

// A slice of values with pointers is placed where the heap puts it (the
// collector reads all of its allocation): its pages lie inside it.
func TestMakeSliceWithPointers(t *testing.T) {
	s := MakeSlice[*int](1 << 20) // 8 MiB
	defer Filled(s)
	if len(s) != 1<<20 || cap(s) != 1<<20 {
		t.Fatalf("len %d cap %d", len(s), cap(s))
	}
	p := pages(s)
	start, pl := uintptr(unsafe.Pointer(&s[0])), uintptr(unsafe.Pointer(&p[0]))
	if pl < start || pl+uintptr(len(p)) > start+8<<20 || pl%size != 0 || len(p) < 3*size {
		t.Fatalf("pages [%#x, +%d) of [%#x, +8 MiB)", pl, len(p), start)
	}
}

func TestModeIsMadvise(t *testing.T) {
	for s, want := range map[string]bool{
		"always [madvise] never\n": true,
		"[always] madvise never\n": false,
		"always madvise [never]\n": false,
		"":                         false,
		"madvise":                  false, // no mode selected
	} {
		if got := modeIsMadvise(s); got != want {
			t.Errorf("modeIsMadvise(%q) = %v, want %v", s, got, want)
		}
	}
}
