package plugin_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/golangci/plugin-module-register/register"
	"golang.org/x/tools/go/analysis/analysistest"

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
	dir, _ := filepath.Abs("../testdata")
	analysistest.Run(t, dir, as[0], "./store")
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
