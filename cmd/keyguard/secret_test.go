package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/keyguard/keyguard/internal/redisconn"
)

// secret is the password in every URL of TestNoPasswordInAnyOutput.
const secret = "S3cr3tPW"

// leakyURLs are --redis values a user may mistype, each with the password:
// bad escapes, unencoded @ / # ? and spaces, a wrong port, database,
// option, scheme or host, several hosts without --cluster, a control
// character, a bad escape in the user name, and a server that is not
// there.
var leakyURLs = []string{
	"redis://u:" + secret + "%zz@127.0.0.1:1",
	"redis://u:" + secret + "%@127.0.0.1:1",
	"redis://u:" + secret + "%4@127.0.0.1:1",
	"redis://u:" + secret + " with space@127.0.0.1:1",
	"redis://u:" + secret + "@x@127.0.0.1:1",
	"redis://u:" + secret + "/x@127.0.0.1:1",
	"redis://u:" + secret + "#x@127.0.0.1:1",
	"redis://u:" + secret + "?x@127.0.0.1:1",
	"redis://u:" + secret + "@127.0.0.1:notaport",
	"redis://u:" + secret + "@127.0.0.1:1/notadb",
	"redis://u:" + secret + "@127.0.0.1:1?dial_timeout=forever",
	"http://u:" + secret + "@127.0.0.1:1",
	"redis://u:" + secret + "@",
	"redis://u:" + secret + "@127.0.0.1:1,127.0.0.2:1",
	"redis://:" + secret + "@[::1",
	"redis://u:" + secret + "\n@127.0.0.1:1",
	"u:" + secret + "@127.0.0.1:1",
	"rediss://u:" + secret + "@127.0.0.1:1?skip_verify=maybe",
	"redis://u%zz:" + secret + "@127.0.0.1:1",
	"redis://u:" + secret + "@127.0.0.1:1/0?protocol=9",
}

// TestNoPasswordInAnyOutput runs every command that takes --redis with
// each URL of leakyURLs, given as --redis and as KEYGUARD_REDIS, and
// holds stdout, stderr and --out free of the password; the help of each
// shows KEYGUARD_REDIS without it.
func TestNoPasswordInAnyOutput(t *testing.T) {
	dir, reg := migrateFiles(t)
	keys := filepath.Join(dir, "keys.txt")
	if err := os.WriteFile(keys, []byte("user:profile:1:base\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	commands := [][]string{
		{"audit"},
		{"serve"},
		{"migrate", "plan", "--all-deprecated"},
		{"migrate", "copy", "--all-deprecated"},
		{"migrate", "verify", "--all-deprecated"},
		{"migrate", "cleanup", "--all-deprecated", "--confirm"},
		{"hotkeys"},
		{"investigate", "--key", "user:profile:1:base", "--watch", "0"},
		{"preheat", "--exec", "true", keys},
		{"writers"},
	}
	for _, cmd := range commands {
		t.Run(strings.Join(cmd[:min(2, len(cmd))], "_"), func(t *testing.T) {
			t.Parallel() // most of the time is the client's retries against a closed port
			out := filepath.Join(t.TempDir(), "out")
			for _, viaEnv := range []bool{false, true} {
				for _, u := range leakyURLs {
					_, perr := redisconn.ParseURL(u, false)
					switch {
					case perr == nil && cmd[0] == "serve":
						continue // serve would run: TestServeNoPasswordInLogsOrMetrics
					case perr == nil && viaEnv && testing.Short():
						continue // the same text reaches the same parser as with --redis
					}
					leakCheck(t, cmd, u, viaEnv, reg, out)
				}
			}
			code, stdout, _ := runCLIEnv(t, map[string]string{"KEYGUARD_REDIS": leakyURLs[0]}, append(append([]string{}, cmd...), "-h")...)
			if code != 0 || strings.Contains(stdout, secret) || !strings.Contains(stdout, "u:xxxxx@") {
				t.Errorf("%v -h with KEYGUARD_REDIS: exit %d, default shown as:\n%s", cmd, code, stdout)
			}
		})
	}
}

// leakCheck runs one command with url and holds its output free of the
// password.
func leakCheck(t *testing.T, cmd []string, url string, viaEnv bool, reg, out string) {
	t.Helper()
	args := append(append([]string{}, cmd...), "--registry", reg)
	if cmd[0] != "serve" && cmd[0] != "preheat" {
		args = append(args, "--out", out)
	}
	env := map[string]string{}
	if viaEnv {
		env["KEYGUARD_REDIS"] = url
	} else {
		args = append(args, "--redis", url)
	}
	os.Remove(out)
	code, stdout, stderr := runCLIEnv(t, env, args...)
	written, _ := os.ReadFile(out)
	for what, text := range map[string]string{"stdout": stdout, "stderr": stderr, "--out": string(written)} {
		if strings.Contains(text, secret) {
			t.Errorf("%v with %q (env %v): the password is on %s:\n%s", cmd, url, viaEnv, what, text)
		}
	}
	if code != 2 || !strings.Contains(stderr, "--redis") && !strings.Contains(stderr, "127.0.0.1:1") {
		t.Errorf("%v with %q (env %v): exit %d, and stderr names neither --redis nor the host:\n%s", cmd, url, viaEnv, code, stderr)
	}
	if strings.Contains(stderr, "escape") && !strings.Contains(stderr, "%40") {
		t.Errorf("%v with %q: the message does not say how to encode:\n%s", cmd, url, stderr)
	}
}

// TestServeNoPasswordInLogsOrMetrics runs serve against a server that is
// not there, with a password in the URL, until an audit has failed; the
// logs, the pages, the report and /metrics never hold the password.
func TestServeNoPasswordInLogsOrMetrics(t *testing.T) {
	_, reg := migrateFiles(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs := &syncBuffer{}
	e := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: logs, getenv: func(k string) string {
		if k == "KEYGUARD_REDIS" {
			return "redis://u:" + secret + "@127.0.0.1:1"
		}
		return ""
	}}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--registry", reg, "--listen", "127.0.0.1:0", "--interval", "1h"}, e)
	}()
	var base string
	for base == "" {
		select {
		case code := <-done:
			t.Fatalf("serve exited %d:\n%s", code, logs.String())
		case <-time.After(10 * time.Millisecond):
		}
		if _, rest, ok := strings.Cut(logs.String(), "keyguard serve: http://"); ok {
			base = "http://" + strings.Fields(rest)[0]
		}
	}
	get := func(path string) string {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	// The first audit starts at once and fails on the refused connection.
	for !strings.Contains(get("/metrics"), `result="failed"`) {
		select {
		case code := <-done:
			t.Fatalf("serve exited %d:\n%s", code, logs.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	pages := map[string]string{}
	for _, p := range []string{"/", "/metrics", "/api/report.json", "/api/history.json", "/healthz", "/findings"} {
		pages[p] = get(p)
	}
	cancel()
	<-done
	pages["log"] = logs.String()
	if !strings.Contains(pages["log"], "u:xxxxx@") && !strings.Contains(pages["log"], "redis://u@127.0.0.1:1") {
		t.Errorf("the log does not name the target:\n%s", pages["log"])
	}
	for what, text := range pages {
		if strings.Contains(text, secret) {
			t.Errorf("the password is in %s:\n%s", what, text)
		}
	}
}

// runCLIEnv is runCLI with environment variables.
func runCLIEnv(t *testing.T, vars map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return vars[k] }}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	code = run(ctx, args, e)
	return code, out.String(), errb.String()
}
