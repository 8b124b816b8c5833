// Package hugepage allocates the large slices a report fills once, in
// full, right after making them, with the kernel asked to back them with
// 2 MiB pages where it can (Linux's transparent huge pages in "madvise"
// mode, the common default). Fresh memory costs a page fault on the
// first write to each 4 KiB page: for the report of 40,000 findings
// (8 MB) that was 1,900 faults, a third of all an RDB run took, at ~14 µs
// each on a virtual machine. Backed by 2 MiB pages the same slice takes
// four.
//
// The advice is taken back once the slice is filled (Filled): the Go
// runtime returns unused memory to the kernel in small pieces, and a
// region still advised would have them merged back into 2 MiB pages by
// the kernel's background thread, which the runtime then returns again.
package hugepage

import "unsafe"

// size is the page the kernel is asked for.
const size = 2 << 20

// MakeSlice returns make([]T, n), and, when it spans at least one whole
// aligned 2 MiB page, the advice to back that part with 2 MiB pages.
// Write the whole slice soon, then call Filled.
func MakeSlice[T any](n int) []T {
	s := make([]T, n)
	advise(interior(s), true)
	return s
}

// Filled takes MakeSlice's advice back once s (as MakeSlice returned it)
// is written: the pages it has stay as they are.
func Filled[T any](s []T) {
	advise(interior(s), false)
}

// interior is the part of s's memory that whole aligned 2 MiB pages
// cover, nil when none does.
func interior[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var zero T
	bytes := uintptr(len(s)) * unsafe.Sizeof(zero)
	start := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	lo := (start + size - 1) &^ (size - 1)
	hi := (start + bytes) &^ (size - 1)
	if hi <= lo {
		return nil
	}
	// The bytes are s's own: unsafe.Add keeps the pointer derived from
	// the slice's.
	return unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(s)), lo-start)), hi-lo)
}
