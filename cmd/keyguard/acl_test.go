package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/redistest"
)

// TestACLCommand loads 'keyguard acl' output into a real server: the
// promo-team user gets NOPERM writing an order key and writes its own.
func TestACLCommand(t *testing.T) {
	ctx := context.Background()
	code, out, errOut := runCLI(t, "", "acl", "--registry", "testdata/sdk.yaml")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "# Key patterns are globs: '*' stands for a placeholder and also matches the separator") {
		t.Errorf("no comment on glob width:\n%s", out)
	}
	srv := redistest.Start(t)
	admin := srv.Client(t)
	for _, line := range strings.Split(out, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var args []any
		for _, f := range strings.Fields(line) {
			args = append(args, f)
		}
		if err := admin.Do(ctx, args...).Err(); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
	}
	if err := admin.Do(ctx, "acl", "setuser", "promo-team", ">secret").Err(); err != nil {
		t.Fatal(err)
	}
	promo := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "promo-team", Password: "secret"})
	defer promo.Close()
	if err := promo.HSet(ctx, "order:order:1001:base", "amount", 1).Err(); err == nil || !strings.HasPrefix(err.Error(), "NOPERM") {
		t.Fatalf("promo-team writing an order key: %v, want NOPERM", err)
	}
	if err := promo.HSet(ctx, "promo:sku:1001", "activityId", 1).Err(); err != nil {
		t.Fatalf("promo-team writing its own key: %v", err)
	}

	dir := t.TempDir()
	file := filepath.Join(dir, "users.acl")
	code, _, errOut = runCLI(t, "", "acl", "--registry", "testdata/sdk.yaml", "--format", "aclfile", "--out", file, "--no-records")
	if code != 0 || !strings.Contains(errOut, "note: ") {
		t.Fatalf("aclfile: exit %d, stderr %q", code, errOut)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), "user auth-team on ") || strings.Contains(string(data), "keyguard:{writers}") {
		t.Fatalf("aclfile:\n%s", data)
	}
	if code, _, _ := runCLI(t, "", "acl", "--registry", "testdata/sdk.yaml", "--format", "yaml"); code != 2 {
		t.Fatalf("bad format: exit %d", code)
	}
}
