package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/redistest"
	"github.com/keyguard/keyguard/redishook"
	"github.com/keyguard/keyguard/registry"
)

// writeAs writes key through a client hooked for service, recording into rec.
func writeAs(t *testing.T, c redis.UniversalClient, reg *registry.Registry, rec *redishook.Recorder, service string, write func(redis.UniversalClient) error) {
	t.Helper()
	redishook.New(reg, redishook.Options{Service: service, Recorder: rec}).Install(c)
	if err := write(c); err != nil {
		t.Fatal(err)
	}
}

// TestWritersSecondWriter: two services write a template owned by one;
// 'keyguard writers' reports it and exits 1 (seed 000 §5.3).
func TestWritersSecondWriter(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	reg, err := registry.Load("testdata/sdk.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rec := redishook.NewRecorder(srv.Client(t), redishook.RecorderOptions{})

	writeAs(t, srv.Client(t), reg, rec, "promo-team", func(c redis.UniversalClient) error {
		return c.HSet(ctx, "promo:sku:1001", "activityId", 12345).Err()
	})
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "", "writers", "--redis", srv.URL(), "--registry", "testdata/sdk.yaml")
	if code != 0 || !strings.Contains(out, "promo:sku:{skuId:int}  (owner promo-team)\n  promo-team") {
		t.Fatalf("one writer: exit %d\n%s%s", code, out, errOut)
	}

	writeAs(t, srv.Client(t), reg, rec, "order-team", func(c redis.UniversalClient) error {
		return c.HSet(ctx, "promo:sku:1001", "couponAmount", 10).Err()
	})
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCLI(t, "", "writers", "--redis", srv.URL(), "--registry", "testdata/sdk.yaml")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"promo:sku:{skuId:int}  (owner promo-team)  VIOLATION", "order-team", "NOT ALLOWED", "1 with a writer the registry does not allow"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	code, out, _ = runCLI(t, "", "writers", "--redis", srv.URL(), "--registry", "testdata/sdk.yaml", "--format", "json", "--window", "1h")
	var doc struct {
		Violations int `json:"violations"`
		Templates  []struct {
			Template string `json:"template"`
			Owner    string `json:"owner"`
			Writers  []struct {
				Service string `json:"service"`
				Allowed bool   `json:"allowed"`
			} `json:"writers"`
		} `json:"templates"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 1 {
		t.Fatalf("json: exit %d, %v\n%s", code, err, out)
	}
	if doc.Violations != 1 || len(doc.Templates) != 1 || len(doc.Templates[0].Writers) != 2 || doc.Templates[0].Owner != "promo-team" {
		t.Fatalf("json: %+v", doc)
	}

	// The window excludes old records.
	code, out, _ = runCLI(t, "", "writers", "--redis", srv.URL(), "--registry", "testdata/sdk.yaml", "--window", "1ns")
	if code != 0 || !strings.HasPrefix(out, "0 templates written in the last 1ns") {
		t.Fatalf("tiny window: exit %d\n%s", code, out)
	}
}

func TestWritersCluster(t *testing.T) {
	ctx := context.Background()
	cl := redistest.StartCluster(t, 3)
	reg, err := registry.Load("testdata/sdk.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rec := redishook.NewRecorder(cl.Client(t), redishook.RecorderOptions{})
	for _, svc := range []string{"auth-team", "sms-service"} { // both allowed on the shared key
		writeAs(t, cl.Client(t), reg, rec, svc, func(c redis.UniversalClient) error {
			return c.Set(ctx, "verify:sms:abc:LOGIN", "1234", 5*time.Minute).Err()
		})
	}
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "", "writers", "--cluster", "--redis", cl.URL(), "--registry", "testdata/sdk.yaml")
	if code != 0 || !strings.Contains(out, "shared") || !strings.Contains(out, "sms-service") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
}

func TestWritersErrors(t *testing.T) {
	// Nothing listens on port 1: a killed server's port could be taken
	// by another package's server before the dial.
	url := "redis://127.0.0.1:1"
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"writers", "--registry", "testdata/sdk.yaml"}, "--redis URL is required"},
		{[]string{"writers", "--registry", "testdata/sdk.yaml", "--redis", url}, "connection refused"},
		{[]string{"writers", "--registry", "testdata/sdk.yaml", "--redis", url, "--window", "-1h"}, "--window"},
		{[]string{"writers", "--registry", "testdata/sdk.yaml", "--redis", url, "extra"}, "no arguments"},
	} {
		code, _, errOut := runCLI(t, "", tt.args...)
		if code != 2 || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", tt.args, code, errOut, tt.want)
		}
	}
}

// TestWritersNoRecords: a server where no SDK ever recorded is not a
// clean bill: a warning says the SDK may not be recording and how to turn
// it on, and --fail-on warning makes it exit 1.
func TestWritersNoRecords(t *testing.T) {
	srv := redistest.Start(t)
	args := []string{"writers", "--redis", srv.URL(), "--registry", "testdata/sdk.yaml"}
	code, out, errOut := runCLI(t, "", args...)
	if code != 0 || !strings.Contains(errOut, "warning: no writer records at all") || !strings.Contains(errOut, "redishook.NewRecorder") ||
		!strings.HasPrefix(out, "0 templates written in the last 1d") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	if code, _, errOut := runCLI(t, "", append(args, "--fail-on", "warning")...); code != 1 {
		t.Fatalf("--fail-on warning: exit %d, want 1: %s", code, errOut)
	}
	code, out, _ = runCLI(t, "", append(args, "--format", "json", "-o", "-")...)
	var doc struct {
		Warnings  []string `json:"warnings"`
		Templates []any    `json:"templates"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 || len(doc.Warnings) != 1 || doc.Templates == nil {
		t.Fatalf("json: exit %d, %v\n%s", code, err, out)
	}

	// Records older than the window: a different warning.
	ctx := context.Background()
	reg, err := registry.Load("testdata/sdk.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rec := redishook.NewRecorder(srv.Client(t), redishook.RecorderOptions{})
	writeAs(t, srv.Client(t), reg, rec, "promo-team", func(c redis.UniversalClient) error {
		return c.HSet(ctx, "promo:sku:1001", "activityId", 1).Err()
	})
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runCLI(t, "", append(args, "--window", "1ns", "--fail-on", "warning")...)
	if code != 1 || !strings.Contains(errOut, "though 1 templates have older records") {
		t.Fatalf("old records: exit %d: %s", code, errOut)
	}
	// Shared by allowed writers is info: --fail-on info fails, the default does not.
	writeAs(t, srv.Client(t), reg, rec, "order-team", func(c redis.UniversalClient) error {
		return c.Set(ctx, "verify:sms:abc:LOGIN", "1", time.Minute).Err()
	})
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runCLI(t, "", append(args, "--fail-on", "info")...); code != 1 || errOut != "" {
		t.Fatalf("--fail-on info: exit %d\n%s%s", code, out, errOut)
	}
}

// TestWritersClusterNodeDown: with the master that holds the records
// killed, the message names that node and says it is down.
func TestWritersClusterNodeDown(t *testing.T) {
	ctx := context.Background()
	cl := redistest.StartCluster(t, 3)
	reg, err := registry.Load("testdata/sdk.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rec := redishook.NewRecorder(cl.Client(t), redishook.RecorderOptions{})
	writeAs(t, cl.Client(t), reg, rec, "promo-team", func(c redis.UniversalClient) error {
		return c.HSet(ctx, "promo:sku:1001", "activityId", 1).Err()
	})
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	owner, err := cl.Client(t).MasterForKey(ctx, redishook.RecordIndexKey)
	if err != nil {
		t.Fatal(err)
	}
	addr := owner.Options().Addr
	for i, n := range cl.Nodes {
		if n.Addr == addr {
			cl.Nodes[i].Kill()
		}
	}
	// Seed the command with the live nodes first, as an operator would.
	code, out, errOut := runCLI(t, "", "writers", "--cluster", "--redis", cl.URL(), "--registry", "testdata/sdk.yaml")
	if code != 2 || !strings.Contains(errOut, addr) || !strings.Contains(errOut, "is down") || strings.Contains(errOut, "Recorder") ||
		strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
		t.Fatalf("exit %d, want 2 and one line naming %s as down\nstdout %s\nstderr %s", code, addr, out, errOut)
	}
	t.Logf("stderr: %s", errOut)
}
