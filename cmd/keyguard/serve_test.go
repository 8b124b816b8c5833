package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/keyguard/keyguard/internal/redistest"
)

// TestServeUsage: command lines serve refuses, before touching Redis.
func TestServeUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--redis", "redis://127.0.0.1:1", "--listen", "0.0.0.0:8080"}, "--auth-token"},
		{[]string{"serve", "--redis", "redis://127.0.0.1:1", "--listen", ":8080"}, "--insecure-public"},
		{[]string{"serve", "--redis", "redis://127.0.0.1:1", "--basic-auth", "nopassword"}, "--basic-auth: want user:password"},
		{[]string{"serve", "--redis", "redis://127.0.0.1:1", "--interval", "0s"}, "--interval must be positive"},
		{[]string{"serve", "--redis", "redis://127.0.0.1:1", "extra"}, "serve takes no arguments"},
		{[]string{"serve", "--registry", "testdata/demo.yaml"}, "--redis URL is required"},
	} {
		code, _, stderr := runCLI(t, "", tc.args...)
		if code != exitError || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d\n%s", tc.args, code, stderr)
		}
	}
}

// syncBuffer is a buffer written by the command and read by the test.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestServe runs keyguard serve against a real server: it says where it
// listens, audits, serves the report and the metrics behind the token,
// and stops cleanly on interrupt.
func TestServe(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	rdb := srv.Client(t)
	for _, k := range []string{"order:order:1:base", "order:order:2:base", "promo:sku:7"} {
		if err := rdb.HSet(ctx, k, "f", "v").Err(); err != nil {
			t.Fatal(err)
		}
	}
	rdb.Set(ctx, "legacy_token_1", "v", time.Hour)

	fetch := startServe(t, "--redis", srv.URL(), "--registry", "testdata/demo.yaml", "--docs-url", "https://docs.example.com/kg")
	if code, _ := fetch("/api/report.json", ""); code != http.StatusUnauthorized {
		t.Errorf("report without the token: %d", code)
	}
	code, body := fetch("/api/report.json", "tok-1")
	var rep struct {
		Source  struct{ Kind string } `json:"source"`
		Summary struct{ Keys int64 }  `json:"summary"`
	}
	if err := json.Unmarshal([]byte(body), &rep); err != nil || code != 200 || rep.Source.Kind != "redis" || rep.Summary.Keys != 4 {
		t.Errorf("report: %d %v %+v", code, err, rep)
	}
	_, metrics := fetch("/metrics", "tok-1")
	for _, want := range []string{"keyguard_keyspace_keys 4", "keyguard_audit_success 1", "go_goroutines", "keyguard_audit_interval_seconds 3600"} {
		if !strings.Contains(metrics, want) {
			t.Errorf("no %q in /metrics", want)
		}
	}
	if code, page := fetch("/", "tok-1"); code != 200 || !strings.Contains(page, "promo:sku:{skuId:int}") {
		t.Errorf("overview: %d", code)
	}
	// --docs-url: the rules link under it, in the pages and the report.
	const doc = "https://docs.example.com/kg/docs/rules.md#"
	if code, page := fetch("/findings", "tok-1"); code != 200 || !strings.Contains(page, `href="`+doc) {
		t.Errorf("findings page: %d, no rule link under %s", code, doc)
	}
	if !strings.Contains(body, `"`+doc) {
		t.Errorf("report: no rule link under %s", doc)
	}
}

// startServe runs keyguard serve with args on a free loopback port, the
// token tok-1 and an hourly interval, waits for its first audit, and
// returns a fetch of its pages; serve is stopped (and must exit 0) when
// the test ends.
func startServe(t *testing.T, args ...string) (fetch func(path, token string) (int, string)) {
	t.Helper()
	var stdout, stderr syncBuffer
	e := &env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: func(k string) string {
		if k == "KEYGUARD_SERVE_TOKEN" {
			return "tok-1"
		}
		return ""
	}}
	rctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- run(rctx, append([]string{"serve", "--listen", "127.0.0.1:0", "--interval", "1h"}, args...), e)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case code := <-done:
			if code != exitClean {
				t.Errorf("exit %d after interrupt\n%s", code, stderr.String())
			}
		case <-time.After(20 * time.Second):
			t.Error("serve did not stop")
		}
	})

	addr := regexp.MustCompile(`http://(127\.0\.0\.1:\d+)/`)
	var base string
	deadline := time.Now().Add(20 * time.Second)
	for base == "" {
		if m := addr.FindStringSubmatch(stderr.String()); m != nil {
			base = "http://" + m[1]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve said no address:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	fetch = func(path, token string) (int, string) {
		req, _ := http.NewRequest("GET", base+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for {
		_, health := fetch("/healthz", "")
		if strings.HasPrefix(health, "ok") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no audit: %s\n%s", health, stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fetch
}

// TestServeWithoutRegistry: as the audit, serve runs without a registry
// (none given, no keyguard.yaml where it runs): its audits group keys by
// inferred family, report what they did not check, and the pages say so.
func TestServeWithoutRegistry(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	for _, k := range []string{"legacy:cart:1", "legacy:cart:2", "report:daily:3"} {
		if err := rdb.Set(context.Background(), k, "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(t.TempDir())
	fetch := startServe(t, "--redis", srv.URL())
	code, body := fetch("/api/report.json", "tok-1")
	var rep struct {
		Summary struct {
			Keys int64
		}
		Groups []struct {
			Name string
		}
		NotChecked []string `json:"not_checked"`
	}
	if err := json.Unmarshal([]byte(body), &rep); err != nil || code != 200 || rep.Summary.Keys != 3 || len(rep.Groups) != 2 || len(rep.NotChecked) == 0 {
		t.Fatalf("report: %d %v %+v", code, err, rep)
	}
	if code, page := fetch("/", "tok-1"); code != 200 || !strings.Contains(page, "No registry.") || !strings.Contains(page, "legacy:cart:{id:int}") {
		t.Errorf("overview without a registry: %d\n%s", code, page)
	}
}
