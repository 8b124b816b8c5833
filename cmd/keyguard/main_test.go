package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// runCLI runs keyguard in-process with injected I/O.
func runCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	code = run(context.Background(), args, e)
	return code, out.String(), errb.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s:\n--- got\n%s\n--- want\n%s", name, path, got, want)
	}
}

func TestGolden(t *testing.T) {
	for _, tt := range []struct {
		name  string
		stdin string
		args  []string
		code  int
	}{
		{"lint_text", "", []string{"lint", "--registry", "testdata/demo.yaml"}, 1},
		{"lint_json", "", []string{"lint", "--registry", "testdata/demo.yaml", "--format", "json"}, 1},
		{"lint_sarif", "", []string{"lint", "--registry", "testdata/demo.yaml", "--format", "sarif"}, 1},
		{"lint_clean", "", []string{"lint", "--registry", "testdata/clean.yaml"}, 0},
		{"lint_fail_on_never", "", []string{"lint", "--registry", "testdata/demo.yaml", "--fail-on", "never"}, 0},
		{"lint_broken", "", []string{"lint", "--registry", "testdata/broken.yaml"}, 2},
		{"lint_missing", "", []string{"lint", "--registry", "testdata/nope.yaml"}, 2},
		{"check_args", "", []string{"check", "--registry", "testdata/demo.yaml", "promo:sku:1001", "order:order:1001:base", "user_1024_token", "rate:login:18812345678"}, 1},
		{"check_stdin_json", "promo:sku:1001\r\nbad\x00key\xff\n\norder:order:7:base", []string{"check", "-", "--registry", "testdata/demo.yaml", "--format", "json"}, 1},
		{"check_only_findings", "order:order:1:base\nuser_1024_token\n", []string{"check", "--only-findings", "--registry", "testdata/demo.yaml", "-"}, 1},
		{"check_clean", "", []string{"check", "--registry", "testdata/demo.yaml", "order:order:1:base"}, 0},
		{"check_nul", "a:b\nc\x00order:order:1:base\x00", []string{"check", "-0", "--registry", "testdata/demo.yaml", "--only-findings", "-"}, 1},
		{"check_no_keys", "", []string{"check", "--registry", "testdata/demo.yaml"}, 2},
		{"bad_format", "", []string{"lint", "--format", "xml"}, 2},
		{"unknown_command", "", []string{"frobnicate"}, 2},
		{"help", "", []string{"help"}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, tt.stdin, tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d\nstderr: %s", code, tt.code, errOut)
			}
			golden(t, tt.name, "exit "+itoa(code)+"\n--- stdout\n"+out+"--- stderr\n"+errOut)
		})
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestOutFileWrittenWholeOrNotAtAll(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "lint.json")
	if code, _, errOut := runCLI(t, "", "lint", "--registry", "testdata/demo.yaml", "--format", "json", "--out", out); code != 1 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if b, err := os.ReadFile(out); err != nil || !bytes.Contains(b, []byte(`"rule": "overlap"`)) {
		t.Fatalf("--out file: %v %s", err, b)
	}
	bad := filepath.Join(dir, "bad.json")
	if code, _, _ := runCLI(t, "", "lint", "--registry", "testdata/broken.yaml", "--out", bad); code != 2 {
		t.Fatalf("exit %d", code)
	}
	if _, err := os.Stat(bad); !os.IsNotExist(err) {
		t.Fatalf("a failed run left %s", bad)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("temporary files left behind: %v", entries)
	}
}

func TestCheckLongKeyStreams(t *testing.T) {
	long := "order:" + strings.Repeat("x", 1<<20)
	code, out, _ := runCLI(t, long+"\norder:order:1:base\n", "check", "--registry", "testdata/demo.yaml", "--format", "json", "-")
	if code != 1 || strings.Count(out, "\n") != 2 || !strings.Contains(out, "naming/length") {
		t.Fatalf("exit %d, %d lines", code, strings.Count(out, "\n"))
	}
}
