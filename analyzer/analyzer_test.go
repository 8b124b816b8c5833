package analyzer_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/keyguard/keyguard/analyzer"
	"github.com/keyguard/keyguard/internal/codegen"
	"github.com/keyguard/keyguard/registry"
)

var update = flag.Bool("update", false, "rewrite testdata/keys/keyguard_gen.go")

func testRegistry(t *testing.T) *registry.Registry {
	t.Helper()
	reg, err := registry.Load("testdata/keyguard.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// The builder package the test services call is keyguard gen's output for
// the test registry.
func TestGeneratedKeysUpToDate(t *testing.T) {
	f, err := codegen.Generate(testRegistry(t), codegen.Options{Lang: codegen.Go, Package: "keys"})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "keys", f.Name)
	if *update {
		if err := os.WriteFile(path, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, f.Data) {
		t.Errorf("%s is stale: go test ./analyzer -run TestGeneratedKeysUpToDate -update", path)
	}
}

// Every construction in testdata/svc, testdata/store and testdata/fix
// carries its expected finding ("// want"), facts included; the files
// ending in .golden are the sources after the suggested fixes (builder
// calls, the builder's package imported where a file lacks it, no fix that
// would leave a variable unused). One load: the packages are type-checked
// from source with go-redis, which is the slow part.
func TestAnalyzer(t *testing.T) {
	analysistest.RunWithSuggestedFixes(t, testModule(t), analyzer.New(testRegistry(t)), "./svc", "./store", "./fix", "./rue", "./redi")
}

// testModule copies the test services' module (testdata, whose go.mod
// replaces keyguard with this checkout) to a temporary directory and lets
// the go command complete its go.sum there (GOFLAGS=-mod=mod): the test
// keeps working when keyguard's own requirements move, and writes nothing
// into the checkout.
func testModule(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata")); err != nil {
		t.Fatal(err)
	}
	gomod := filepath.Join(dir, "go.mod")
	data, err := os.ReadFile(gomod)
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.Replace(data, []byte("=> ../.."), []byte("=> "+root), 1)
	if err := os.WriteFile(gomod, data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOFLAGS", "-mod=mod")
	return dir
}
