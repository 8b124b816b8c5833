package clients

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTypeScriptPackage builds a copy of clients/typescript the way a user
// does (npm run build, with the dependencies npm installed) and loads the
// package directory with require: its exports and type declarations.
func TestTypeScriptPackage(t *testing.T) {
	typescript(t) // skips when node or node_modules is missing
	if _, err := exec.LookPath("npm"); err != nil {
		missing(t, "npm not found (Debian: npm)")
	}
	dir := t.TempDir()
	for _, f := range []string{"package.json", "tsconfig.json", "src"} {
		if out, err := exec.Command("cp", "-r", filepath.Join("typescript", f), dir).CombinedOutput(); err != nil {
			t.Fatalf("cp %s: %v\n%s", f, err, out)
		}
	}
	modules, _ := filepath.Abs(filepath.Join("typescript", "node_modules"))
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	build := exec.Command("npm", "run", "build")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("npm run build: %v\n%s", err, out)
	}
	for _, f := range []string{"index.js", "index.d.ts", "guard.d.ts", "writers.d.ts"} {
		if _, err := os.Stat(filepath.Join(dir, "dist", f)); err != nil {
			t.Errorf("npm run build did not write dist/%s", f)
		}
	}
	out, err := exec.Command("node", "-e", `const k = require(process.argv[1]);
console.log([typeof k.Guard, typeof k.ForeignOwnerError, typeof k.TTLPolicy, typeof k.Recorder, typeof k.Metrics,
  typeof k.instrument, k.VERSION, k.SCRIPT_SHA].join(" "))`, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("require the package: %v\n%s", err, out)
	}
	v, _ := os.ReadFile("VERSION")
	want := "function function function function function function " + strings.TrimSpace(string(v)) + " "
	if got := strings.TrimSpace(string(out)); !strings.HasPrefix(got, want) || len(got) != len(want)+40 {
		t.Errorf("require(package): %q; want %q followed by the script's SHA-1", got, want)
	}
}

// TestPythonPackage imports the package with clients/python on the path
// and checks what it exports.
func TestPythonPackage(t *testing.T) {
	py := python(t)
	pkg, _ := filepath.Abs("python")
	cmd := exec.Command(py, "-c", `import keyguard as k
print(" ".join(n for n in ("Guard", "AsyncGuard", "ForeignOwnerError", "WrongTypeError", "TTLPolicy", "Recorder",
    "AsyncRecorder", "Metrics", "instrument") if callable(getattr(k, n, None))), k.__version__)
assert issubclass(k.ForeignOwnerError, k.ConflictError)`)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+pkg)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("import keyguard: %v\n%s", err, out)
	}
	v, _ := os.ReadFile("VERSION")
	want := "Guard AsyncGuard ForeignOwnerError WrongTypeError TTLPolicy Recorder AsyncRecorder Metrics instrument " + strings.TrimSpace(string(v))
	if got := strings.TrimSpace(string(out)); got != want {
		t.Errorf("import keyguard: %q, want %q", got, want)
	}
}
