package hotkey

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/redistest"
)

func TestParseMonitorLine(t *testing.T) {
	for _, c := range []struct {
		line   string
		db     int
		client string
		args   []string
	}{
		{`+1339518083.107412 [0 127.0.0.1:60866] "keys" "*"` + "\r\n", 0, "127.0.0.1:60866", []string{"keys", "*"}},
		{`1700000000.000001 [12 lua] "GET" "a b"`, 12, "lua", []string{"GET", "a b"}},
		{`1.2 [0 [::1]:6379] "set" "k\"q\\" "\x00\xff\n\r\t\a\b"`, 0, "[::1]:6379", []string{"set", `k"q\`, "\x00\xff\n\r\t\a\b"}},
		{`1.2 [0 unix:/tmp/redis.sock] "ping"`, 0, "unix:/tmp/redis.sock", []string{"ping"}},
		{`1.2 [0 127.0.0.1:1] "get" "\xAb"`, 0, "127.0.0.1:1", []string{"get", "\xab"}},
	} {
		l, err := parseMonitorLine([]byte(c.line), nil)
		if err != nil {
			t.Errorf("%q: %v", c.line, err)
			continue
		}
		if l.DB != c.db || l.Client != c.client || !slices.Equal(l.Args, c.args) {
			t.Errorf("%q: %+v", c.line, l)
		}
	}
	for _, bad := range []string{"+OK", "", "1.2 [0 x]", `1.2 [x 1] "a"`, `1.2 [0 1] "a`, `1.2 [0 1] "a""b"`, `1.2 [0 1] "\q"`, `1.2 [0 1] "\x4"`, `1.2 [-1 a] "x"`} {
		if l, err := parseMonitorLine([]byte(bad), nil); err == nil {
			t.Errorf("%q parsed: %+v", bad, l)
		}
	}
}

// quoteRepr quotes s as Redis's sdscatrepr does for MONITOR.
func quoteRepr(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\', '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		default:
			if c >= 0x20 && c < 0x7f {
				b.WriteByte(c)
			} else {
				fmt.Fprintf(&b, `\x%02x`, c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// FuzzMonitorLine: any bytes parse or fail without panicking, and
// arguments quoted as Redis quotes them come back unchanged.
func FuzzMonitorLine(f *testing.F) {
	f.Add(`+1339518083.107412 [0 127.0.0.1:60866] "keys" "*"`, "set", "k\"\\\x00\xff")
	f.Add(`1.2 [0 lua] "a"`, "", "] \"")
	f.Fuzz(func(t *testing.T, line, a, b string) {
		_, _ = parseMonitorLine([]byte(line), nil)
		built := "1700000000.123456 [3 10.0.0.1:5000] " + quoteRepr(a) + " " + quoteRepr(b)
		l, err := parseMonitorLine([]byte(built), nil)
		if err != nil {
			t.Fatalf("%q: %v", built, err)
		}
		if len(l.Args) != 2 || l.Args[0] != a || l.Args[1] != b || l.DB != 3 || l.Client != "10.0.0.1:5000" {
			t.Fatalf("%q → %+v", built, l)
		}
	})
}

// TestMonitor samples a real server under load: the hot key comes out on
// top with about its rate, the throughput cost is measured, and the caps
// stop the sample.
func TestMonitor(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { // load: a hot key and a tail, until the test ends
		for i := 0; ctx.Err() == nil; i++ {
			rdb.Get(ctx, "cache:product:detail:P1")
			if i%10 == 0 {
				rdb.Set(ctx, fmt.Sprintf("goods:hot:area:110101:%d", i%97), "x", time.Minute)
			}
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() })

	opts := &redis.Options{}
	res, err := Monitor(context.Background(), opts, []string{srv.Addr}, MonitorOptions{Duration: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Lines == 0 || len(res.Keys) == 0 || res.Keys[0].Key != "cache:product:detail:P1" || res.Truncated != "" {
		t.Fatalf("sample: %d lines, truncated %q, keys %+v", res.Lines, res.Truncated, res.Keys[:min(3, len(res.Keys))])
	}
	n := res.Nodes[0]
	if n.OpsBefore <= 0 || n.OpsDuring <= 0 || n.CPUBefore < 0 || n.Cost() == "" {
		t.Errorf("cost not measured: %+v", n)
	}
	// The hot key's rate is what the lines say over the duration.
	if r := res.Keys[0].Rate; r < 0.5*float64(res.Lines)/res.Duration.Seconds() {
		t.Errorf("hot key rate %.0f/s, but %d lines in %v are mostly its GETs", r, res.Lines, res.Duration)
	}
	t.Logf("MONITOR cost: %s", n.Cost())

	res, err = Monitor(context.Background(), opts, []string{srv.Addr}, MonitorOptions{Duration: 10 * time.Second, MaxLines: 100, NoCostProbe: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Truncated != "line cap 100" || res.Lines != 101 || res.Duration >= 10*time.Second {
		t.Errorf("line cap: truncated %q after %d lines in %v", res.Truncated, res.Lines, res.Duration)
	}
	res, err = Monitor(context.Background(), opts, []string{srv.Addr}, MonitorOptions{Duration: 10 * time.Second, MaxBytes: 4096, NoCostProbe: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Truncated, "byte cap") || res.Bytes > 4096+DefaultMonitorLineSize {
		t.Errorf("byte cap: truncated %q after %d bytes", res.Truncated, res.Bytes)
	}
}

// TestMonitorAuthAndErrors: credentials are sent; a refused MONITOR and
// an unreachable node are errors naming the node.
func TestMonitorAuthAndErrors(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := context.Background()
	if err := admin.Do(ctx, "ACL", "SETUSER", "watcher", "on", ">pw", "+monitor", "+info", "+ping").Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.Do(ctx, "ACL", "SETUSER", "nomon", "on", ">pw", "+info").Err(); err != nil {
		t.Fatal(err)
	}
	res, err := Monitor(ctx, &redis.Options{Username: "watcher", Password: "pw"}, []string{srv.Addr}, MonitorOptions{Duration: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("watcher: %v", err)
	}
	if res.Nodes[0].Err != "" {
		t.Errorf("watcher: %s", res.Nodes[0].Err)
	}
	_, err = Monitor(ctx, &redis.Options{Username: "nomon", Password: "pw"}, []string{srv.Addr}, MonitorOptions{Duration: 100 * time.Millisecond, NoCostProbe: true})
	if err == nil || !strings.Contains(err.Error(), "NOPERM") {
		t.Errorf("nomon: %v, want the server's refusal", err)
	}
	_, err = Monitor(ctx, &redis.Options{Password: "wrong"}, []string{srv.Addr}, MonitorOptions{Duration: 100 * time.Millisecond, NoCostProbe: true})
	if err == nil {
		t.Errorf("wrong password accepted")
	}
}
