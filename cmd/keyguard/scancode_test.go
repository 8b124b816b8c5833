package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const scanRegistry = "../../internal/scancode/testdata/keyguard.yaml"

// scan-code's exit codes: 1 for findings at or above --fail-on (errors by
// default, raw keys are warnings), 0 below it, 2 for what cannot run.
func TestScanCodeExitCodes(t *testing.T) {
	py := filepath.Join(t.TempDir(), "svc.py")
	if err := os.WriteFile(py, []byte("import redis\nr = redis.Redis()\ndef f(uid: int):\n    r.hgetall(f'user:{uid}:info')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{[]string{"--registry", scanRegistry, "../../internal/scancode/testdata/src/python"}, 1, "unregistered-code", ""},
		{[]string{"--registry", scanRegistry, py}, 0, "raw-key: key \"user:{uid:int}:info\"", ""},
		{[]string{"--registry", scanRegistry, "--fail-on", "warning", py}, 1, "1 warning", ""},
		{[]string{"--registry", scanRegistry, "--fail-on", "never", "../../internal/scancode/testdata/src"}, 0, "10 errors", ""},
		{[]string{"--registry", scanRegistry, "--lang", "cobol", py}, 2, "", "--lang: language \"cobol\""},
		{[]string{"--registry", scanRegistry, "nope/"}, 2, "", "Try:"},
		{[]string{"--registry", "nope.yaml", py}, 2, "", "nope.yaml"},
		{[]string{"--registry", scanRegistry, "--format", "xml", py}, 2, "", "xml"},
		{[]string{"--registry", scanRegistry, "--baseline", "nope.json", py}, 2, "", "baseline: open nope.json"},
	} {
		code, out, errOut := runCLI(t, "", append([]string{"scan-code"}, tt.args...)...)
		if code != tt.code || !strings.Contains(out, tt.stdout) || !strings.Contains(errOut, tt.stderr) {
			t.Errorf("scan-code %q: exit %d, want %d\nstdout: %s\nstderr: %s", tt.args, code, tt.code, out, errOut)
		}
	}
}

// A baseline written today accepts today's findings; a new raw key fails
// the next run.
func TestScanCodeBaseline(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "svc.py")
	body := "import redis\nr = redis.Redis()\nr.get('tmp:old')\n"
	if err := os.WriteFile(src, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(dir, "baseline.json")
	if code, _, errOut := runCLI(t, "", "scan-code", "--registry", scanRegistry, "--format", "json", "--out", base, dir); code != 1 {
		t.Fatalf("first run: exit %d, %s", code, errOut)
	}
	if code, out, _ := runCLI(t, "", "scan-code", "--registry", scanRegistry, "--baseline", base, dir); code != 0 || !strings.Contains(out, "1 accepted by the baseline") {
		t.Errorf("same code: exit %d\n%s", code, out)
	}
	body = "import redis\nr = redis.Redis()\n\n\nr.get('tmp:old')\nr.get('tmp:new')\n"
	if err := os.WriteFile(src, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCLI(t, "", "scan-code", "--registry", scanRegistry, "--baseline", base, "--format", "json", dir)
	var rep struct {
		Baselined int
		Findings  []struct{ Template string }
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if code != 1 || rep.Baselined != 1 || len(rep.Findings) != 1 || rep.Findings[0].Template != "tmp:new" {
		t.Errorf("new key: exit %d, %+v", code, rep)
	}
}

func TestScanCodeSuggestAndSARIF(t *testing.T) {
	code, out, errOut := runCLI(t, "", "scan-code", "--registry", scanRegistry, "--suggest", "../../internal/scancode/testdata/src/java")
	if code != 0 || !strings.Contains(out, "  - key: \"lock:order:{orderNo}\"\n    type: hash\n") {
		t.Errorf("--suggest: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runCLI(t, "", "scan-code", "--registry", scanRegistry, "--format", "sarif", "../../internal/scancode/testdata/src/ts")
	var log struct {
		Version string
		Runs    []struct{ Results []json.RawMessage }
	}
	if err := json.Unmarshal([]byte(out), &log); err != nil || code != 1 || log.Version != "2.1.0" || len(log.Runs) != 1 || len(log.Runs[0].Results) != 11 {
		t.Errorf("sarif: exit %d, %v, version %q, %d runs", code, err, log.Version, len(log.Runs))
	}
}
