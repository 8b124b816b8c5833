package redistest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A port owned by another redis-server must be reported as busy (so start
// retries elsewhere), not mistaken for ours because PING answers.
func TestLaunchDetectsPortOwnedByAnotherServer(t *testing.T) {
	t.Parallel()
	other := Start(t)
	dir := t.TempDir()
	s := &Server{
		Addr:    other.Addr,
		Port:    other.Port,
		Dir:     dir,
		bin:     lookBinary(t),
		logPath: filepath.Join(dir, "redis.log"),
		stderr:  &lockedBuffer{},
	}
	s.conf = config(dir, s.logPath, []int{other.Port}, nil)
	s.mu.Lock()
	err := s.launch()
	s.mu.Unlock()
	if !errors.Is(err, errPortBusy) {
		t.Fatalf("launch on a taken port: err = %v, want errPortBusy\n%s", err, s.tail())
	}
	if s.proc != nil {
		t.Error("failed launch left a process behind")
	}
}

func TestLaunchReportsConfigError(t *testing.T) {
	t.Parallel()
	s := Start(t)
	s.Stop()
	s.conf += "no-such-directive yes\n"
	s.mu.Lock()
	err := s.launch()
	s.mu.Unlock()
	if err == nil || errors.Is(err, errPortBusy) || errors.Is(err, errNotReady) {
		t.Fatalf("launch with a bad directive: err = %v, want a non-retryable error", err)
	}
	if !strings.Contains(s.Log(), "no-such-directive") {
		t.Errorf("Log() does not show the config error:\n%s", s.Log())
	}
}

// recorder is a testing.TB that records Skip and Fatal instead of stopping.
type recorder struct {
	testing.TB
	skipped, fatal string
}

func (r *recorder) Helper()           {}
func (r *recorder) Skip(args ...any)  { r.skipped = strings.TrimSpace(sprint(args)) }
func (r *recorder) Fatal(args ...any) { r.fatal = strings.TrimSpace(sprint(args)) }

func sprint(args []any) string {
	var b strings.Builder
	for _, a := range args {
		b.WriteString(a.(string))
	}
	return b.String()
}

func TestLookBinaryMissing(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-redis-server")
	tests := []struct {
		name      string
		require   string
		wantSkip  bool
		wantFatal bool
	}{
		{name: "local skips", require: "", wantSkip: true},
		{name: "CI fails", require: "1", wantFatal: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("KEYGUARD_REDIS_SERVER", missing)
			t.Setenv("KEYGUARD_REQUIRE_REDIS", tt.require)
			r := &recorder{TB: t}
			lookBinary(r)
			if (r.skipped != "") != tt.wantSkip || (r.fatal != "") != tt.wantFatal {
				t.Fatalf("skipped=%q fatal=%q; want skip=%v fatal=%v", r.skipped, r.fatal, tt.wantSkip, tt.wantFatal)
			}
			if msg := r.skipped + r.fatal; !strings.Contains(msg, "KEYGUARD_REDIS_SERVER") {
				t.Errorf("message lacks a hint: %q", msg)
			}
		})
	}
}

func TestLookBinaryOverride(t *testing.T) {
	path, err := os.Executable() // any executable file will do
	if err != nil {
		t.Skip(err)
	}
	t.Setenv("KEYGUARD_REDIS_SERVER", path)
	if got := lookBinary(t); got != path {
		t.Errorf("lookBinary = %q, want %q", got, path)
	}
}

func TestQuote(t *testing.T) {
	tests := []struct{ in, want string }{
		{`/tmp/a`, `"/tmp/a"`},
		{`/tmp/a b`, `"/tmp/a b"`},
		{`/tmp/"x"\y`, `"/tmp/\"x\"\\y"`},
	}
	for _, tt := range tests {
		if got := quote(tt.in); got != tt.want {
			t.Errorf("quote(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
