package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/keyguard/keyguard/internal/redistest"
)

const migrateRegistry = `version: 1
separator: ":"
domains:
  promo: {owner: promo-team}
  order: {owner: order-team}
  user: {owner: user-team}
keys:
  - {key: "promo:sku:{skuId:int}", type: hash, ttl: 10m, guard: true}
  - {key: "order:sku:{skuId:int}:settle-preview", type: hash, ttl: 5m}
  - key: "user:profile:{id}:base"
    type: string
    ttl: 1h
    deprecated: {replaced_by: "user:profile:v2:{id:int}:base"}
  - {key: "user:profile:v2:{id:int}:base", type: string, ttl: 1h}
`

func migrateFiles(t *testing.T) (dir, reg string) {
	t.Helper()
	dir = t.TempDir()
	reg = filepath.Join(dir, "keyguard.yaml")
	if err := os.WriteFile(reg, []byte(migrateRegistry), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, reg
}

func TestMigratePlan(t *testing.T) {
	_, reg := migrateFiles(t)
	code, out, errOut := runCLI(t, "", "migrate", "plan", "--registry", reg, "--from", "promo:sku:{skuId:int}", "--to", "order:sku:{skuId:int}:settle-preview", "--fields", "couponAmount,promoTotal")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"promo:sku:{skuId:int} → order:sku:{skuId:int}:settle-preview",
		"hash, promo-team, ttl 10m → order-team, ttl 5m",
		"moves the hash fields couponAmount, promoTotal",
		"{skuId}: int → int, copied as is",
		"SCAN MATCH promo:sku:* on every master",
		"promo:sku:1234567890 → order:sku:1234567890:settle-preview",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("plan output lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runCLI(t, "", "migrate", "plan", "--registry", reg, "--all-deprecated", "--format", "json")
	var doc struct {
		Plans []struct {
			From, To string
			Mappings []struct{ Name, Conversion string } `json:"placeholders"`
		}
	}
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil || len(doc.Plans) != 1 || doc.Plans[0].Mappings[0].Conversion != "check" {
		t.Errorf("--all-deprecated json: exit %d\n%s", code, out)
	}
}

func TestMigrateUsageErrors(t *testing.T) {
	_, reg := migrateFiles(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"migrate"}, "give a step"},
		{[]string{"migrate", "move"}, "unknown step"},
		{[]string{"migrate", "plan", "--registry", reg, "--from", "promo:sku:{skuId:int}"}, "--to NEW_TEMPLATE"},
		{[]string{"migrate", "plan", "--registry", reg, "--from", "promo:sku:{skuId:int}", "--to", "order:x:{skuId}"}, "is not in the registry"},
		{[]string{"migrate", "plan", "--registry", reg, "--from", "user:profile:{id}:base", "--to", "order:sku:{skuId:int}:settle-preview"}, "type changes"},
		{[]string{"migrate", "plan", "--registry", reg, "--all-deprecated", "--from", "a:{x}"}, "not both"},
		{[]string{"migrate", "cleanup", "--registry", reg, "--all-deprecated", "--redis", "redis://127.0.0.1:1"}, "--confirm"},
		{[]string{"migrate", "copy", "--registry", reg, "--all-deprecated", "--redis", "redis://127.0.0.1:1", "--max-keys", "5"}, "--cursor"},
		{[]string{"migrate", "copy", "--registry", reg, "--all-deprecated"}, "--redis"},
	} {
		code, _, errOut := runCLI(t, "", tt.args...)
		if code != 2 || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tt.args, code, errOut, tt.want)
		}
	}
	if code, out, _ := runCLI(t, "", "migrate", "-h"); code != 0 || !strings.Contains(out, "cleanup") {
		t.Errorf("migrate -h: exit %d\n%s", code, out)
	}
}

func TestMigrateSteps(t *testing.T) {
	dir, reg := migrateFiles(t)
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	for i := range 300 {
		rdb.Set(ctx, fmt.Sprintf("user:profile:%d:base", i), fmt.Sprintf("p%d", i), time.Hour)
	}
	rdb.Set(ctx, "user:profile:abc:base", "legacy", time.Hour) // does not fit {id:int}
	rdb.Set(ctx, "user:profile:v2:7:base", "newer", time.Hour) // a dual-writer was first
	common := []string{"--registry", reg, "--redis", srv.URL(), "--all-deprecated", "--progress", "never"}
	step := func(args ...string) (int, string, string) {
		return runCLI(t, "", append(append([]string{"migrate"}, args...), common...)...)
	}

	cursor := filepath.Join(dir, "copy.cursor")
	code, _, errOut := step("copy", "--cursor", cursor, "--max-keys", "100", "--batch", "50")
	if code != 0 || !strings.Contains(errOut, "stopped at --max-keys") {
		t.Fatalf("copy --max-keys: exit %d, %s", code, errOut)
	}
	code, out, errOut := step("copy", "--cursor", cursor, "--format", "json")
	var doc struct {
		Target  string
		Results []struct {
			Complete    bool
			ResumedFrom string `json:"resumed_from"`
			Counts      map[string]int64
		}
	}
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil || !doc.Results[0].Complete || doc.Results[0].ResumedFrom != cursor {
		t.Fatalf("resumed copy: exit %d %s\n%s", code, errOut, out)
	}
	if c := doc.Results[0].Counts; c["keys"] != 301 || c["copied"]+c["skipped_existing"] != 300 || c["not_fit"] != 1 {
		t.Errorf("counts %v", c)
	}
	if got := rdb.Get(ctx, "user:profile:v2:7:base").Val(); got != "newer" {
		t.Errorf("copy overwrote a newer value: %q", got)
	}

	code, out, _ = step("verify")
	if code != 1 || !strings.Contains(out, "MISMATCH user:profile:7:base: content") || !strings.Contains(out, "MISMATCH user:profile:abc:base: not-fit") {
		t.Errorf("verify: exit %d\n%s", code, out)
	}
	code, out, _ = step("cleanup", "--dry-run")
	if code != 1 || !strings.Contains(out, "299 would be removed") {
		t.Errorf("cleanup --dry-run: exit %d\n%s", code, out)
	}
	code, out, _ = step("cleanup", "--confirm", "--rate", "100000")
	if code != 1 || !strings.Contains(out, "299 removed") || !strings.Contains(out, "1 left: they do not verify, 1 do not fit") {
		t.Errorf("cleanup: exit %d\n%s", code, out)
	}
	if n := rdb.Exists(ctx, "user:profile:1:base").Val(); n != 0 {
		t.Error("a verified old key is still there")
	}
	if n := rdb.Exists(ctx, "user:profile:7:base").Val() + rdb.Exists(ctx, "user:profile:abc:base").Val(); n != 2 {
		t.Error("cleanup deleted an old key that does not verify")
	}

	srv.Stop()
	code, _, errOut = step("verify")
	if code != 2 || !strings.Contains(errOut, "connection refused") {
		t.Errorf("server down: exit %d, %s", code, errOut)
	}
}
