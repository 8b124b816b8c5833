package live

import (
	"testing"

	"github.com/keyguard/keyguard/registry"
	"github.com/redis/go-redis/v9"
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

// connFrom is the Conn of a parsed redis:// URL.
func connFrom(o *redis.Options) Conn {
	return Conn{Addr: o.Addr, Username: o.Username, Password: o.Password, DB: o.DB, TLS: o.TLSConfig, DialTimeout: o.DialTimeout, Dialer: o.Dialer}
}
