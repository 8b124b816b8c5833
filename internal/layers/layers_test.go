// Package layers holds the tests that keep the house's imports pointing one
// way, in the manner of Go's own go/build/deps_test.go: a table of rules says
// which keyguard package may import which, and the test checks every import
// of every package against it. ARCHITECTURE.md draws the same layers.
package layers

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/keyguard/keyguard/"

// rules lists the packages of the module, lowest first. "A, B < C, D" means
// C and D may import A, B and whatever A and B may import; "NONE < X" means X
// imports no package of this module. Every package of the module must appear
// on the right of exactly one rule.
const rules = `
# Kernels and vocabularies: small, pure, each beside its reference test.
NONE < internal/swar, internal/glob, internal/keyslot, internal/monitor, internal/human, internal/atomicfile, internal/treemap, internal/pace, internal/progress,
       internal/resp, keybuild, hotkey/topk, internal/rediscmd/internal/namehash, internal/hugepage, internal/valueform;
internal/swar < internal/jsonkeys;
internal/swar < internal/jsonout;
internal/rediscmd/internal/namehash < internal/rediscmd;
internal/glob, internal/swar < keytmpl;
internal/human < finding;
finding < naming;
finding, internal/jsonout < internal/sarif;

# The registry and what is written from it (pure).
keytmpl, naming, internal/keyslot, internal/swar < registry;
internal/keyslot < internal/topology;
registry, keybuild, internal/atomicfile < internal/codegen;
registry, internal/codegen < internal/keyshape;

# The Go SDK: what a service imports. It imports no tool.
NONE < guard;
registry, keybuild < migration;
registry, keybuild, internal/jsonkeys, internal/rediscmd < ttlpolicy;
guard, registry, internal/jsonkeys, internal/rediscmd < redishook;
ttlpolicy, keybuild, hotkey/topk, internal/rediscmd, internal/keyslot, internal/pace < hotkey;
migration, internal/keyslot < dualwrite;
registry, internal/keyshape, internal/rediscmd < analyzer;
analyzer < analyzer/plugin;

# Audits: sources -> one aggregation -> the report (the report is pure).
registry, internal/treemap, internal/topology, internal/jsonout < internal/audit/report;
# The command line's conventions (flags, exit errors, output files, progress), pure.
internal/audit/report, internal/atomicfile, internal/human, internal/hugepage < internal/cli;
# Connections to Redis and why one failed, for every command that talks to it.
internal/cli, internal/topology, internal/resp < internal/redisconn;
internal/audit/report, internal/hugepage, internal/valueform < internal/audit/inventory;
internal/jsonkeys, internal/valueform < internal/rdb;
internal/resp < internal/resp/redisopt;
internal/audit/inventory, internal/resp, internal/jsonkeys, internal/valueform, internal/pace, internal/progress, internal/cli, internal/redisconn, internal/rdb < internal/audit/live;
internal/audit/inventory, internal/rdb, internal/glob, internal/keyslot, internal/progress, internal/cli < internal/audit/snapshot;
# A live server's snapshot, asked for over the replication link and audited as a file.
internal/audit/live, internal/audit/snapshot, internal/audit/report, internal/resp, internal/topology, internal/keyslot, registry < internal/audit/replsync;
# The registries keyguard init writes (starter, from an audit report).
internal/cli < internal/starter;

# The other tools.
registry < internal/acl;
internal/audit/live, internal/audit/report, migration, internal/keyslot, internal/atomicfile, internal/pace, internal/progress, internal/jsonout, internal/resp, internal/resp/redisopt, internal/redisconn < internal/migrate;
internal/audit/live, internal/audit/replsync, internal/audit/snapshot, internal/audit/inventory, internal/audit/report, registry, hotkey, internal/monitor, internal/resp/redisopt, internal/rediscmd, internal/pace, internal/jsonout, internal/redisconn < internal/hotkeys;
registry, internal/cli, internal/sarif < internal/keycheck;
redishook, internal/redisconn, internal/jsonout < internal/writers;
internal/audit/live, registry, internal/glob, internal/jsonkeys, internal/valueform, internal/monitor, internal/resp/redisopt, internal/rediscmd, internal/pace, internal/jsonout, internal/redisconn < internal/investigate;
analyzer, internal/keyshape, internal/rediscmd, internal/sarif, internal/cli < internal/scancode;
internal/audit/live, internal/audit/replsync, internal/audit/snapshot, internal/audit/report, hotkey, redishook, internal/atomicfile, internal/jsonout, internal/redisconn < internal/dashboard;

# Test and demo support, benchmarks, commands.
NONE < internal/layers, internal/demodata, clients;
internal/topology < internal/redistest;
guard < internal/guardmodel;
guard, internal/codegen < internal/codegen/clientgen;
finding < internal/plant;
keybuild < internal/demodata/keys;
internal/rediscmd < internal/rediscmd/internal/gencmd;
internal/rediscmd/internal/gencmd < internal/rediscmd/internal/gen;
internal/resp, internal/topology < bench/auditbare;
internal/resp < bench/hotkeysbare, bench/probecost;
NONE < bench/auditgen, bench/walkload, bench/pagefault;
analyzer < cmd/keylint;
internal/audit/live, internal/audit/snapshot, internal/audit/replsync, internal/acl, internal/codegen, internal/dashboard,
  internal/hotkeys, internal/investigate, internal/migrate, internal/scancode, internal/sarif, internal/topology, internal/cli, internal/redisconn, internal/keycheck, internal/writers, internal/starter < cmd/keyguard;
internal/audit/live, internal/demodata, internal/demodata/keys, internal/hotkeys, internal/migrate,
  dualwrite, guard, redishook < cmd/keyguard-demo;
`

// sdk are the packages a service imports; tools are the internal packages
// that only the commands use. No SDK package may depend on a tool, nor on
// the embedded demo server or tree-sitter's cgo grammars.
var (
	sdk = []string{"keytmpl", "registry", "naming", "finding", "keybuild", "guard", "redishook",
		"ttlpolicy", "hotkey", "hotkey/topk", "dualwrite", "migration", "analyzer", "analyzer/plugin"}
	tools = []string{"internal/audit/", "internal/rdb", "internal/investigate", "internal/migrate",
		"internal/hotkeys", "internal/dashboard", "internal/scancode", "internal/acl", "internal/redistest", "internal/redisconn", "internal/cli", "internal/keycheck", "internal/writers", "internal/starter", "internal/guardmodel",
		"internal/demodata", "internal/plant", "cmd/"}
	// pure packages work on data alone: no network, no Redis client.
	pure = []string{"keytmpl", "registry", "naming", "finding", "keybuild", "migration",
		"internal/audit/inventory", "internal/audit/report", "internal/audit/snapshot", "internal/rdb", "internal/cli", "internal/starter",
		"internal/codegen", "internal/acl", "internal/keyshape", "internal/jsonkeys", "internal/glob",
		"internal/monitor", "internal/swar", "internal/keyslot", "internal/valueform"}
)

// allowed parses rules into each package's set of allowed module imports.
func allowed(t *testing.T) map[string]map[string]bool {
	t.Helper()
	var text []string
	for _, line := range strings.Split(rules, "\n") {
		if i := strings.Index(line, "#"); i >= 0 {
			line = line[:i]
		}
		text = append(text, line)
	}
	allow := map[string]map[string]bool{}
	for _, rule := range strings.Split(strings.Join(text, " "), ";") {
		if strings.TrimSpace(rule) == "" {
			continue
		}
		lo, hi, ok := strings.Cut(rule, "<")
		if !ok {
			t.Fatalf("rule without '<': %q", rule)
		}
		set := map[string]bool{}
		for _, p := range fields(lo) {
			if p == "NONE" {
				continue
			}
			below, known := allow[p]
			if !known {
				t.Fatalf("rule %q: %s is used before its own rule", strings.TrimSpace(rule), p)
			}
			set[p] = true
			for q := range below {
				set[q] = true
			}
		}
		for _, p := range fields(hi) {
			if _, dup := allow[p]; dup {
				t.Fatalf("%s has two rules", p)
			}
			allow[p] = set
		}
	}
	return allow
}

func fields(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.Join(strings.Fields(f), ""); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// graph is `go list -deps` of the module: each package's imports and its
// whole dependency closure, without tests.
type pkg struct {
	imports, deps []string
}

func graph(t *testing.T) map[string]pkg {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		if os.Getenv("KEYGUARD_REQUIRE_TOOLCHAINS") == "1" {
			t.Fatal("no go command on PATH")
		}
		t.Skip("no go command on PATH")
	}
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{join .Imports \" \"}}|{{join .Deps \" \"}}", module+"...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	g := map[string]pkg{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		parts := strings.SplitN(line, "|", 3)
		if len(parts) != 3 {
			t.Fatalf("go list line %q", line)
		}
		g[strings.TrimPrefix(parts[0], module)] = pkg{imports: strings.Fields(parts[1]), deps: strings.Fields(parts[2])}
	}
	return g
}

func TestImportRules(t *testing.T) {
	allow := allowed(t)
	g := graph(t)
	for name, p := range g {
		ok, listed := allow[name]
		if !listed {
			t.Errorf("%s has no rule in internal/layers: add it to the table at its layer", name)
			continue
		}
		for _, imp := range p.imports {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			dep := strings.TrimPrefix(imp, module)
			if !ok[dep] {
				t.Errorf("%s imports %s, which the rules do not allow: move the code to the lower package, or change the table in internal/layers on purpose", name, dep)
			}
		}
	}
	for name := range allow {
		if _, exists := g[name]; !exists {
			t.Errorf("the rules name %s, which is not a package of the module", name)
		}
	}
}

func TestSDKImportsNoTool(t *testing.T) {
	g := graph(t)
	for _, name := range sdk {
		p, ok := g[name]
		if !ok {
			t.Errorf("SDK package %s does not exist", name)
			continue
		}
		for _, dep := range p.deps {
			if why := sdkForbidden(dep); why != "" {
				t.Errorf("SDK package %s depends on %s (%s): a service that imports it would link it", name, dep, why)
			}
		}
		// No HTTP server of its own: net/http reaches a service only through
		// the Prometheus client it already links for its metrics.
		if slices.Contains(p.imports, "net/http") {
			t.Errorf("SDK package %s imports net/http: serving HTTP is the tools' (internal/dashboard)", name)
		}
	}
}

func sdkForbidden(dep string) string {
	switch {
	case strings.HasPrefix(dep, "github.com/smacker/go-tree-sitter"):
		return "tree-sitter's cgo grammars"
	case strings.HasPrefix(dep, "github.com/alicebob/miniredis"), strings.HasPrefix(dep, "github.com/yuin/gopher-lua"):
		return "the demo's embedded server"
	case strings.HasPrefix(dep, module):
		rel := strings.TrimPrefix(dep, module)
		if slices.ContainsFunc(tools, func(tool string) bool { return rel == strings.TrimSuffix(tool, "/") || strings.HasPrefix(rel, tool) }) {
			return "a tool package"
		}
	}
	return ""
}

func TestPurePackagesStayPure(t *testing.T) {
	g := graph(t)
	for _, name := range pure {
		p, ok := g[name]
		if !ok {
			t.Errorf("pure package %s does not exist", name)
			continue
		}
		for _, dep := range p.deps {
			if why := impure(dep); why != "" {
				t.Errorf("%s depends on %s (%s): pure packages work on data; move that code to a package beside the live audit, or to cmd/keyguard", name, dep, why)
			}
		}
	}
}

func impure(dep string) string {
	switch {
	case dep == "net" || dep == "net/http" || strings.HasPrefix(dep, "crypto/tls"):
		return "the network"
	case strings.HasPrefix(dep, "github.com/redis/go-redis"):
		return "a Redis client"
	case strings.HasPrefix(dep, module+"cmd/"):
		return "the command line"
	case dep == module+"internal/audit/live" || dep == module+"internal/resp":
		return "the live audit"
	}
	return ""
}

// The checks catch what they should: the live audit reaches the network,
// the commands reach tools, and a rule missing from the table is noticed.
func TestChecksAreNotBlind(t *testing.T) {
	g := graph(t)
	found := false
	for _, dep := range g["internal/audit/live"].deps {
		found = found || impure(dep) != ""
	}
	if !found {
		t.Error("the live audit's dependencies show nothing impure: the purity check has gone blind")
	}
	found = false
	for _, dep := range g["cmd/keyguard"].deps {
		found = found || sdkForbidden(dep) != ""
	}
	if !found {
		t.Error("cmd/keyguard's dependencies show no tool: the SDK check has gone blind")
	}
	allow := allowed(t)
	if allow["keytmpl"]["registry"] || !allow["registry"]["keytmpl"] || !allow["cmd/keyguard"]["keytmpl"] {
		t.Error("the rules table does not order keytmpl below registry below cmd/keyguard")
	}
}
