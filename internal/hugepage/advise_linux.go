package hugepage

import "syscall"

// advise asks for 2 MiB pages over b (on), or takes that back (off:
// MADV_NOHUGEPAGE, which in "madvise" mode is what unadvised memory
// gets). An error (a kernel without transparent huge pages) leaves the
// memory as it was: the advice is only ever a hint.
func advise(b []byte, on bool) {
	if len(b) > 0 {
		_ = syscall.Madvise(b, adviceOf(on))
	}
}

// adviseRange is advise over the n bytes at addr, memory that no Go value
// may hold any more (the heap's: advice changes no byte of it).
func adviseRange(addr, n uintptr, on bool) {
	if n > 0 {
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, addr, n, uintptr(adviceOf(on)))
	}
}

func adviceOf(on bool) int {
	if on {
		return syscall.MADV_HUGEPAGE
	}
	return syscall.MADV_NOHUGEPAGE
}
