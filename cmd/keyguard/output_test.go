package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/keyguard/keyguard/internal/redistest"
)

// --out is checked before the audit starts: a missing directory or a
// directory fails at once, with a message that names --out and no
// temporary file; and nothing is left behind.
func TestOutCheckedBeforeWork(t *testing.T) {
	s := redistest.Start(t)
	dir := t.TempDir()
	missing := filepath.Join(dir, "no", "such", "a.json")
	cases := []struct {
		name, out, want string
		code            int
	}{
		{"missing directory", missing, "the directory " + filepath.Join(dir, "no", "such") + " does not exist", exitError},
		{"a directory", dir, "is a directory", exitError},
	}
	for _, c := range cases {
		for _, cmd := range [][]string{
			{"audit", "--registry", auditRegistry, "--redis", s.URL()},
			{"rdb", "--registry", auditRegistry, "testdata/nope.rdb"},
		} {
			start := time.Now()
			code, _, stderr := runCLI(t, "", append(cmd, "--format", "json", "--out", c.out)...)
			if code != c.code || !strings.Contains(stderr, c.want) || strings.Contains(stderr, "."+filepath.Base(c.out)+".") {
				t.Errorf("%s %s: exit %d, stderr %q", cmd[0], c.name, code, stderr)
			}
			if time.Since(start) > 10*time.Second {
				t.Errorf("%s %s: the error came after the work", cmd[0], c.name)
			}
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 0 {
		t.Errorf("files left behind: %v", ents)
	}
}
