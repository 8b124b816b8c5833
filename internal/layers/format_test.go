package layers

import (
	"bytes"
	"go/format"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestGofmt keeps every Go file of the repository as gofmt writes it,
// so that CI, not a reviewer, catches a file left unformatted.
func TestGofmt(t *testing.T) {
	out, err := exec.Command("git", "-C", "../..", "ls-files", "*.go").Output()
	if err != nil {
		t.Skip("not a git checkout:", err)
	}
	for _, name := range strings.Fields(string(out)) {
		src, err := os.ReadFile("../../" + name)
		if os.IsNotExist(err) {
			continue // deleted in the work tree
		}
		if err != nil {
			t.Fatal(err)
		}
		got, err := format.Source(src)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !bytes.Equal(got, src) {
			t.Errorf("%s is not gofmt-formatted: run gofmt -w %s", name, name)
		}
	}
}
