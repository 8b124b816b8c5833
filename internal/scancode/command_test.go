package scancode

import (
	"fmt"
	"strings"
	"testing"
)

// TestNotAnalysedLines: the files of a Go module that does not load share
// one reason, said once with three of them named; past ten reasons the
// rest are counted.
func TestNotAnalysedLines(t *testing.T) {
	var files []FileIssue
	for i := range 26 {
		files = append(files, FileIssue{File: fmt.Sprintf("pkg/f%02d.go", i), Reason: "the go command cannot load the packages of /src: go: updates to go.mod needed"})
	}
	files = append(files, FileIssue{File: "bad.py", Reason: "does not parse at line 2, column 7"})
	got := notAnalysedLines(files)
	want := "\n\tpkg/f00.go, pkg/f01.go, pkg/f02.go and 23 more: the go command cannot load the packages of /src: go: updates to go.mod needed" +
		"\n\tbad.py: does not parse at line 2, column 7"
	if got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	files = nil
	for i := range 12 {
		files = append(files, FileIssue{File: fmt.Sprintf("f%d.py", i), Reason: fmt.Sprintf("does not parse at line %d", i+1)})
	}
	files = append(files, FileIssue{File: "g.py", Reason: "does not parse at line 12"})
	got = notAnalysedLines(files)
	if n := strings.Count(got, "\n\t"); n != 11 || !strings.HasSuffix(got, "\n\t... and 3 more files (the report lists them all)") {
		t.Errorf("%d lines:%s", n, got)
	}
}
