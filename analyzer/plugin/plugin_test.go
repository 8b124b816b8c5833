package plugin_test

import (
	"bytes"
	"go/types"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/golangci/plugin-module-register/register"
	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/packages"

	_ "github.com/keyguard/keyguard/analyzer/plugin"
)

// golangci-lint finds the plugin by name, builds it from its settings and
// runs the analyzers it returns.
func TestPlugin(t *testing.T) {
	newPlugin, err := register.GetPlugin("keylint")
	if err != nil {
		t.Fatal(err)
	}
	p, err := newPlugin(map[string]any{"registry": "../testdata/keyguard.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	if p.GetLoadMode() != register.LoadModeTypesInfo {
		t.Errorf("load mode %q", p.GetLoadMode())
	}
	as, err := p.BuildAnalyzers()
	if err != nil || len(as) != 1 || as[0].Name != "keylint" {
		t.Fatalf("analyzers %v, %v", as, err)
	}
	// Run it as golangci-lint does, on a package type-checked with its
	// imports from export data.
	cfg := &packages.Config{Dir: goTestModule(t, "../testdata"), Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax |
		packages.NeedTypes | packages.NeedTypesInfo | packages.NeedTypesSizes | packages.NeedImports}
	pkgs, err := packages.Load(cfg, "./store")
	if err != nil || len(pkgs) != 1 || len(pkgs[0].Errors) > 0 {
		t.Fatalf("load: %v %v", err, pkgs)
	}
	pk := pkgs[0]
	var diags []string
	pass := &analysis.Pass{
		Analyzer: as[0], Fset: pk.Fset, Files: pk.Syntax, Pkg: pk.Types, TypesInfo: pk.TypesInfo, TypesSizes: pk.TypesSizes,
		Report:           func(d analysis.Diagnostic) { diags = append(diags, d.Message) },
		ImportObjectFact: func(types.Object, analysis.Fact) bool { return false },
		ExportObjectFact: func(types.Object, analysis.Fact) {},
	}
	if _, err := as[0].Run(pass); err != nil {
		t.Fatal(err)
	}
	if len(diags) != 1 || !strings.HasPrefix(diags[0], `unregistered-code: key "tmp:touch:{id}"`) {
		t.Errorf("diagnostics %q", diags)
	}
}

func TestPluginSettings(t *testing.T) {
	newPlugin, _ := register.GetPlugin("keylint")
	for _, tt := range []struct {
		conf any
		want string
	}{
		{map[string]any{"registy": "x.yaml"}, "only setting is registry"},
		{map[string]any{"registry": "../testdata/none.yaml"}, "none.yaml"},
	} {
		if _, err := newPlugin(tt.conf); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: error %v, want %q", tt.conf, err, tt.want)
		}
	}
}

// goTestModule copies keylint's test services' module to a temporary
// directory, its replace directive made absolute, and lets the go command
// complete its go.sum there (GOFLAGS=-mod=mod), so that a move of
// keyguard's own requirements does not break the test and nothing is
// written into the checkout.
func goTestModule(t *testing.T, testdata string) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join(testdata, "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(testdata)); err != nil {
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
