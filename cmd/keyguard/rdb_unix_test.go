//go:build unix

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/redistest"
)

// TestOutToFIFO: --out naming a device or pipe (/dev/null in
// bench/rdb.sh) is written in place; renaming a temporary file over it
// would replace the node itself when running as root.
func TestOutToFIFO(t *testing.T) {
	srv := redistest.Start(t)
	if err := srv.Client(t).Save(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(t.TempDir(), "out.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	got := make(chan []byte)
	go func() {
		b, _ := os.ReadFile(fifo)
		got <- b
	}()
	code, _, stderr := runCLI(t, "", "rdb", "--registry", rdbTestRegistry, "--format", "json", "--out", fifo, filepath.Join(srv.Dir, "dump.rdb"))
	if code != exitClean {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := report.ReadReport(bytes.NewReader(<-got)); err != nil {
		t.Errorf("read from the FIFO: %v", err)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("%s is no longer a FIFO: %v %v", fifo, fi.Mode(), err)
	}
}
