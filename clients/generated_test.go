package clients

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/keyguard/keyguard/guard"
	"github.com/keyguard/keyguard/internal/codegen"
)

// TestGeneratedFresh fails when a client package's copy of the guard
// script, or a manifest's version, differs from what go generate writes
// from guard/guard.lua and clients/VERSION.
func TestGeneratedFresh(t *testing.T) {
	v, err := os.ReadFile("VERSION")
	if err != nil {
		t.Fatal(err)
	}
	version := strings.TrimSpace(string(v))
	if !regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`).MatchString(version) {
		t.Fatalf("clients/VERSION is %q; want the Go module's release without the v, e.g. 0.1.0", version)
	}
	files := codegen.ClientFiles(guard.Script(), version)
	manifests, err := codegen.ClientManifests(func(p string) ([]byte, error) { return os.ReadFile(filepath.FromSlash(p)) }, version)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append(files, manifests...) {
		diff, err := f.Diff(filepath.FromSlash(f.Dir))
		if err != nil {
			t.Fatal(err)
		}
		if diff != nil {
			t.Errorf("%s/%s is stale; run: go generate ./clients\n%s", f.Dir, f.Name, diff)
		}
	}
	// A release tag of the Go module on this commit names the same version.
	if out, err := exec.Command("git", "describe", "--tags", "--exact-match", "--match", "v[0-9]*").Output(); err == nil {
		if tag := strings.TrimSpace(string(out)); tag != "v"+version {
			t.Errorf("this commit is tagged %s but clients/VERSION says %s; set it to %s and run go generate ./clients",
				tag, version, strings.TrimPrefix(tag, "v"))
		}
	}
}

// TestGeneratedScriptIsTheScript checks the generated literals, as each
// language reads them, against the script itself: Python and Node print
// the SHA-1 of their SCRIPT, javac compiles Script.SOURCE (the drivers'
// version op checks its digest at run time in the interop tests).
func TestGeneratedScriptIsTheScript(t *testing.T) {
	want := guard.ScriptSHA()
	py := python(t)
	pkg, _ := filepath.Abs("python")
	cmd := exec.Command(py, "-c", "import keyguard; print(keyguard.SCRIPT_SHA)")
	cmd.Env = append(os.Environ(), "PYTHONPATH="+pkg)
	out, err := cmd.CombinedOutput()
	if err != nil || string(bytes.TrimSpace(out)) != want {
		t.Errorf("python keyguard.SCRIPT_SHA: %s %v; want %s", out, err, want)
	}
	dist := typescript(t)
	out, err = exec.Command("node", "-e", "console.log(require(process.argv[1]).SCRIPT_SHA)", dist).CombinedOutput()
	if err != nil || string(bytes.TrimSpace(out)) != want {
		t.Errorf("typescript SCRIPT_SHA: %s %v; want %s", out, err, want)
	}
}
