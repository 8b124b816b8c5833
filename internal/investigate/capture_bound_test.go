package investigate

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/keyguard/keyguard/internal/redistest"
)

// TestCaptureBigLineBounded: a 32 MiB SET under MONITOR is read through
// and counted while the capture keeps at most maxLine of it; the flood
// after it stops at the line cap.
func TestCaptureBigLineBounded(t *testing.T) {
	srv := redistest.Start(t)
	n := testNode(t, srv)
	const value = 32 << 20
	cmd := func(args ...string) []byte {
		var b strings.Builder
		fmt.Fprintf(&b, "*%d\r\n", len(args))
		for _, a := range args {
			fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
		}
		return []byte(b.String())
	}
	set := cmd("SET", "load:blob", strings.Repeat("v", value))
	flood := []byte(strings.Repeat(string(cmd("GET", "load:1")), 1000))
	raw, err := net.Dial("tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()

	var nc *NodeCapture
	done := make(chan struct{})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	go func() {
		defer close(done)
		nc = captureOn(context.Background(), t, n, CaptureLimits{Duration: time.Minute, MaxLines: 500, MaxBytes: 1 << 40})
	}()
	waitMonitor(t, n.c)
	if _, err := raw.Write(set); err != nil {
		t.Fatal(err)
	}
	for range 2 { // more GETs than the line cap
		if _, err := raw.Write(flood); err != nil {
			t.Fatal(err)
		}
	}
	<-done
	runtime.ReadMemStats(&after)
	// The lines are the SET, the GETs and the test's own CLIENT LIST.
	if nc.Stopped != StopLines || nc.Lines != 500 || nc.Matched < 490 || nc.Bytes < value {
		t.Fatalf("stopped %q after %d lines (%d matched), %d bytes", nc.Stopped, nc.Lines, nc.Matched, nc.Bytes)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	if alloc > value/4 {
		t.Errorf("%d bytes allocated to capture a line of %d", alloc, value)
	}
	t.Logf("%d bytes allocated to capture a line of %d and %d lines", alloc, value, nc.Lines)
}
