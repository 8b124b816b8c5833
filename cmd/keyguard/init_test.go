package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/hotkey"
	"github.com/keyguard/keyguard/internal/redistest"
	"github.com/keyguard/keyguard/internal/starter"
	"github.com/keyguard/keyguard/redishook"
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
	if code != 0 || !strings.Contains(errOut, "FILL-IN") || strings.Contains(errOut, "partial") {
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
	// The template the audit's registry matched is copied, not suggested.
	if !strings.Contains(text, "(from testdata/clean.yaml)\n  - key: \"order:order:{orderId:int}:base\"") || strings.Count(text, "order:order:{") != 1 {
		t.Errorf("the registered template was not copied once:\n%s", text)
	}
	reg, err := registry.Load(path)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	if len(reg.Entries) != 3 {
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

	// From a partial audit (the server's dump cut in half), init says the
	// families it did not reach are missing, on stderr and in the file.
	if err := c.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	dump, err := os.ReadFile(filepath.Join(srv.Dir, "dump.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	cut, part := filepath.Join(dir, "cut.rdb"), filepath.Join(dir, "part.json")
	os.WriteFile(cut, dump[:len(dump)/2], 0o644)
	if code, _, errOut := runCLI(t, "", "rdb", "--registry", "testdata/clean.yaml", "--format", "json", "--out", part, cut); code != 2 {
		t.Fatalf("rdb of the cut dump: exit %d: %s", code, errOut)
	}
	partPath := filepath.Join(dir, "part.yaml")
	code, _, errOut = runCLI(t, "", "init", "--from-audit", part, "--out", partPath)
	b, _ = os.ReadFile(partPath)
	if code != 0 || !regexp.MustCompile(`warning: \S+part.json is a partial audit \(database 0; \d+\.\d% covered\): the families of the keys it did not reach are not in the registry`).MatchString(errOut) ||
		!strings.Contains(string(b), "# The report is a partial audit (database 0;") {
		t.Errorf("init --from-audit of a partial audit: exit %d: %s\n%s", code, errOut, b)
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

// TestInitStarterDeclaresSDKKeys: the keys keyguard's own SDK writes
// (writer records, hot-key reports, the invalidation channel) match
// templates of the starter, so that they are not unregistered.
func TestInitStarterDeclaresSDKKeys(t *testing.T) {
	reg, err := registry.Parse("keyguard.yaml", []byte(starter.Registry))
	if err != nil {
		t.Fatal(err)
	}
	chk := reg.NewChecker()
	for _, key := range []string{
		redishook.RecordIndexKey, redishook.RecordKey("order:order:{orderId:int}:base"),
		hotkey.RecordIndexKey, hotkey.ReportKey("0123456789abcdef"), "channel:keyguard:invalidate",
	} {
		if res := chk.Check(key, func(finding.Finding) {}); res.Entry == nil {
			t.Errorf("%s matches no template of the starter", key)
		}
	}
}

// TestFirstRun follows docs/init.md in an empty directory: an audit
// without a registry, init --from-audit from its report, the FILL-INs
// decided, lint clean, and an audit with the registry that finds every
// key registered, keyguard's own SDK keys included.
func TestFirstRun(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	c := srv.Client(t)
	pipe := c.Pipeline()
	for i := range 300 {
		pipe.HSet(ctx, fmt.Sprintf("legacy:cart:%d", 1000+i), "sku", i)
		pipe.Expire(ctx, fmt.Sprintf("legacy:cart:%d", 1000+i), time.Hour)
		pipe.Set(ctx, fmt.Sprintf("report:daily:%d", i), "x", 0) // no TTL
		pipe.ZAdd(ctx, fmt.Sprintf("rank:shop:%d:sales", i), redis.Z{Score: 1, Member: "a"})
	}
	pipe.HSet(ctx, redishook.RecordIndexKey, "0123456789abcdef", "order:{id}")
	pipe.ZAdd(ctx, redishook.RecordKey("order:{id}"), redis.Z{Score: 1, Member: "order-service"})
	pipe.Expire(ctx, redishook.RecordKey("order:{id}"), time.Hour)
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Chdir(dir)

	// 1. The audit runs without a registry and ends with what to run next.
	code, out, errOut := runCLI(t, "", "audit", "--redis", srv.URL())
	if code != 0 {
		t.Fatalf("audit without a registry: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"no registry", "not checked (no registry): unregistered keys, owners", "legacy:cart:{id:int}", "largest keys",
		"next: keyguard audit --redis URL --format json --out audit.json, then keyguard init --from-audit audit.json"} {
		if !strings.Contains(out, want) {
			t.Errorf("text report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "unregistered;") || strings.Contains(out, "(unregistered)") {
		t.Errorf("a report without a registry calls keys unregistered:\n%s", out)
	}
	code, _, errOut = runCLI(t, "", "audit", "--redis", srv.URL(), "--format", "json", "--out", "audit.json")
	if code != 0 || !strings.Contains(errOut, "next: keyguard init --from-audit audit.json") {
		t.Fatalf("audit --format json: exit %d: %s", code, errOut)
	}
	// A partial one's next step is --resume, not a registry of what it
	// reached.
	code, _, errOut = runCLI(t, "", "audit", "--redis", srv.URL(), "--count", "5", "--rate", "400", "--timeout", "300ms", "--format", "json", "--out", "part.json")
	if code != exitError || !strings.Contains(errOut, "continue with --resume part.json") || strings.Contains(errOut, "next: keyguard init") || !strings.Contains(errOut, "no registry") {
		t.Fatalf("partial audit --format json: exit %d: %s", code, errOut)
	}
	rep, err := readReportFile(&env{}, "audit.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.NotChecked) == 0 || rep.Summary.ByRule[finding.Unregistered] != 0 || rep.Summary.ByRule[finding.Domain] != 0 {
		t.Errorf("report: not_checked %v, by rule %v", rep.NotChecked, rep.Summary.ByRule)
	}

	// 2. init --from-audit writes the registry of those families.
	code, _, errOut = runCLI(t, "", "init", "--from-audit", "audit.json")
	if code != 0 || !strings.Contains(errOut, "wrote keyguard.yaml") {
		t.Fatalf("init --from-audit: exit %d: %s", code, errOut)
	}
	// 3. lint fails until the FILL-INs are decided, as the docs say.
	if code, out, _ := runCLI(t, "", "lint"); code != 1 {
		t.Fatalf("lint before the FILL-INs are replaced: exit %d\n%s", code, out)
	}
	b, err := os.ReadFile("keyguard.yaml")
	if err != nil {
		t.Fatal(err)
	}
	filled := regexp.MustCompile(`owner: FILL-IN`).ReplaceAllString(string(b), "owner: shop-team")
	filled = regexp.MustCompile(`desc: "FILL-IN[^"]*"`).ReplaceAllString(filled, `desc: "checked"`)
	if err := os.WriteFile("keyguard.yaml", []byte(filled), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runCLI(t, "", "lint"); code != 0 {
		t.Fatalf("lint of the decided registry: exit %d\n%s%s\n%s", code, out, errOut, filled)
	}
	// 4. The audit with it: every key registered.
	code, _, errOut = runCLI(t, "", "audit", "--redis", srv.URL(), "--format", "json", "--out", "again.json")
	if code > 1 {
		t.Fatalf("audit with the registry: exit %d: %s", code, errOut)
	}
	again, err := readReportFile(&env{}, "again.json")
	if err != nil {
		t.Fatal(err)
	}
	if again.Summary.Unregistered != 0 || again.Summary.Keys != 902 || len(again.NotChecked) != 0 || again.Registry != "keyguard.yaml" {
		var un []string
		for _, g := range again.Groups {
			if g.Kind == "prefix" {
				un = append(un, g.Name)
			}
		}
		t.Fatalf("audit with the registry: %d keys, %d unregistered %v, registry %q\n%s", again.Summary.Keys, again.Summary.Unregistered, un, again.Registry, filled)
	}
}

// TestInitFromAuditKeepsRegistered: keys an audit found registered (here
// by the starter) stay covered in the registry init --from-audit writes:
// their entries are copied from the registry the audit used.
func TestInitFromAuditKeepsRegistered(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	c := srv.Client(t)
	for i := range 20 {
		c.HSet(ctx, fmt.Sprintf("auth:session:%d", i), "u", i)
		c.Expire(ctx, fmt.Sprintf("auth:session:%d", i), 10*time.Minute)
		c.Set(ctx, fmt.Sprintf("legacy:cart:%d", i), "x", time.Hour)
	}
	c.HSet(ctx, redishook.RecordIndexKey, "0123456789abcdef", "order:{id}")
	t.Chdir(t.TempDir())
	if code, _, errOut := runCLI(t, "", "init"); code != 0 {
		t.Fatal(errOut)
	}
	if code, _, errOut := runCLI(t, "", "audit", "--redis", srv.URL(), "--format", "json", "--out", "audit.json"); code > 1 {
		t.Fatalf("audit: exit %d: %s", code, errOut)
	}
	if code, _, errOut := runCLI(t, "", "init", "--from-audit", "audit.json", "--out", "new.yaml"); code != 0 {
		t.Fatalf("init --from-audit: exit %d: %s", code, errOut)
	}
	b, _ := os.ReadFile("new.yaml")
	text := string(b)
	for _, want := range []string{`- key: "auth:session:{userId:int}"`, `- key: "keyguard:{{writers}}:index"`, `- key: "legacy:cart:{id:int}"`, `auth: {owner: identity-team`} {
		if !strings.Contains(text, want) {
			t.Errorf("new.yaml lacks %q:\n%s", want, text)
		}
	}
	filled := regexp.MustCompile(`owner: FILL-IN`).ReplaceAllString(text, "owner: shop-team")
	filled = regexp.MustCompile(`desc: "FILL-IN[^"]*"`).ReplaceAllString(filled, `desc: "checked"`)
	os.WriteFile("new.yaml", []byte(filled), 0o644)
	if code, out, errOut := runCLI(t, "", "lint", "--registry", "new.yaml"); code != 0 {
		t.Fatalf("lint: exit %d\n%s%s\n%s", code, out, errOut, filled)
	}
	if code, _, errOut := runCLI(t, "", "audit", "--redis", srv.URL(), "--registry", "new.yaml", "--format", "json", "--out", "again.json"); code > 1 {
		t.Fatalf("audit again: exit %d: %s", code, errOut)
	}
	again, err := readReportFile(&env{}, "again.json")
	if err != nil {
		t.Fatal(err)
	}
	if again.Summary.Unregistered != 0 || again.Summary.Keys != 41 {
		t.Errorf("with the new registry: %d keys, %d unregistered\n%s", again.Summary.Keys, again.Summary.Unregistered, filled)
	}
}

// TestInitFromAuditGeneralizes: e-mail addresses and numbers glued to
// words become placeholders: one entry per family, no address in the
// registry, and the filled registry lints without overlaps (zadd{n:int},
// a key without a domain segment, keeps its domain finding); a domain
// opening with digits (2fa) is a word and declared.
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
		pipe.Set(ctx, fmt.Sprintf("2fa:code:%d", 1000+i), "x", time.Hour)
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
	for _, want := range []string{`- key: "sess:user:{email:hash}"`, `- key: "sess:tel:{phone:hash}"`, `- key: "zadd{n:int}"`, `- key: "2fa:code:{id:int}"`} {
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
	if !slices.ContainsFunc(reg.Domains, func(d registry.Domain) bool { return d.Name == "2fa" }) {
		t.Errorf("domain 2fa not declared:\n%s", text)
	}
	if len(reg.Entries) > 5 {
		t.Errorf("%d entries, want one per family:\n%s", len(reg.Entries), text)
	}
	filled := regexp.MustCompile(`owner: FILL-IN`).ReplaceAllString(text, "owner: shop-team")
	filled = regexp.MustCompile(`desc: "FILL-IN[^"]*"`).ReplaceAllString(filled, `desc: "checked"`)
	os.WriteFile(path, []byte(filled), 0o644)
	code, out, _ := runCLI(t, "", "lint", "--registry", path)
	if code > 1 || strings.Contains(out, "overlap") || !strings.Contains(out, "5 templates, 1 error, 0 warnings") || !strings.Contains(out, "error domain: the first segment is a placeholder") {
		t.Fatalf("lint of the filled registry: exit %d\n%s\n%s", code, out, filled)
	}
}
