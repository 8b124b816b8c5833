package hugepage

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"slices"
	"testing"
	"unsafe"
)

// The heap hands out the memory warm advised first: in a fresh process
// (whose heap no other test has left free memory in), the first slice
// made after warm lies in it but for its head, on a mapping marked for
// 2 MiB pages, and the undo marks it back. The child runs with GOGC=off:
// only warm's own collection frees the warm slice (without it the slice
// made next lies past the advised memory).
func TestWarmAdvisesWhatTheHeapHandsOutNext(t *testing.T) {
	takesAdvice(t)
	if os.Getenv("HUGEPAGE_WARM_CHILD") == "1" {
		if err := warmChild(); err != nil {
			fmt.Println("FAIL:", err)
			os.Exit(1)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestWarmAdvisesWhatTheHeapHandsOutNext$", "-test.count=1")
	cmd.Env = append(os.Environ(), "HUGEPAGE_WARM_CHILD=1", "GOGC=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

func warmChild() error {
	lo, n := warm(32 << 20)
	if n < 28<<20 || lo%size != 0 {
		return fmt.Errorf("warm(32 MiB) advised %d bytes at %#x, want at least 28 MiB from a 2 MiB boundary", n, lo)
	}
	// The slice may begin in the free memory the heap had before warm's
	// (they are one free run now, up to ~6 MiB before the advised pages):
	// the rest lies in them.
	s := make([]byte, 12<<20)
	from := uintptr(unsafe.Pointer(&s[0]))
	to := from + uintptr(len(s))
	at := max(from, lo)
	if min(to, lo+n) < at+4<<20 {
		return fmt.Errorf("the slice made after warm lies at %#x..%#x, with less than 4 MiB in the advised %#x..%#x", from, to, lo, lo+n)
	}
	f, err := flagsAt(at)
	if err != nil {
		return err
	}
	if !slices.Contains(f, "hg") {
		return fmt.Errorf("the slice made after warm at %#x: its mapping has VmFlags %v, want hg", at, f)
	}
	adviseRange(lo, n, false)
	if f, err = flagsAt(at); err != nil {
		return err
	}
	if slices.Contains(f, "hg") || !slices.Contains(f, "nh") {
		return fmt.Errorf("after the undo the mapping at %#x has VmFlags %v, want nh and no hg", at, f)
	}
	runtime.KeepAlive(s)
	return nil
}

func TestHeapTooSmallDoesNothing(t *testing.T) {
	// Under two pages there is no whole page to advise once the slice's
	// ends are cut: nothing is allocated (no collection either).
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	Heap(2*size - 1)()
	runtime.ReadMemStats(&after)
	if after.NumGC != before.NumGC || after.TotalAlloc-before.TotalAlloc >= size {
		t.Fatalf("Heap(4 MiB - 1) collected %d times and allocated %d bytes", after.NumGC-before.NumGC, after.TotalAlloc-before.TotalAlloc)
	}
}

// Under a memory limit Heap does nothing: the heap's growth would count.
func TestHeapUnderAMemoryLimitDoesNothing(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(1 << 40))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	Heap(64 << 20)()
	runtime.ReadMemStats(&after)
	if after.NumGC != before.NumGC || after.TotalAlloc-before.TotalAlloc >= size {
		t.Fatalf("Heap(64 MiB) under a limit collected %d times and allocated %d bytes", after.NumGC-before.NumGC, after.TotalAlloc-before.TotalAlloc)
	}
}
