package hugepage

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"unsafe"
)

// Heap asks for 2 MiB pages for the next n bytes the Go heap hands out,
// where the kernel backs memory with them only on advice (transparent
// huge pages in "madvise" mode, the common default); elsewhere it does
// nothing. The runtime maps the heap as it grows, each time without
// advice, so the advice cannot be given ahead of the runtime: Heap grows
// the heap by n bytes in one allocation it never writes, advises the
// whole 2 MiB pages of it, and has the collector take it back at once.
// The heap then hands out that memory first (the lowest free addresses),
// and a 2 MiB page costs one fault where 4 KiB pages cost 512, at
// ~13 µs each on a virtual machine: an RDB run of 1M keys took ~4,200
// faults, ~1,800 with Heap.
//
// It costs ~4 ms (one collection of a heap that holds little yet, and
// the heap's growth) and address space that the run may never write;
// under a memory limit (GOMEMLIMIT), which that growth would count
// against, it does nothing. Meant for a command's run, which ends with
// the process: undo takes the advice back (for callers that go on) from
// the pages not yet written.
func Heap(n int) (undo func()) {
	if n < 2*size || debug.SetMemoryLimit(-1) != math.MaxInt64 || !adviceOnly() {
		return func() {}
	}
	lo, m := warm(n)
	if m == 0 {
		return func() {}
	}
	return func() { adviseRange(lo, m, false) }
}

// warm allocates n bytes, advises their whole 2 MiB pages and lets them
// go; it returns where those pages are.
func warm(n int) (uintptr, uintptr) {
	b := make([]byte, n)
	p := pages(b)
	lo, m := uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p))
	advise(p, true)
	b, p = nil, nil
	runtime.GC() // frees b: its pages are the heap's again, advised
	return lo, m
}

// thpEnabled is where Linux says when it backs anonymous memory with
// huge pages: "always [madvise] never", the brackets around the mode.
const thpEnabled = "/sys/kernel/mm/transparent_hugepage/enabled"

// adviceOnly reports whether the kernel gives huge pages on advice only.
func adviceOnly() bool {
	b, err := os.ReadFile(thpEnabled)
	return err == nil && modeIsMadvise(string(b))
}

// modeIsMadvise reports whether the contents of thpEnabled select
// "madvise": in "always" every page is a candidate already, in "never"
// none is.
func modeIsMadvise(s string) bool { return strings.Contains(s, "[madvise]") }
