package hotkeys

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/redistest"
)

// respCommand is args as a RESP array, written once before measuring.
func respCommand(args ...string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return []byte(b.String())
}

// waitMonitor waits until the server has a MONITOR client.
func waitMonitor(t *testing.T, rdb *redis.Client) {
	t.Helper()
	for i := 0; ; i++ {
		list, err := rdb.ClientList(context.Background()).Result()
		if err == nil && strings.Contains(list, "cmd=monitor") {
			return
		}
		if i == 5000 {
			t.Fatalf("no MONITOR client: %v", err)
		}
		time.Sleep(2 * time.Millisecond) // polling an event the server only shows in CLIENT LIST
	}
}

// TestMonitorBigLineBounded: a 32 MiB SET under MONITOR is one line,
// counted as long and skipped while the sample keeps at most MaxLineBytes
// of it (allocations stay a fraction of the line); the flood of GETs after
// it stops at the line cap.
func TestMonitorBigLineBounded(t *testing.T) {
	srv := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer rdb.Close()
	const value = 32 << 20
	set := respCommand("SET", "blob:1", strings.Repeat("v", value))
	get := respCommand("GET", "cache:product:detail:P1")
	flood := []byte(strings.Repeat(string(get), 1000))
	raw, err := net.Dial("tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()

	var res *MonitorResult
	done := make(chan error, 1)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	go func() {
		var err error
		res, err = Monitor(context.Background(), &redis.Options{Addr: srv.Addr}, []string{srv.Addr}, MonitorOptions{Duration: time.Minute, MaxLines: 500, NoCostProbe: true})
		done <- err
	}()
	waitMonitor(t, rdb)
	if _, err := raw.Write(set); err != nil {
		t.Fatal(err)
	}
	for range 2 { // more GETs than the line cap
		if _, err := raw.Write(flood); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	n := res.Nodes[0]
	if n.LongLines != 1 || n.Bytes < value || res.Truncated == "" || len(res.Keys) == 0 || res.Keys[0].Key != "cache:product:detail:P1" {
		t.Fatalf("node %+v, truncated %q, keys %+v", n, res.Truncated, res.Keys[:min(2, len(res.Keys))])
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	if alloc > value/4 {
		t.Errorf("%d bytes allocated to sample a line of %d", alloc, value)
	}
	t.Logf("%d bytes allocated to sample a line of %d and %d lines", alloc, value, n.Lines)
}
