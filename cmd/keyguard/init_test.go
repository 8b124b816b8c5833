package main

import (
	"context"
	"fmt"
	"github.com/redis/go-redis/v9"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/keyguard/keyguard/internal/redistest"
	"github.com/keyguard/keyguard/registry"
)

// TestInitStarter: the starter registry declares the usual domains, lints
// clean, and is never written over an existing file without --force.
func TestInitStarter(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "keyguard.yaml")
	code, out, errOut := runCLI(t, "", "init", "--out", path)
	if code != 0 || out != "" || !strings.Contains(errOut, "wrote "+path) {
		t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
	}
	reg, err := registry.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if fds := reg.Lint(); len(fds) != 0 {
		t.Fatalf("the starter has findings: %+v", fds)
	}
	for _, d := range []string{"auth", "cache", "lock", "rate", "verify", "seq", "channel", "queue", "rank", "config"} {
		dom, ok := reg.Domain(d)
		if !ok || dom.Owner == "" {
			t.Errorf("domain %s missing or ownerless", d)
		}
		found := false
		for _, e := range reg.Entries {
			found = found || e.Domain == d
		}
		if !found {
			t.Errorf("no example entry in domain %s", d)
		}
	}
	if code, _, _ := runCLI(t, "", "lint", "--registry", path, "--fail-on", "info"); code != 0 {
		t.Errorf("lint --fail-on info: exit %d", code)
	}

	// An existing file stays untouched without --force.
	os.WriteFile(path, []byte("mine\n"), 0o644)
	code, _, errOut = runCLI(t, "", "init", "-o", path)
	if b, _ := os.ReadFile(path); code != 2 || string(b) != "mine\n" || !strings.Contains(errOut, "--force") {
		t.Fatalf("overwrite: exit %d, file %q, %s", code, b, errOut)
	}
	if code, _, errOut := runCLI(t, "", "init", "-o", path, "--force"); code != 0 {
		t.Fatalf("--force: exit %d: %s", code, errOut)
	}
	if _, err := registry.Load(path); err != nil {
		t.Fatal(err)
	}
	// - writes to stdout.
	if code, out, _ := runCLI(t, "", "init", "--out", "-"); code != 0 || !strings.HasPrefix(out, "# keyguard.yaml") {
		t.Fatalf("--out -: exit %d", code)
	}
}

// TestInitFromAudit: an audit of a keyspace with unregistered families
// gives a registry with one entry per family, which loads, fails lint
// until every FILL-IN is replaced, and passes once they are.
func TestInitFromAudit(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	c := srv.Client(t)
	pipe := c.Pipeline()
	for i := 0; i < 300; i++ {
		pipe.HSet(ctx, fmt.Sprintf("legacy:cart:%d", 1000+i), "sku", i)
		pipe.Expire(ctx, fmt.Sprintf("legacy:cart:%d", 1000+i), time.Hour)
		pipe.Set(ctx, fmt.Sprintf("report:daily:%d", i), "x", 0) // no TTL
		pipe.Set(ctx, fmt.Sprintf("order:order:%d:base", i), "x", time.Hour)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rep := filepath.Join(dir, "audit.json")
	if code, _, errOut := runCLI(t, "", "audit", "--redis", srv.URL(), "--registry", "testdata/clean.yaml", "--format", "json", "--out", rep); code > 1 {
		t.Fatalf("audit: exit %d: %s", code, errOut)
	}
	path := filepath.Join(dir, "keyguard.yaml")
	code, _, errOut := runCLI(t, "", "init", "--from-audit", rep, "--out", path)
	if code != 0 || !strings.Contains(errOut, "FILL-IN") {
		t.Fatalf("init --from-audit: exit %d: %s", code, errOut)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for _, want := range []string{`- key: "legacy:cart:{id:int}"`, `- key: "report:daily:{id:int}"`, "legacy: {owner: FILL-IN", "report: {owner: FILL-IN", "type: hash", "ttl: 1h # FILL-IN"} {
		if !strings.Contains(text, want) {
			t.Errorf("registry lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "order:order") {
		t.Errorf("a registered template was suggested:\n%s", text)
	}
	reg, err := registry.Load(path)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	if len(reg.Entries) != 2 {
		t.Fatalf("%d entries:\n%s", len(reg.Entries), text)
	}
	code, out, _ := runCLI(t, "", "lint", "--registry", path)
	if code != 1 || !strings.Contains(out, "owner is still FILL-IN") || !strings.Contains(out, "desc is still FILL-IN") {
		t.Fatalf("lint of the unfilled registry: exit %d\n%s", code, out)
	}

	// Filled in, it passes.
	filled := regexp.MustCompile(`owner: FILL-IN`).ReplaceAllString(text, "owner: shop-team")
	filled = regexp.MustCompile(`desc: "FILL-IN[^"]*"`).ReplaceAllString(filled, `desc: "checked"`)
	os.WriteFile(path, []byte(filled), 0o644)
	if code, out, _ := runCLI(t, "", "lint", "--registry", path); code != 0 {
		t.Fatalf("lint of the filled registry: exit %d\n%s\n%s", code, out, filled)
	}

	// A report without suggestions says so.
	clean := filepath.Join(dir, "clean.json")
	srv2 := redistest.Start(t)
	srv2.Client(t).Set(ctx, "order:order:1:base", "x", time.Hour)
	runCLI(t, "", "audit", "--redis", srv2.URL(), "--registry", "testdata/clean.yaml", "--format", "json", "--out", clean)
	if code, _, errOut := runCLI(t, "", "init", "--from-audit", clean, "--out", filepath.Join(dir, "none.yaml")); code != 2 || !strings.Contains(errOut, "no suggested entries") {
		t.Fatalf("no suggestions: exit %d: %s", code, errOut)
	}
}

// TestInitFromAuditGeneralizes: e-mail addresses and numbers glued to
// words become placeholders: one entry per family, no address in the
// registry, and the filled registry lints without overlaps (zadd{n:int},
// a key without a domain segment, keeps its domain finding).
func TestInitFromAuditGeneralizes(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	c := srv.Client(t)
	pipe := c.Pipeline()
	for i := range 50 {
		pipe.Set(ctx, fmt.Sprintf("sess:user:user%d@example.com", i), "x", time.Hour)
		pipe.Set(ctx, fmt.Sprintf("sess:tel:1391234%04d", i), "x", time.Hour)
	}
	for i := range 100 {
		pipe.ZAdd(ctx, fmt.Sprintf("zadd%d", i), redis.Z{Score: 1, Member: "m"})
	}
	pipe.ZAdd(ctx, "zadd{n}", redis.Z{Score: 1, Member: "m"})
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rep := filepath.Join(dir, "audit.json")
	if code, _, errOut := runCLI(t, "", "audit", "--redis", srv.URL(), "--registry", "testdata/clean.yaml", "--format", "json", "--out", rep); code > 1 {
		t.Fatalf("audit: exit %d: %s", code, errOut)
	}
	path := filepath.Join(dir, "keyguard.yaml")
	if code, _, errOut := runCLI(t, "", "init", "--from-audit", rep, "--out", path); code != 0 {
		t.Fatalf("init --from-audit: exit %d: %s", code, errOut)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for _, want := range []string{`- key: "sess:user:{email:hash}"`, `- key: "sess:tel:{phone:hash}"`, `- key: "zadd{n:int}"`} {
		if !strings.Contains(text, want) {
			t.Errorf("registry lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "@example.com") || strings.Contains(text, "1391234") {
		t.Errorf("the registry keeps personal data:\n%s", text)
	}
	reg, err := registry.Load(path)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	if len(reg.Entries) > 4 {
		t.Errorf("%d entries, want one per family:\n%s", len(reg.Entries), text)
	}
	filled := regexp.MustCompile(`owner: FILL-IN`).ReplaceAllString(text, "owner: shop-team")
	filled = regexp.MustCompile(`desc: "FILL-IN[^"]*"`).ReplaceAllString(filled, `desc: "checked"`)
	os.WriteFile(path, []byte(filled), 0o644)
	code, out, _ := runCLI(t, "", "lint", "--registry", path)
	if code > 1 || strings.Contains(out, "overlap") || !strings.Contains(out, "4 templates, 1 error, 0 warnings") || !strings.Contains(out, "error domain: the first segment is a placeholder") {
		t.Fatalf("lint of the filled registry: exit %d\n%s\n%s", code, out, filled)
	}
}
