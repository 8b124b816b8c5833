package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/logging"

	"github.com/keyguard/keyguard/internal/redisconn"
	"github.com/keyguard/keyguard/internal/redistest"
)

// TestMain lets a test run the real main() in a child process (runMain):
// what main sets up for the whole process, such as the quiet client
// library, is seen only there.
func TestMain(m *testing.M) {
	if args, ok := os.LookupEnv("KEYGUARD_TEST_MAIN"); ok {
		os.Args = append([]string{"keyguard"}, strings.Split(args, "\x1f")...)
		main()
		return
	}
	redis.SetLogger(&logging.VoidLogger{}) // in-process runs print what main would
	os.Exit(m.Run())
}

// runMain runs main() with args in a child process.
func runMain(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "KEYGUARD_TEST_MAIN="+strings.Join(args, "\x1f"))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code = cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

// TestNoLibraryLogLines: a server that is not there gets keyguard's one
// line, not the client library's dial retries before it.
func TestNoLibraryLogLines(t *testing.T) {
	for _, args := range [][]string{
		{"writers", "--registry", "testdata/sdk.yaml", "--redis", "redis://127.0.0.1:1"},
		{"writers", "--registry", "testdata/sdk.yaml", "--cluster", "--redis", "redis://127.0.0.1:1,127.0.0.1:2"},
	} {
		code, _, errOut := runMain(t, args...)
		if code != 2 || !strings.HasPrefix(errOut, "keyguard writers: ") || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, want 2 and one line of keyguard's own:\n%s", args, code, errOut)
		}
	}
}

func TestNoCommand(t *testing.T) {
	code, out, errOut := runCLI(t, "")
	if code != 2 || out != "" || !strings.Contains(errOut, "Usage: keyguard COMMAND") {
		t.Fatalf("no command: exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
	if code, out, _ := runCLI(t, "", "help"); code != 0 || !strings.Contains(out, "Usage: keyguard COMMAND") {
		t.Fatalf("help: exit %d: %q", code, out)
	}
	if code, _, errOut := runCLI(t, "", "lnit"); code != 2 || !strings.Contains(errOut, "did you mean lint?") {
		t.Fatalf("misspelt command: exit %d: %q", code, errOut)
	}
}

func TestVersion(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "github.com/keyguard/keyguard", Version: "v0.3.0"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "66cff97abc"}, {Key: "vcs.time", Value: "2026-11-29T12:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	v := buildVersion(bi, true)
	if v.Version != "v0.3.0" || v.Revision != "66cff97abc" || v.Time != "2026-11-29T12:00:00Z" || !v.Modified || v.Go != "go1.26.0" {
		t.Fatalf("%+v", v)
	}
	var b strings.Builder
	if err := v.writeText(&b); err != nil || !strings.Contains(b.String(), "keyguard v0.3.0\nrevision 66cff97abc (2026-11-29T12:00:00Z), with uncommitted changes\n") {
		t.Fatalf("%q %v", b.String(), err)
	}
	if v := buildVersion(nil, false); v.Version != "(unknown)" || v.Revision != "" {
		t.Fatalf("no build info: %+v", v)
	}

	code, a, _ := runCLI(t, "", "version")
	code2, b2, _ := runCLI(t, "", "--version")
	if code != 0 || code2 != 0 || a != b2 || !strings.HasPrefix(a, "keyguard ") {
		t.Fatalf("version %d %q, --version %d %q", code, a, code2, b2)
	}
	code, out, _ := runCLI(t, "", "--version", "--format", "json")
	var doc versionInfo
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 || doc.Go == "" || doc.Version == "" {
		t.Fatalf("json: exit %d %v: %s", code, err, out)
	}
}

// TestVersionVCS builds the binary as a user does and reads back the
// commit it was built from.
func TestVersionVCS(t *testing.T) {
	// Outside a checkout (a source tarball) there is nothing to stamp;
	// CI (KEYGUARD_REQUIRE_TOOLCHAINS=1) always has one.
	skip := t.Skipf
	if os.Getenv("KEYGUARD_REQUIRE_TOOLCHAINS") == "1" {
		skip = t.Fatalf
	}
	before, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		skip("no git checkout: %v", err)
	}
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(strings.TrimSpace(string(top)), ".git")); err == nil && !st.IsDir() {
		skip("a git worktree or submodule (.git is a file): go stamps no VCS information there")
	}
	bin := filepath.Join(t.TempDir(), "keyguard")
	// -buildvcs=true: the environment may turn stamping off (GOFLAGS).
	if out, err := exec.Command("go", "build", "-buildvcs=true", "-o", bin, ".").CombinedOutput(); err != nil {
		if strings.Contains(string(out), "VCS") {
			skip("go cannot read the VCS here: %s", out)
		}
		t.Fatalf("go build: %v\n%s", err, out)
	}
	after, _ := exec.Command("git", "rev-parse", "HEAD").Output()
	out, err := exec.Command(bin, "version", "--format", "json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var v versionInfo
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatal(err)
	}
	if rev := strings.TrimSpace(string(before)); v.Revision != rev && v.Revision != strings.TrimSpace(string(after)) {
		t.Fatalf("revision %q, HEAD %q", v.Revision, rev)
	}
	if v.Time == "" || v.Version == "" {
		t.Fatalf("%+v", v)
	}
}

func TestFlagHelpAndErrors(t *testing.T) {
	code, out, errOut := runCLI(t, "", "lint", "-h")
	if code != 0 || errOut != "" {
		t.Fatalf("-h: exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"Usage: keyguard lint", "  --fail-on SEVERITY", "  --format FORMAT", "  -o, --out FILE", "  --registry FILE", "(default keyguard.yaml)"} {
		if !strings.Contains(out, want) {
			t.Errorf("lint -h lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\n  -fail-on") || strings.Contains(out, "\n  -registry") {
		t.Errorf("lint -h shows single-dash long flags:\n%s", out)
	}
	if code, out, _ := runCLI(t, "", "check", "--help"); code != 0 || !strings.Contains(out, "  -0 ") || !strings.Contains(out, "  --only-findings ") {
		t.Errorf("check --help: exit %d:\n%s", code, out)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"lint", "--fail-onn", "warning"}, "keyguard lint: unknown flag --fail-onn: did you mean --fail-on?\n"},
		{[]string{"lint", "--regsitry", "x"}, "keyguard lint: unknown flag --regsitry: did you mean --registry?\n"},
		{[]string{"lint", "-formt", "json"}, "keyguard lint: unknown flag --formt: did you mean --format?\n"},
		{[]string{"lint", "--zzzzzzz"}, "keyguard lint: unknown flag --zzzzzzz ('keyguard lint -h' lists the flags)\n"},
		{[]string{"writers", "--window", "3x"}, "keyguard writers: --window: \"3x\" is not a duration: write it as 90s, 10m, 1h30m, 7d or 1d12h\n"},
		{[]string{"lint", "--format"}, "keyguard lint: --format needs FORMAT after it\n"},
		{[]string{"lint", "-o"}, "keyguard lint: -o needs FILE after it\n"},
	} {
		code, out, errOut := runCLI(t, "", tt.args...)
		if code != 2 || out != "" || errOut != tt.want {
			t.Errorf("%v: exit %d\nstdout %q\nstderr %q\nwant   %q", tt.args, code, out, errOut, tt.want)
		}
	}
}

func TestShortOut(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lint.json")
	if code, _, errOut := runCLI(t, "", "lint", "--registry", "testdata/clean.yaml", "--format", "json", "-o", path); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if b, err := os.ReadFile(path); err != nil || !json.Valid(b) {
		t.Fatalf("-o %s: %v %s", path, err, b)
	}
}

// tlsRedis starts a redis-server with a plain port and a TLS port (its
// certificate signed by a test CA, clients not asked for one) and returns
// both addresses.
func tlsRedis(t *testing.T) (plain, tlsAddr string) {
	t.Helper()
	_, certFile, keyFile, _, _ := pki(t, t.TempDir())
	// redistest chooses the TLS port and chooses again if another process
	// takes it before redis-server binds it.
	srv, ports := redistest.StartPorts(t, 1, func(p []int) []string {
		return []string{"tls-port " + strconv.Itoa(p[0]), "tls-cert-file " + certFile, "tls-key-file " + keyFile, "tls-auth-clients no"}
	})
	return srv.Addr, "127.0.0.1:" + strconv.Itoa(ports[0])
}

// TestTLSMismatch: rediss:// on a plain port and redis:// on a TLS port
// each say which it probably is, against a real TLS redis-server.
func TestTLSMismatch(t *testing.T) {
	plain, tlsAddr := tlsRedis(t)
	ctx := context.Background()
	connect := func(url string) error {
		tgt, err := redisconn.ParseURL(url, false)
		if err != nil {
			t.Fatal(err)
		}
		c, err := redisconn.Connect(ctx, tgt)
		if err == nil {
			c.Close()
		}
		return err
	}
	if err := connect("rediss://" + tlsAddr + "?skip_verify=true"); err != nil {
		t.Fatalf("TLS port over TLS: %v", err)
	}
	if err := connect("redis://" + plain); err != nil {
		t.Fatalf("plain port: %v", err)
	}
	for _, tt := range []struct{ url, want string }{
		{"rediss://" + plain + "?dial_timeout=1s", plain + " answers plain Redis, not TLS: use redis:// instead of rediss://"},
		{"redis://" + tlsAddr, tlsAddr + " expects TLS and hung up on a plain connection: use rediss://"},
	} {
		err := connect(tt.url)
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v\nwant %q", tt.url, err, tt.want)
		}
	}
	// The command line says the same, in one line.
	code, _, errOut := runCLI(t, "", "writers", "--registry", "testdata/sdk.yaml", "--redis", "redis://"+tlsAddr)
	if code != 2 || !strings.Contains(errOut, "expects TLS") {
		t.Errorf("writers on the TLS port: exit %d: %s", code, errOut)
	}
}

// TestNotRedis: --redis pointed at a web server (a common slip: the
// application's port, or a proxy in between) says so, whatever command and
// whichever way it connects; a port nobody listens on says that, with
// --snapshot too (it quoted the dial error before).
func TestNotRedis(t *testing.T) {
	web := httptest.NewServer(http.NotFoundHandler())
	defer web.Close()
	webTLS := httptest.NewTLSServer(http.NotFoundHandler())
	defer webTLS.Close()
	httpAddr := strings.TrimPrefix(web.URL, "http://")
	httpsAddr := strings.TrimPrefix(webTLS.URL, "https://")
	want := "answers HTTP (HTTP/1.1 400 Bad Request), not the Redis protocol"
	for _, args := range [][]string{
		{"audit", "--redis", "redis://" + httpAddr},
		{"audit", "--snapshot", "--redis", "redis://" + httpAddr},
		{"hotkeys", "--redis", "redis://" + httpAddr},
		{"writers", "--registry", "testdata/sdk.yaml", "--redis", "redis://" + httpAddr},
		{"investigate", "--match", "x:*", "--redis", "redis://" + httpAddr},
		{"audit", "--redis", "rediss://" + httpsAddr + "?skip_verify=true"},
		{"hotkeys", "--redis", "rediss://" + httpsAddr + "?skip_verify=true"},
	} {
		code, _, errOut := runCLI(t, "", args...)
		if code != 2 || !strings.Contains(errOut, want) || strings.Contains(errOut, "TLS") || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%q: exit %d: %s", args, code, errOut)
		}
	}
	code, _, errOut := runCLI(t, "", "audit", "--snapshot", "--redis", "redis://127.0.0.1:1")
	if code != 2 || !strings.Contains(errOut, "cannot connect to 127.0.0.1:1: connection refused (is the server running, and is --redis right?)") {
		t.Errorf("--snapshot on a closed port: exit %d: %s", code, errOut)
	}
}

// TestCheckWithoutRegistry: with no registry given or found, check
// applies the rules of names alone (naming, personal data) and names each
// key's inferred family; nothing is unregistered or of an undeclared
// domain.
func TestCheckWithoutRegistry(t *testing.T) {
	t.Chdir(t.TempDir())
	code, out, errOut := runCLI(t, "user:1:profile\nUser_42_Token\nuser:13800138000:phone\n", "check", "-")
	if code != exitFindings || !strings.Contains(out, "user:1:profile  family user:{id:int}:profile\n") ||
		!strings.Contains(out, "warning naming/case") || !strings.Contains(out, "error pii: mobile number") ||
		!strings.Contains(out, "3 keys, no registry (none given, no keyguard.yaml here): the rules of names alone; 1 error, 2 warnings") ||
		strings.Contains(out, "unregistered") || strings.Contains(out, "domain:") {
		t.Errorf("check without a registry: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runCLI(t, "", "check", "--format", "json", "user:1:profile")
	if code != exitClean || strings.TrimSpace(out) != `{"key":"user:1:profile","inferred":"user:{id:int}:profile","findings":[]}` {
		t.Errorf("json: exit %d %s", code, out)
	}
}
