//go:build unix

package dashboard

import (
	"syscall"
	"time"
)

// processCPU is the user and system CPU time this process has used: on a
// shared machine the benchmarks report it beside the wall time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
