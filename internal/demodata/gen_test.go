package demodata_test

import (
	"testing"

	"github.com/keyguard/keyguard/internal/codegen"
	"github.com/keyguard/keyguard/internal/demodata"
	"github.com/keyguard/keyguard/registry"
)

// TestKeysUpToDate fails when keyguard.yaml changed and the committed
// package keys was not regenerated.
func TestKeysUpToDate(t *testing.T) {
	reg, err := registry.Parse(demodata.File, demodata.Registry)
	if err != nil {
		t.Fatal(err)
	}
	f, err := codegen.Generate(reg, codegen.Options{Lang: codegen.Go, Package: "keys", Source: demodata.File})
	if err != nil {
		t.Fatal(err)
	}
	diff, err := f.Diff("keys")
	if err != nil {
		t.Fatal(err)
	}
	if diff != nil {
		t.Errorf("internal/demodata/keys is stale: run go generate ./internal/demodata\n%s", diff)
	}
}
