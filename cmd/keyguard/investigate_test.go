package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/redistest"
)

const investigateRegistry = `
version: 1
domains:
  promo: {owner: promo-team}
  order: {owner: order-team}
keys:
  - key: "promo:sku:{skuId:int}"
    type: hash
    ttl: 10m
    fields: [activityId, discountType, discountValue]
  - key: "order:sku:{skuId:int}:settle-preview"
    type: hash
    ttl: 5m
`

func investigateRegistryFile(t *testing.T) string {
	path := filepath.Join(t.TempDir(), "keyguard.yaml")
	if err := os.WriteFile(path, []byte(investigateRegistry), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestInvestigateUsage(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"investigate", "--redis", "127.0.0.1:1"}, "exactly one of --id"},
		{[]string{"investigate", "--id", "1", "--key", "k"}, "exactly one of --id"},
		{[]string{"investigate", "--id", "1", "--max-lines", "10"}, "runs only with --monitor DURATION: MONITOR makes the server copy every command"},
		{[]string{"investigate", "--id", "1", "--monitor", "5s", "--max-bytes", "lots"}, "--max-bytes"},
		{[]string{"investigate", "--id", "1", "--enable-notify"}, "goes with --notify"},
		{[]string{"investigate", "--id", "1", "extra"}, "takes no arguments"},
	} {
		code, _, errOut := runCLI(t, "", tt.args...)
		if code != 2 || !strings.Contains(errOut, tt.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tt.args, code, errOut, tt.want)
		}
	}
}

// TestInvestigateCommand: a clean key exits 0; two writers taking turns on
// one key exit 1 with the evidence in JSON written to --out; --fail-on
// never exits 0.
func TestInvestigateCommand(t *testing.T) {
	srv := redistest.Start(t)
	reg := investigateRegistryFile(t)
	ctx := context.Background()
	admin := srv.Client(t)
	admin.HSet(ctx, "promo:sku:7", "activityId", 1, "discountType", 1, "discountValue", 5)
	admin.Expire(ctx, "promo:sku:7", 10*time.Minute)

	code, out, errOut := runCLI(t, "", "investigate", "--redis", srv.URL(), "--registry", reg, "--key", "promo:sku:7", "--watch", "500ms")
	if code != 0 || !strings.Contains(out, "nothing suspicious") || !strings.Contains(out, "--monitor names the clients") || strings.Contains(out, `="5"`) {
		t.Fatalf("clean key: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "", "investigate", "--redis", srv.URL(), "--registry", reg, "--key", "promo:sku:7", "--watch", "0", "--show-values")
	if code != 0 || !strings.Contains(out, `"discountValue"="5"`) {
		t.Fatalf("--show-values: exit %d\n%s%s", code, out, errOut)
	}

	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	promo := redis.NewClient(&redis.Options{Addr: srv.Addr, ClientName: "promo-service"})
	order := redis.NewClient(&redis.Options{Addr: srv.Addr, ClientName: "order-service"})
	defer promo.Close()
	defer order.Close()
	script := redis.NewScript(`redis.call('hset', KEYS[1], 'activityId', ARGV[1]) return redis.call('expire', KEYS[1], 600)`)
	go func() {
		defer close(done)
		for i := 0; wctx.Err() == nil; i++ {
			script.Run(wctx, promo, []string{"promo:sku:1001"}, i)
			order.TxPipelined(wctx, func(p redis.Pipeliner) error {
				p.HSet(wctx, "promo:sku:1001", "couponAmount", 10)
				p.Persist(wctx, "promo:sku:1001")
				return nil
			})
			time.Sleep(40 * time.Millisecond)
		}
	}()
	defer func() { stop(); <-done }()
	time.Sleep(200 * time.Millisecond)

	path := filepath.Join(t.TempDir(), "evidence.json")
	code, _, errOut = runCLI(t, "", "investigate", "--redis", srv.URL(), "--registry", reg, "--id", "1001",
		"--watch", "1500ms", "--watch-every", "100ms", "--monitor", "1500ms", "--format", "json", "--out", path)
	if code != 1 || !strings.Contains(errOut, "MONITOR") {
		t.Fatalf("two writers: exit %d, stderr %s", code, errOut)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Findings []struct{ Rule, Key, Message string }
		Capture  struct {
			Nodes []struct{ Stopped string }
		}
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	found := false
	for _, f := range doc.Findings {
		found = found || (f.Rule == "second-writer" && f.Key == "promo:sku:1001" && strings.Contains(f.Message, "order-service"))
	}
	if !found || len(doc.Capture.Nodes) != 1 || doc.Capture.Nodes[0].Stopped != "time" {
		t.Errorf("report: %s", b)
	}

	code, out, errOut = runCLI(t, "", "investigate", "--redis", srv.URL(), "--registry", reg, "--id", "1001", "--watch", "300ms", "--fail-on", "never")
	if code != 0 {
		t.Errorf("--fail-on never: exit %d\n%s%s", code, out, errOut)
	}

	// As the audit, without a registry (none given, no keyguard.yaml
	// here): the second writer is found all the same, the key is of its
	// inferred family, and nothing is called unregistered.
	t.Chdir(t.TempDir())
	code, out, errOut = runCLI(t, "", "investigate", "--redis", srv.URL(), "--key", "promo:sku:1001", "--watch", "300ms", "--monitor", "1500ms")
	if code != 1 || !strings.Contains(out, "no registry (keys of the families inferred from their names") ||
		!strings.Contains(out, "second-writer") || !strings.Contains(out, "is of the family `promo:sku:{id:int}` (no registry)") ||
		!strings.Contains(out, "with its team as owner in a registry (keyguard init writes one)") ||
		strings.Contains(out, "unregistered") || strings.Contains(out, "not in the registry") {
		t.Errorf("without a registry: exit %d\n%s%s", code, out, errOut)
	}
}
