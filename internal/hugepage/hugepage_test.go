package hugepage

import (
	"testing"
	"unsafe"
)

func TestInterior(t *testing.T) {
	for _, n := range []int{0, 1, size - 1, size, size + 1, 2*size - 1, 2 * size, 3*size + 12345, 9 << 20} {
		s := MakeSlice[byte](n)
		if len(s) != n {
			t.Fatalf("MakeSlice(%d): len %d", n, len(s))
		}
		for i, b := range s {
			if b != 0 {
				t.Fatalf("MakeSlice(%d)[%d] = %d, want 0", n, i, b)
			}
		}
		in := interior(s)
		if len(in) == 0 {
			// No whole aligned page: the slice is shorter than one, or
			// shorter than two and not aligned.
			if n >= 2*size {
				t.Errorf("MakeSlice(%d): no interior", n)
			}
			continue
		}
		lo, hi := uintptr(unsafe.Pointer(&in[0])), uintptr(unsafe.Pointer(&in[0]))+uintptr(len(in))
		start := uintptr(unsafe.Pointer(&s[0]))
		if lo%size != 0 || hi%size != 0 {
			t.Errorf("MakeSlice(%d): interior [%#x, %#x) not aligned to 2 MiB", n, lo, hi)
		}
		if lo < start || hi > start+uintptr(n) {
			t.Errorf("MakeSlice(%d): interior [%#x, %#x) outside the slice [%#x, %#x)", n, lo, hi, start, start+uintptr(n))
		}
		// Whole pages only, as many as fit.
		if first := (start + size - 1) &^ (size - 1); lo != first || (start+uintptr(n))-hi >= size {
			t.Errorf("MakeSlice(%d): interior [%#x, %#x) is not every whole page of [%#x, %#x)", n, lo, hi, start, start+uintptr(n))
		}
	}
}

func TestInteriorOfWiderElements(t *testing.T) {
	type wide struct{ a, b, c int64 } // 24 bytes: the slice's end is not a multiple of the page
	s := MakeSlice[wide](400_000)
	in := interior(s)
	if len(in) == 0 {
		t.Fatal("no interior for 9.6 MB")
	}
	end := uintptr(unsafe.Pointer(&s[0])) + uintptr(len(s))*unsafe.Sizeof(wide{})
	if top := uintptr(unsafe.Pointer(&in[0])) + uintptr(len(in)); top > end {
		t.Fatalf("interior ends at %#x, past the slice's end %#x", top, end)
	}
	Filled(s)
	s[len(s)-1].c = 1 // still the caller's memory
}
