package analyzer_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/keyguard/keyguard/analyzer"
	"github.com/keyguard/keyguard/codegen"
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

func TestAnalyzer(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), analyzer.New(testRegistry(t)), "./svc", "./store")
}

// The suggested fix calls the generated builder, and imports its package
// in a file that does not yet.
func TestSuggestedFixes(t *testing.T) {
	analysistest.RunWithSuggestedFixes(t, analysistest.TestData(), analyzer.New(testRegistry(t)), "./fix")
}
