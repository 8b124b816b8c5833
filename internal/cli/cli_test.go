package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// The bar is redrawn in place on a terminal; off one, a line comes every
// 10 s, and the final one only when a line was written.
func TestProgress(t *testing.T) {
	line := "audit [######..................]  25% 250,000/1,000,000 keys"
	if got := Meter(0.25); !strings.HasPrefix(line, "audit "+got) {
		t.Errorf("Meter(0.25) = %q", got)
	}
	var buf strings.Builder
	bar := &Progress{w: &buf, bar: true, now: time.Now}
	bar.Show(line, false)
	bar.Clear()
	if want := "\r" + line + "\x1b[K\r\x1b[K"; buf.String() != want {
		t.Errorf("bar\n got %q\nwant %q", buf.String(), want)
	}
	if isTerminal(&buf) {
		t.Error("a strings.Builder is a terminal")
	}
	// Off a terminal: a line every 10 s, and the final one.
	buf.Reset()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	lines := &Progress{w: &buf, now: func() time.Time { return now }}
	for range 25 { // 25 s of updates every second
		lines.Show("x", false)
		now = now.Add(time.Second)
	}
	lines.Show("done", true)
	if got := strings.Count(buf.String(), "\n"); got != 3 || !strings.HasSuffix(buf.String(), "Z done\n") {
		t.Errorf("lines off a terminal:\n%s", buf.String())
	}
	// A run shorter than the interval writes no line, not even the final.
	buf.Reset()
	short := &Progress{w: &buf, now: func() time.Time { return now }}
	short.Show("x", false)
	short.Show("done", true)
	if buf.Len() != 0 {
		t.Errorf("a short run off a terminal wrote %q", buf.String())
	}
}

func TestDurationFlagTakesDays(t *testing.T) {
	fs := NewFlags(&Env{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}, Getenv: func(string) string { return "" }}, "x", "x", "")
	d := fs.Duration("window", time.Hour, "how far back")
	if _, err := fs.Parse([]string{"--window", "7d"}); err != nil || *d != 7*24*time.Hour {
		t.Fatalf("--window 7d: %v %v", *d, err)
	}
}

// The registry's next step reads the JSON report the run wrote, where it
// is a file: a report in another format, on stdout or sent to a device
// names the run that writes one.
func TestInitNext(t *testing.T) {
	for _, tt := range []struct{ format, out, want string }{
		{"json", "a.json", "keyguard init --from-audit a.json writes"},
		{"json", "my report.json", "keyguard init --from-audit 'my report.json' writes"},
		{"json", "", "keyguard rdb dump.rdb --format json --out audit.json, then keyguard init --from-audit audit.json"},
		{"json", "-", "--format json --out audit.json, then"},
		{"json", "/dev/null", "--format json --out audit.json, then"},
		{"json", "/dev/stdout", "--format json --out audit.json, then"},
		{"text", "a.txt", "--format json --out audit.json, then"},
	} {
		if got := InitNext(tt.format, tt.out, "rdb dump.rdb"); !strings.Contains(got, tt.want) {
			t.Errorf("InitNext(%q, %q) = %q, want %q", tt.format, tt.out, got, tt.want)
		}
	}
}
