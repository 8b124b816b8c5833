package hugepage

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// vmFlags returns the VmFlags of the mapping of /proc/self/smaps that
// holds addr.
func vmFlags(t *testing.T, addr uintptr) []string {
	t.Helper()
	f, err := flagsAt(addr)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("no smaps: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// flagsAt is vmFlags for a test's child process, which has no *testing.T.
func flagsAt(addr uintptr) ([]string, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		line := sc.Text()
		if rng, _, ok := strings.Cut(line, " "); ok && strings.Contains(rng, "-") && !strings.HasSuffix(rng, ":") {
			lo, hi, _ := strings.Cut(rng, "-")
			a, err1 := strconv.ParseUint(lo, 16, 64)
			b, err2 := strconv.ParseUint(hi, 16, 64)
			in = err1 == nil && err2 == nil && uint64(addr) >= a && uint64(addr) < b
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return strings.Fields(strings.TrimPrefix(line, "VmFlags:")), nil
		}
	}
	return nil, fmt.Errorf("no mapping of /proc/self/smaps holds %#x", addr)
}

// takesAdvice skips the test where the kernel takes no huge page advice.
func takesAdvice(t *testing.T) {
	t.Helper()
	probe := make([]byte, 2*size)
	in := probe[(size-uintptr(unsafe.Pointer(&probe[0]))%size)%size:][:size]
	if syscall.Madvise(in, syscall.MADV_HUGEPAGE) != nil {
		t.Skip("this kernel takes no huge page advice")
	}
	_ = syscall.Madvise(in, syscall.MADV_NOHUGEPAGE)
}

// The advice reaches the kernel (the mapping is marked for 2 MiB pages)
// and is taken back by Filled; the memory around it is left alone.
func TestAdviceMarksTheMapping(t *testing.T) {
	takesAdvice(t)
	s := MakeSlice[uint64](3 * size / 8) // 6 MiB: three whole pages
	in := pages(s)
	if len(in) < size {
		t.Fatalf("pages of 6 MiB: %d bytes", len(in))
	}
	at := uintptr(unsafe.Pointer(&in[0]))
	if f := vmFlags(t, at); !slices.Contains(f, "hg") {
		t.Fatalf("after MakeSlice the mapping at %#x has VmFlags %v, want hg", at, f)
	}
	for i := range s {
		s[i] = uint64(i)
	}
	Filled(s)
	f := vmFlags(t, at)
	if slices.Contains(f, "hg") || !slices.Contains(f, "nh") {
		t.Fatalf("after Filled the mapping at %#x has VmFlags %v, want nh and no hg", at, f)
	}
	for i := range s {
		if s[i] != uint64(i) {
			t.Fatalf("s[%d] = %d after Filled", i, s[i])
		}
	}
	// A slice without a whole page is not advised at all: nothing here
	// is advised any more.
	small := MakeSlice[byte](size / 2)
	if f := vmFlags(t, uintptr(unsafe.Pointer(&small[0]))); slices.Contains(f, "hg") {
		t.Fatalf("a 1 MiB slice's mapping has VmFlags %v", f)
	}
	_ = s[0]
}

// A long-lived process (keyguard serve runs an audit every few minutes)
// advises and takes back again and again: the kernel's mappings split
// where the advice was, and must not keep splitting without bound.
func TestRepeatedAdviceKeepsMappingsBounded(t *testing.T) {
	maps := func() int {
		b, err := os.ReadFile("/proc/self/maps")
		if err != nil {
			t.Skipf("no maps: %v", err)
		}
		return strings.Count(string(b), "\n")
	}
	before := maps()
	most := before
	for i := range 300 {
		// Sizes that vary, so that the slices land at varying places.
		s := MakeSlice[byte](4<<20 + (i%7)*(512<<10))
		for j := 0; j < len(s); j += 4096 {
			s[j] = byte(i)
		}
		Filled(s)
		runtime.GC()
		most = max(most, maps())
	}
	if most > before+64 {
		t.Fatalf("mappings grew from %d to %d over 300 advised slices", before, most)
	}
	t.Logf("mappings: %d before, at most %d after", before, most)
}

// MakeSlice advises from the 2 MiB boundary its slice starts just past
// (a report's 120-byte entries), and Filled takes that back.
func TestAlignedAdviceMarksItsFirstPage(t *testing.T) {
	takesAdvice(t)
	s := MakeSlice[[120]byte](3 * size / 120)
	first := uintptr(unsafe.Pointer(&s[0])) &^ (size - 1)
	if f := vmFlags(t, first); !slices.Contains(f, "hg") {
		t.Fatalf("after MakeSlice the mapping of its first page %#x has VmFlags %v, want hg", first, f)
	}
	for i := range s {
		s[i][0] = 1
	}
	Filled(s)
	if f := vmFlags(t, first); slices.Contains(f, "hg") {
		t.Fatalf("after Filled the mapping of its first page %#x has VmFlags %v", first, f)
	}
}
