package migrate

import (
	"testing"

	"github.com/keyguard/keyguard/registry"
)

func testRegistry(t testing.TB) *registry.Registry {
	t.Helper()
	reg, err := registry.Load("testdata/keyguard.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return reg
}
