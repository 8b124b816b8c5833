package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKeyListLineLimit: check -, preheat's key files and --set @FILE, and
// diff's key exports refuse a line over --max-line-bytes with exit 2 and
// its number, and take the same input under a limit that fits it.
func TestKeyListLineLimit(t *testing.T) {
	dir := t.TempDir()
	long := "config:global:" + strings.Repeat("x", 3000)
	list := "config:global:a\r\n\nconfig:global:b\n" + long + "\nconfig:global:c\n"
	keysFile := filepath.Join(dir, "keys.txt")
	if err := os.WriteFile(keysFile, []byte(list), 0o600); err != nil {
		t.Fatal(err)
	}
	exportHead := "db,key,key_base64,type,encoding,bytes,elements,ttl_ms,group,kind,owner\n"
	oldExp, newExp := filepath.Join(dir, "old.csv"), filepath.Join(dir, "new.csv")
	row := func(k string) string { return "0," + k + ",,string,embstr,60,1,-1,config:global:{name},template,\n" }
	if err := os.WriteFile(oldExp, []byte(exportHead+row("config:global:a")), 0o600); err != nil {
		t.Fatal(err)
	}
	// The long key sits in a quoted cell with newlines: one record, line 3.
	if err := os.WriteFile(newExp, []byte(exportHead+row("config:global:a")+row(`"`+strings.ReplaceAll(long, "xx", "x\nx")+`"`)+row("config:global:c")), 0o600); err != nil {
		t.Fatal(err)
	}
	preheat := []string{"preheat", "--registry", hotRegistry, "--redis", "redis://127.0.0.1:1", "--exec", "echo x", "--progress", "never"}
	for _, tt := range []struct {
		name  string
		stdin string
		args  []string
		line  int
	}{
		{"check", list, []string{"check", "--registry", "testdata/demo.yaml", "-"}, 4},
		{"check -0", strings.ReplaceAll(list, "\n", "\x00"), []string{"check", "--registry", "testdata/demo.yaml", "-0", "-"}, 4},
		{"preheat file", "", append(preheat, keysFile), 4},
		{"preheat stdin", list, append(preheat, "-"), 4},
		{"preheat --set", "", append(preheat, "--template", "config:global:{name}", "--set", "name=@"+keysFile), 4},
		{"diff", "", []string{"diff", oldExp, newExp}, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := append(append([]string{}, tt.args[:1]...), append([]string{"--max-line-bytes", "2KB"}, tt.args[1:]...)...)
			code, out, errs := runCLI(t, tt.stdin, args...)
			want := "line " + itoa(tt.line) + ": line too long: over 2000 bytes"
			if code != 2 || !strings.Contains(errs, want) || !strings.Contains(errs, "--max-line-bytes") {
				t.Errorf("exit %d, stderr %q; want 2 and %q\n%s", code, errs, want, out)
			}
			// Within a limit that fits the line, the same input goes past
			// it (preheat then fails to reach its unreachable server).
			args = append(append([]string{}, tt.args[:1]...), append([]string{"--max-line-bytes", "8KB"}, tt.args[1:]...)...)
			if _, _, errs := runCLI(t, tt.stdin, args...); strings.Contains(errs, "line too long") {
				t.Errorf("within the limit: %s", errs)
			}
		})
	}
}
