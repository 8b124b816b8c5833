package keycheck

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/cli"
	"github.com/keyguard/keyguard/registry"
)

const testRegistry = `version: 1
keys:
  - key: "user:{id:int}:profile"
    owner: user-team
    type: hash
    ttl: 7d
`

func testEnv(stdin string) (*cli.Env, *bytes.Buffer) {
	var out bytes.Buffer
	return &cli.Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &bytes.Buffer{}, Getenv: func(string) string { return "" }}, &out
}

// Keys from stdin, NUL-separated, may hold newlines and bytes that are not
// UTF-8: each gets one JSON line, a key not UTF-8 its bytes in base64, and
// a registered key its template and captures.
func TestCheckJSONKeysOfAnyBytes(t *testing.T) {
	reg, err := registry.Parse("keyguard.yaml", []byte(testRegistry))
	if err != nil {
		t.Fatal(err)
	}
	odd := "user:\xff\n:x"
	e, out := testEnv("user:42:profile\x00" + odd + "\x00")
	err = Check(context.Background(), e, CheckOptions{Registry: reg, Keys: []string{"-"}, NUL: true, MaxLine: 1 << 20,
		Format: "json", Threshold: finding.Error})
	if err != nil && !errors.Is(err, cli.ErrFindings) {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 JSON lines, got %d:\n%s", len(lines), out.String())
	}
	var first, second struct {
		Key, KeyBase64, Template string
		Captures                 map[string]string
		TTLSeconds               int64 `json:"ttl_seconds"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	if first.Template != "user:{id:int}:profile" || first.Captures["id"] != "42" || first.TTLSeconds != 7*24*3600 {
		t.Errorf("registered key: %s", lines[0])
	}
	if err := json.Unmarshal([]byte(lines[1]), &second); err != nil {
		t.Fatal(err)
	}
	var raw struct {
		KeyBase64 string `json:"key_base64"`
	}
	json.Unmarshal([]byte(lines[1]), &raw)
	if b, _ := base64.StdEncoding.DecodeString(raw.KeyBase64); string(b) != odd {
		t.Errorf("odd key: base64 %q decodes to %q, want %q", raw.KeyBase64, b, odd)
	}
}

// The text summary counts every key, and the verdict follows the threshold.
func TestCheckTextVerdict(t *testing.T) {
	reg, err := registry.Parse("keyguard.yaml", []byte(testRegistry))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		threshold finding.Severity
		keys      []string
		findings  bool
	}{
		{finding.Error, []string{"user:1:profile"}, false},
		{finding.Info, []string{"user:1:profile", "Nobody Knows This"}, true},
	} {
		e, out := testEnv("")
		err := Check(context.Background(), e, CheckOptions{Registry: reg, Keys: tt.keys, Format: "text", Threshold: tt.threshold})
		if got := errors.Is(err, cli.ErrFindings); got != tt.findings || (err != nil && !got) {
			t.Errorf("%v at %s: err %v, want findings %v", tt.keys, tt.threshold, err, tt.findings)
		}
		if want := len(tt.keys); !strings.Contains(out.String(), "key") || strings.Count(out.String(), "\n") < want+1 {
			t.Errorf("%v: output\n%s", tt.keys, out.String())
		}
	}
}

// A registry that does not load is, in JSON, a document whose findings are
// its problems with line and column; the run fails with that error.
func TestLintLoadErrorAsFindings(t *testing.T) {
	_, loadErr := registry.Parse("bad.yaml", []byte("version: 1\nkeys:\n  - key: [\n"))
	if loadErr == nil {
		t.Fatal("the broken registry loaded")
	}
	e, out := testEnv("")
	err := Lint(e, LintOptions{LoadErr: loadErr, File: "bad.yaml", Format: "json", Threshold: finding.Error})
	if err == nil {
		t.Fatal("a registry that does not load passed")
	}
	var doc struct {
		Loaded   bool
		Findings []struct {
			Rule string
			Line int
			Doc  string
		}
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if doc.Loaded || len(doc.Findings) == 0 || doc.Findings[0].Line == 0 || doc.Findings[0].Doc == "" {
		t.Errorf("document: %s", out.String())
	}
}
