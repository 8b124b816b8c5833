package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGen(t *testing.T) {
	reg := filepath.Join("..", "..", "internal", "demodata", "keyguard.yaml")
	dir := t.TempDir()
	for _, lang := range []string{"go", "java", "python", "ts"} {
		args := []string{"gen", "--lang", lang, "--pkg", "keys", "--registry", reg, "--out", dir}
		if code, out, errOut := runCLI(t, "", args...); code != 0 || out != "" {
			t.Fatalf("%v: exit %d, stdout %q, stderr %s", args, code, out, errOut)
		}
		if code, out, errOut := runCLI(t, "", append(args, "--check")...); code != 0 || out != "" || errOut != "" {
			t.Fatalf("--check right after gen: exit %d, stdout %q, stderr %s", code, out, errOut)
		}
	}
	names, _ := os.ReadDir(dir)
	var got []string
	for _, n := range names {
		got = append(got, n.Name())
	}
	if strings.Join(got, " ") != "Keys.java keyguard_gen.go keys.py keys.ts" {
		t.Errorf("files %v", got)
	}

	path := filepath.Join(dir, "keyguard_gen.go")
	data, _ := os.ReadFile(path)
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), "TTL:   time.Hour,", "TTL:   2 * time.Hour,", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "", "gen", "--pkg", "keys", "--registry", reg, "--out", dir, "--check")
	if code != 1 || !strings.Contains(out, "-\tTTL:   2 * time.Hour,\n+\tTTL:   time.Hour,\n") || !strings.Contains(errOut, "is stale") {
		t.Errorf("stale --check: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	if now, _ := os.ReadFile(path); string(now) == string(data) {
		t.Error("--check rewrote the file")
	}
	if code, _, _ := runCLI(t, "", "gen", "--pkg", "keys", "--registry", reg, "--out", t.TempDir(), "--check"); code != 1 {
		t.Errorf("--check with the file missing: exit %d, want 1", code)
	}

	collide := filepath.Join(t.TempDir(), "keyguard.yaml")
	if err := os.WriteFile(collide, []byte("version: 1\nkeys:\n  - {key: \"a:{x}:b\", ttl: 1m}\n  - {key: \"a:b:{x}\", ttl: 1m}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"gen", "--registry", reg, "--out", dir}, "--pkg is required"},
		{[]string{"gen", "--pkg", "keys", "--registry", reg}, "--out DIR is required"},
		{[]string{"gen", "--lang", "rust", "--pkg", "keys", "--registry", reg, "--out", dir}, `--lang "rust"`},
		{[]string{"gen", "--lang", "java", "--pkg", "com.class", "--registry", reg, "--out", dir}, "Java keyword"},
		{[]string{"gen", "--pkg", "keys", "--registry", collide, "--out", dir}, `builder AB of "a:b:{x}" collides with "a:{x}:b" (line 3)`},
		{[]string{"gen", "--pkg", "keys", "--registry", "nope.yaml", "--out", dir}, "nope.yaml"},
	} {
		if code, _, errOut := runCLI(t, "", tt.args...); code != 2 || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stderr %s; want 2 and %q", tt.args, code, errOut, tt.want)
		}
	}
}
