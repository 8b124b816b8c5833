//go:build linux

// Command pagefault measures what a page of memory costs the first time
// it is written on this machine: it maps fresh anonymous memory, writes
// one byte per 4 KiB page, and prints the time and the minor faults per
// page, then the same with the mapping advised to use 2 MiB pages.
// Memory a process writes for the first time costs it this per page, so
// that on a machine whose faults are dear, the memory an audit allocates
// once (and never reuses) is part of its CPU time.
//
//	go run ./bench/pagefault -mb 50 -runs 3
package main

import (
	"flag"
	"fmt"
	"os"
	"syscall"
	"time"
)

func main() {
	mb := flag.Int("mb", 50, "MiB to write per run")
	runs := flag.Int("runs", 3, "runs of each kind")
	flag.Parse()
	for _, huge := range []bool{false, true} {
		for range *runs {
			d, faults, err := touch(*mb<<20, huge)
			if err != nil {
				fmt.Fprintln(os.Stderr, "pagefault:", err)
				os.Exit(1)
			}
			pages := *mb << 20 >> 12
			kind := "4 KiB pages"
			if huge {
				kind = "2 MiB pages (MADV_HUGEPAGE)"
			}
			fmt.Printf("%d MiB, %s: %v, %d faults, %.2f µs per 4 KiB written\n", *mb, kind, d.Round(time.Millisecond), faults, float64(d.Microseconds())/float64(pages))
		}
	}
}

// touch maps n fresh bytes, writes one byte per 4 KiB page, unmaps them,
// and returns the time the writes took and the minor faults they made.
func touch(n int, huge bool) (time.Duration, int64, error) {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return 0, 0, err
	}
	defer syscall.Munmap(b)
	if huge {
		if err := syscall.Madvise(b, 14); err != nil { // MADV_HUGEPAGE
			return 0, 0, fmt.Errorf("madvise: %w", err)
		}
	}
	var before, after syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	start := time.Now()
	for i := 0; i < n; i += 4096 {
		b[i] = 1
	}
	d := time.Since(start)
	syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	return d, after.Minflt - before.Minflt, nil
}
