package hotkeys

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/redistest"
)

// costShare is the throughput change as a share: " (-12.3%)".
var costShare = regexp.MustCompile(`\([+-][0-9.]+%\)`)

// TestMonitorCostIdle: on an idle server, MONITOR's cost is not a share
// of the few commands a second keyguard's own INFO makes: it says it
// cannot be measured.
func TestMonitorCostIdle(t *testing.T) {
	srv := redistest.Start(t)
	res, err := Monitor(context.Background(), &redis.Options{}, []string{srv.Addr}, MonitorOptions{Duration: 600 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	n := res.Nodes[0]
	if n.OpsBefore < 0 || n.OpsBefore >= minCostOps {
		t.Fatalf("an idle server measured at %.1f ops/s", n.OpsBefore)
	}
	if c := n.Cost(); costShare.MatchString(c) || !strings.Contains(c, "the cost cannot be measured") || strings.Contains(c, "per command") {
		t.Errorf("cost on an idle server: %s", c)
	}
}

// TestMonitor samples a real server under load: the hot key comes out on
// top with about its rate, the throughput cost is measured, and the caps
// stop the sample.
func TestMonitor(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	db3 := redis.NewClient(&redis.Options{Addr: srv.Addr, DB: 3})
	t.Cleanup(func() { db3.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { // load: a hot key and a tail, until the test ends
		for i := 0; ctx.Err() == nil; i++ {
			rdb.Get(ctx, "cache:product:detail:P1")
			if i%10 == 0 {
				rdb.Set(ctx, fmt.Sprintf("goods:hot:area:110101:%d", i%97), "x", time.Minute)
				db3.Get(ctx, "cache:product:detail:P1") // the same name in database 3: another key
			}
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() })

	opts := &redis.Options{}
	res, err := Monitor(context.Background(), opts, []string{srv.Addr}, MonitorOptions{Duration: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Lines == 0 || len(res.Keys) == 0 || res.Keys[0].Key != "cache:product:detail:P1" || res.Keys[0].DB != 0 || res.Truncated != "" {
		t.Fatalf("sample: %d lines, truncated %q, keys %+v", res.Lines, res.Truncated, res.Keys[:min(3, len(res.Keys))])
	}
	if !slices.ContainsFunc(res.Keys, func(k MonitorKey) bool {
		return k.Key == "cache:product:detail:P1" && k.DB == 3 && k.Rate < res.Keys[0].Rate
	}) {
		t.Errorf("the key of database 3 is not its own entry: %+v", res.Keys[:min(5, len(res.Keys))])
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
	if n.OpsBefore >= minCostOps && !costShare.MatchString(n.Cost()) {
		t.Errorf("cost under load at %.0f ops/s without its share: %s", n.OpsBefore, n.Cost())
	}

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

// TestMonitorUnixSocket: the sample runs over the options' unix socket;
// a line longer than MaxLineBytes is counted and skipped, the lines
// around it still count.
func TestMonitorUnixSocket(t *testing.T) {
	sock := t.TempDir() + "/r.sock"
	redistest.Start(t, "unixsocket "+sock, "unixsocketperm 700")
	o := &redis.Options{Network: "unix", Addr: sock}
	rdb := redis.NewClient(o)
	defer rdb.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ctx.Err() == nil; i++ {
			rdb.Get(ctx, "cache:product:detail:P1")
			if i%5 == 0 { // often enough that a slow machine still sends some during the sample
				rdb.Set(ctx, "blob", strings.Repeat("x", 2000), 0)
			}
			time.Sleep(time.Millisecond)
		}
	})
	defer func() { cancel(); wg.Wait() }()
	res, err := Monitor(context.Background(), o, []string{sock}, MonitorOptions{Duration: 400 * time.Millisecond, MaxLineBytes: 1000, NoCostProbe: true})
	if err != nil {
		t.Fatal(err)
	}
	n := res.Nodes[0]
	if n.Err != "" || n.Lines == 0 || n.LongLines == 0 || n.Unparsed != 0 || len(res.Keys) == 0 || res.Keys[0].Key != "cache:product:detail:P1" {
		t.Errorf("over the socket: %+v, keys %+v", n, res.Keys[:min(3, len(res.Keys))])
	}
	if n.Bytes < n.LongLines*2000 {
		t.Errorf("%d bytes for %d long lines of 2000+", n.Bytes, n.LongLines)
	}
}
