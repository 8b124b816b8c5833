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
		{[]string{"--registry", scanRegistry, "--fail-on", "never", "../../internal/scancode/testdata/src"}, 0, "172 errors, 31 warnings", ""},
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

// scan-code fails closed: a Go module whose packages do not load (no
// go.sum here, and a requirement that cannot be downloaded, so that not
// even an updated copy of go.mod loads) exits 2 and says which files and
// why; --allow-partial reports them as a warning; the report lists them
// either way.
func TestScanCodeNotAnalysed(t *testing.T) {
	dir := t.TempDir()
	gomod := "module example.com/nosum\n\ngo 1.26\n\nrequire (\n\tgithub.com/redis/go-redis/v9 v9.23.0\n\texample.com/absent v1.0.0\n)\n"
	src := "package nosum\n\nimport (\n\t\"context\"\n\n\t_ \"example.com/absent\"\n\t\"github.com/redis/go-redis/v9\"\n)\n\nfunc F(ctx context.Context, r *redis.Client) { r.Get(ctx, \"tmp:x\") }\n"
	for name, body := range map[string]string{"go.mod": gomod, "f.go": src, "bad.py": "import redis\ndef f(:\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("GOFLAGS", "-mod=readonly")
	t.Setenv("GOPROXY", "off") // hermetic: nothing is downloaded
	out := filepath.Join(t.TempDir(), "r.json")
	code, _, errOut := runCLI(t, "", "scan-code", "--registry", scanRegistry, "--format", "json", "--out", out, dir)
	if code != 2 || !strings.Contains(errOut, "2 files could not be analysed") || !strings.Contains(errOut, "f.go") ||
		!strings.Contains(errOut, "bad.py: does not parse at line 2") || !strings.Contains(errOut, "--allow-partial") {
		t.Fatalf("exit %d, want 2\nstderr: %s", code, errOut)
	}
	var rep struct {
		NotAnalysed []struct{ File, Reason string } `json:"not_analysed"`
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &rep); err != nil || len(rep.NotAnalysed) != 2 || !strings.Contains(rep.NotAnalysed[1].Reason, "go.sum") {
		t.Fatalf("report %s: %v", data, err)
	}
	code, stdout, errOut := runCLI(t, "", "scan-code", "--registry", scanRegistry, "--allow-partial", dir)
	if code != 0 || !strings.Contains(errOut, "warning: 2 files not analysed") || !strings.Contains(stdout, "2 files NOT ANALYSED") {
		t.Fatalf("--allow-partial: exit %d\nstdout: %s\nstderr: %s", code, stdout, errOut)
	}
	// a file over --max-file-bytes is skipped and listed, not failed
	code, stdout, _ = runCLI(t, "", "scan-code", "--registry", scanRegistry, "--max-file-bytes", "10", filepath.Join(dir, "bad.py"))
	if code != 0 || !strings.Contains(stdout, "bad.py: skipped:") || !strings.Contains(stdout, "1 file too large, skipped") {
		t.Fatalf("--max-file-bytes: exit %d\nstdout: %s", code, stdout)
	}
}

// TestScanCodeWithoutRegistry: with no registry given or found, scan-code
// lists the key templates found in code (no findings: each would say a
// key is not in the registry) and exits 0; --suggest writes a registry
// of them that keyguard lint reads (and fails on what a person must
// decide); --baseline has nothing to accept.
func TestScanCodeWithoutRegistry(t *testing.T) {
	src, err := filepath.Abs("../../internal/scancode/testdata/src/python")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	code, out, errOut := runCLI(t, "", "scan-code", src)
	if code != 0 || !strings.Contains(out, "No registry (none given, no keyguard.yaml here)") ||
		!strings.Contains(out, `"user:{user_id:int}:info"  hash  `+filepath.Join(src, "cart.py")+":17:35") ||
		!strings.Contains(out, "next: keyguard scan-code --suggest --out keyguard.yaml") || strings.Contains(out, "unregistered-code") {
		t.Fatalf("scan-code without a registry: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "", "scan-code", "--format", "json", src)
	var rep struct {
		NoRegistry bool `json:"no_registry"`
		Keys       []struct {
			Key    string
			Types  []string
			Places []string
		}
		Findings []json.RawMessage
	}
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil || !rep.NoRegistry || len(rep.Findings) != 0 || len(rep.Keys) < 5 {
		t.Fatalf("json: exit %d %v %+v\n%s", code, err, rep, errOut)
	}
	if code, _, errOut := runCLI(t, "", "scan-code", "--suggest", "--out", "keyguard.yaml", src); code != 0 {
		t.Fatalf("--suggest: exit %d %s", code, errOut)
	}
	b, err := os.ReadFile("keyguard.yaml")
	if err != nil || !strings.HasPrefix(string(b), "# keyguard.yaml: the key templates scan-code found") || !strings.Contains(string(b), "\nversion: 1\n") ||
		!strings.Contains(string(b), `  - key: "user:{user_id:int}:info"`) {
		t.Fatalf("--suggest without a registry: %v\n%s", err, b)
	}
	// The file is a registry: lint reads it and names the decisions left.
	if code, out, errOut := runCLI(t, "", "lint"); code != 1 || !strings.Contains(out+errOut, "nobody owns this key") {
		t.Errorf("lint of the suggested registry: exit %d\n%s%s", code, out, errOut)
	}
	// Found now, keyguard.yaml is the registry of the next scan: its keys
	// are registered (built by hand: warnings).
	if code, out, _ := runCLI(t, "", "scan-code", src); code != 0 || strings.Contains(out, "No registry") || strings.Contains(out, "unregistered-code") ||
		!strings.Contains(out, "keyguard.yaml: 1 file (python 1), 0 errors") {
		t.Errorf("scan-code with the suggested registry: exit %d\n%s", code, out)
	}
	os.Remove("keyguard.yaml")
	if code, _, errOut := runCLI(t, "", "scan-code", "--baseline", "b.json", src); code != 2 || !strings.Contains(errOut, "without one there are none") {
		t.Errorf("--baseline without a registry: exit %d %s", code, errOut)
	}
}
