package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// Reports of 8 MiB or more together get ~4 bytes of heap a byte; stdin,
// directories and files that are not there count none.
func TestWarmReportSize(t *testing.T) {
	dir := t.TempDir()
	file := func(name string, size int64) string {
		p := filepath.Join(dir, name)
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(size); err != nil { // sparse: no bytes written
			t.Fatal(err)
		}
		f.Close()
		return p
	}
	small, half, big := file("small.json", 1<<20), file("half.json", warmReportBytes/2), file("big.json", 20<<20)
	huge := file("huge.json", warmReportMax)
	for _, c := range []struct {
		name  string
		paths []string
		want  int
	}{
		{"one small report", []string{small}, 0},
		{"two halves", []string{half, half}, 4 * warmReportBytes},
		{"stdin and a half", []string{"-", half}, 0},
		{"a directory", []string{dir}, 0},
		{"a report not there", []string{filepath.Join(dir, "none.json"), half}, 0},
		{"a large one", []string{big, small}, 4 * (21 << 20)},
		{"capped", []string{huge}, warmReportMax},
	} {
		if got := warmReportSize(c.paths...); got != c.want {
			t.Errorf("%s: warmReportSize = %d, want %d", c.name, got, c.want)
		}
	}
	WarmReports(small)() // no heap asked for: nothing to undo
}
