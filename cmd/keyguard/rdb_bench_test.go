package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"
)

// BenchmarkRDBCommand runs "keyguard rdb --format json" in-process on the
// file named by KEYGUARD_RDB_BENCH_FILE (bench/rdb-gen.sh writes one) with
// the registry KEYGUARD_RDB_BENCH_REGISTRY (default: the audit tests'),
// with the extra flags in KEYGUARD_RDB_BENCH_ARGS (e.g. "--max-findings 100").
func BenchmarkRDBCommand(b *testing.B) {
	path := os.Getenv("KEYGUARD_RDB_BENCH_FILE")
	if path == "" {
		b.Skip("set KEYGUARD_RDB_BENCH_FILE to an RDB file (bench/rdb-gen.sh writes one)")
	}
	reg := os.Getenv("KEYGUARD_RDB_BENCH_REGISTRY")
	if reg == "" {
		reg = "../../internal/audit/live/testdata/keyguard.yaml"
	}
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(fi.Size())
	for b.Loop() {
		var errb bytes.Buffer
		e := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: &errb, getenv: func(string) string { return "" }}
		args := append([]string{"rdb", "--registry", reg, "--format", "json", "--fail-on", "never"}, strings.Fields(os.Getenv("KEYGUARD_RDB_BENCH_ARGS"))...)
		if code := run(context.Background(), append(args, path), e); code != 0 {
			b.Fatalf("exit %d: %s", code, errb.String())
		}
	}
}
