package atomicfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCommitReplacesWhole(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.json")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Create(path, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(f, "new")
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Fatalf("target changed before commit: %q", b)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Fatalf("after commit: %q", b)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
	f.Abort() // after commit: nothing
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Fatalf("abort after commit changed the file: %q", b)
	}
	assertOnly(t, dir, "r.json")
}

func TestAbortAndFailedWriteLeaveTarget(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.json")
	os.WriteFile(path, []byte("old"), 0o644)
	f, err := Create(path, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(f, "half")
	f.Abort()
	boom := errors.New("boom")
	if err := Write(path, 0o644, func(w io.Writer) error {
		io.WriteString(w, "partial")
		return boom
	}); !errors.Is(err, boom) {
		t.Fatalf("Write: %v, want boom", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Fatalf("target: %q, want old", b)
	}
	assertOnly(t, dir, "r.json")
	if err := WriteFile(path, []byte("whole"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "whole" {
		t.Fatalf("WriteFile: %q", b)
	}
}

func TestErrorsNameTheTarget(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "r.json")
	_, err := Create(path, 0o644)
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Path != path || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Create in a missing directory: %v", err)
	}
	if strings.Contains(err.Error(), ".r.json.") {
		t.Errorf("the error names the temporary file: %v", err)
	}
	// A rename over a directory fails: the temporary file is removed.
	dir := t.TempDir()
	target := filepath.Join(dir, "d")
	os.Mkdir(target, 0o755)
	os.WriteFile(filepath.Join(target, "x"), nil, 0o644)
	if err := WriteFile(target, []byte("x"), 0o644); err == nil || strings.Contains(err.Error(), ".d.") {
		t.Fatalf("rename over a directory: %v", err)
	}
	assertOnly(t, dir, "d")
}

func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Errorf("directory holds %v, want %v (a temporary file left behind?)", got, names)
	}
}
