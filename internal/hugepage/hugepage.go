// Package hugepage allocates the large slices a report fills once, in
// full, right after making them, with the kernel asked to back them with
// 2 MiB pages where it can (Linux's transparent huge pages in "madvise"
// mode, the common default). Fresh memory costs a page fault on the
// first write to each 4 KiB page: for the report of 40,000 findings
// (8 MB) that was 1,900 faults, a third of all an RDB run took, at
// ~10 µs each on a virtual machine. Backed by 2 MiB pages the same slice
// takes four.
//
// The advice is taken back once the slice is filled (Filled): the Go
// runtime returns unused memory to the kernel in small pieces, and a
// region still advised would have them merged back into 2 MiB pages by
// the kernel's background thread, which the runtime then returns again.
package hugepage

import (
	"reflect"
	"unsafe"
)

// size is the page the kernel is asked for.
const size = 2 << 20

// MakeSlice returns a slice of n zero values (capacity n) and, when it
// holds at least 2 MiB, the advice to back it with 2 MiB pages. A slice
// of values without pointers starts at a 2 MiB boundary (or, for an
// element size that does not divide 2 MiB, less than one element past
// it), so that the advice covers every whole 2 MiB of it: placed where
// the heap puts it, a slice leaves up to 2 MiB at each end on small
// pages. That takes up to 2 MiB of address space more, before the slice,
// which is never written. (The collector reads all of an allocation with
// pointers, so such a slice is placed where the heap puts it.) Write the
// whole slice soon, then call Filled.
func MakeSlice[T any](n int) []T {
	var zero T
	sz := unsafe.Sizeof(zero)
	if sz == 0 || uintptr(n)*sz < size {
		return make([]T, n)
	}
	if HasPointers[T]() {
		s := make([]T, n)
		advise(pages(s), true)
		return s
	}
	s := make([]T, n+int((size+sz-1)/sz))
	start := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	boundary := (start + size - 1) &^ (size - 1)
	skip := int((boundary - start + sz - 1) / sz) // the first element at or past the boundary
	s = s[skip : skip+n : skip+n]
	advise(pages(s), true)
	return s
}

// Filled takes MakeSlice's advice back once s (as MakeSlice returned it)
// is written: the pages it has stay as they are.
func Filled[T any](s []T) {
	advise(pages(s), false)
}

// pages is the memory of the whole aligned 2 MiB pages of s, counting the
// page that begins less than one element before s (MakeSlice's: its
// first bytes are the element it skipped, in s's allocation); nil when
// there is none.
func pages[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var zero T
	sz := unsafe.Sizeof(zero)
	if uintptr(len(s))*sz < size {
		// No whole page, and no MakeSlice'd one: such a slice is made
		// as it is, and what lies before it is another allocation's.
		return nil
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	lo := start &^ (size - 1)
	if start-lo >= sz {
		lo += size // the page begins inside s's first element or later
	}
	hi := (start + uintptr(len(s))*sz) &^ (size - 1)
	if hi <= lo {
		return nil
	}
	// The bytes from lo are s's own, or the skipped element's before it:
	// unsafe.Add keeps the pointer within the allocation.
	return unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(s)), int(lo)-int(start))), hi-lo)
}

// HasPointers reports whether a value of T holds a pointer the collector
// reads.
func HasPointers[T any]() bool { return hasPointers(reflect.TypeFor[T]()) }

func hasPointers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.String, reflect.Pointer, reflect.Slice, reflect.Map, reflect.Chan, reflect.Func, reflect.Interface, reflect.UnsafePointer:
		return true
	case reflect.Array:
		return t.Len() > 0 && hasPointers(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if hasPointers(t.Field(i).Type) {
				return true
			}
		}
	}
	return false
}
