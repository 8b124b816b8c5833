package codegen

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/keyguard/keyguard/registry"
)

func testRegistry(t testing.TB) *registry.Registry {
	t.Helper()
	reg, err := registry.Load(filepath.Join("testdata", "keyguard.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func parseRegistry(t testing.TB, yaml string) *registry.Registry {
	t.Helper()
	reg, err := registry.Parse("test.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

type vector struct {
	ID          int               `json:"id"`
	Note        string            `json:"note"`
	Template    string            `json:"template"`
	Values      map[string]string `json:"values"`
	Key         string            `json:"key"`
	Error       string            `json:"error"`
	Placeholder string            `json:"placeholder"`
}

func loadVectors(t testing.TB) []vector {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Comment  string   `json:"comment"`
		Registry string   `json:"registry"`
		Vectors  []vector `json:"vectors"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("vectors.json: %v", err)
	}
	return f.Vectors
}

// needTool returns the path of a toolchain binary, skipping the test when
// it is missing unless KEYGUARD_REQUIRE_TOOLCHAINS is set.
func needTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("KEYGUARD_REQUIRE_TOOLCHAINS") != "" {
			t.Fatalf("%s not found and KEYGUARD_REQUIRE_TOOLCHAINS is set: install it (see .ci/run)", name)
		}
		t.Skipf("%s not found; set KEYGUARD_REQUIRE_TOOLCHAINS=1 to make this a failure", name)
	}
	return p
}

// repoRoot is the directory of the module's go.mod, above the test's
// working directory.
func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test directory")
		}
		dir = parent
	}
}

func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("%s %v: %v\n%s\n%s", name, args, err, out, stderr)
	}
	return string(out)
}
