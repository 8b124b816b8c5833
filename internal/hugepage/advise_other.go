//go:build !linux

package hugepage

// advise does nothing where transparent huge pages are not Linux's.
func advise(b []byte, on bool) {}

// adviseRange does nothing where transparent huge pages are not Linux's.
func adviseRange(addr, n uintptr, on bool) {}
