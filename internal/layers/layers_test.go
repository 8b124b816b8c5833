// Package layers holds the test that keeps the house's imports pointing
// one way: the pure packages (templates, registry, rules, aggregation,
// reports, the RDB decoder, code generation) never reach for a network,
// a Redis client or the command line. ARCHITECTURE.md draws the layers.
package layers

import (
	"os/exec"
	"strings"
	"testing"
)

// pure are the packages that work on data alone.
var pure = []string{
	"keytmpl", "registry", "naming", "finding", "keybuild", "inventory", "report",
	"rdb", "snapshot", "codegen", "acl", "internal/jsonkeys", "internal/glob", "internal/monitor", "internal/swar", "internal/keyslot",
}

// forbidden reports why a pure package may not depend on dep.
func forbidden(dep string) string {
	switch {
	case dep == "net" || dep == "net/http" || strings.HasPrefix(dep, "crypto/tls"):
		return "the network"
	case strings.HasPrefix(dep, "github.com/redis/go-redis"):
		return "a Redis client"
	case strings.HasPrefix(dep, "github.com/keyguard/keyguard/cmd/"):
		return "the command line"
	case dep == "github.com/keyguard/keyguard/audit" || dep == "github.com/keyguard/keyguard/internal/resp":
		return "the live audit"
	}
	return ""
}

func TestPurePackagesStayPure(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	for _, p := range pure {
		out, err := exec.Command("go", "list", "-deps", "github.com/keyguard/keyguard/"+p).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", p, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			if why := forbidden(dep); why != "" {
				t.Errorf("%s depends on %s (%s): pure packages work on data; move that code to a package beside audit, or to cmd/keyguard", p, dep, why)
			}
		}
	}
}

// The check catches what it should: the live audit does reach the
// network.
func TestForbiddenCatchesTheAudit(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/keyguard/keyguard/audit").CombinedOutput()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	found := false
	for _, dep := range strings.Fields(string(out)) {
		found = found || forbidden(dep) != ""
	}
	if !found {
		t.Error("the audit's dependencies show nothing forbidden: the check has gone blind")
	}
}
