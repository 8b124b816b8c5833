package audit

import (
	"testing"

	"github.com/keyguard/keyguard/registry"
)

// The datasets of the integration tests (internal/plant) are written for
// audit/testdata/keyguard.yaml.

func testRegistry(t testing.TB) *registry.Registry {
	t.Helper()
	reg, err := registry.Load("testdata/keyguard.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return reg
}
