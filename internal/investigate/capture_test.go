package investigate

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/redistest"
)

// busy keeps a server busy with pipelined writes until ctx ends.
func busy(ctx context.Context, t *testing.T, addr string) <-chan struct{} {
	done := make(chan struct{})
	c := redis.NewClient(&redis.Options{Addr: addr, ClientName: "load"})
	go func() {
		defer close(done)
		defer c.Close()
		for i := 0; ctx.Err() == nil; i++ {
			c.Pipelined(ctx, func(p redis.Pipeliner) error {
				for j := 0; j < 50; j++ {
					p.Set(ctx, "load:"+itoa(j), i, 0)
				}
				return nil
			})
		}
	}()
	return done
}

func testNode(t *testing.T, srv *redistest.Server) *node {
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, ClientName: DefaultSelf})
	t.Cleanup(func() { c.Close() })
	return &node{addr: srv.Addr, c: c}
}

func captureOn(ctx context.Context, t *testing.T, n *node, lim CaptureLimits) *NodeCapture {
	t.Helper()
	return captureSeeing(ctx, t, n, lim, nil)
}

// captureSeeing is captureOn that closes seen (when not nil) once the
// capture has read a line touching a load: key.
func captureSeeing(ctx context.Context, t *testing.T, n *node, lim CaptureLimits, seen chan struct{}) *NodeCapture {
	t.Helper()
	var once sync.Once
	nc, err := capture(ctx, n, DefaultSelf, lim, NewAttributor(0, func(k string) bool {
		ok := strings.HasPrefix(k, "load:")
		if ok && seen != nil {
			once.Do(func() { close(seen) })
		}
		return ok
	}))
	if err != nil {
		t.Fatal(err)
	}
	return nc
}

// TestCaptureCaps: on a busy server a capture stops at each of its limits,
// within 10% of it, says which, and leaves no MONITOR connection open.
func TestCaptureCaps(t *testing.T) {
	srv := redistest.Start(t)
	n := testNode(t, srv)
	ctx, stop := context.WithCancel(context.Background())
	done := busy(ctx, t, srv.Addr)
	defer func() { stop(); <-done }()

	nc := captureOn(ctx, t, n, CaptureLimits{Duration: time.Minute, MaxLines: 5000, MaxBytes: 1 << 40})
	if nc.Stopped != StopLines || nc.Lines != 5000 || nc.Matched == 0 {
		t.Errorf("line cap: stopped %q after %d lines (%d matched)", nc.Stopped, nc.Lines, nc.Matched)
	}
	checkNoMonitor(t, []*redis.Client{n.c})

	nc = captureOn(ctx, t, n, CaptureLimits{Duration: time.Minute, MaxLines: 1 << 40, MaxBytes: 200_000})
	if nc.Stopped != StopBytes || nc.Bytes < 200_000 || nc.Bytes > 220_000 {
		t.Errorf("byte cap: stopped %q after %d bytes", nc.Stopped, nc.Bytes)
	}
	checkNoMonitor(t, []*redis.Client{n.c})

	const d = 2 * time.Second
	nc = captureOn(ctx, t, n, CaptureLimits{Duration: d, MaxLines: 1 << 40, MaxBytes: 1 << 40})
	if got := time.Duration(nc.Duration); nc.Stopped != StopTime || got < d || got > d+d/10 {
		t.Errorf("time cap: stopped %q after %v", nc.Stopped, got)
	}
	if !nc.Cost.Measured || nc.Cost.Before < minLoad {
		t.Errorf("the cost under load was not measured: %+v", nc.Cost)
	}
	// The server formats and sends every command to the capture: each
	// command costs it more CPU during the capture than before.
	if nc.Cost.CPUBefore <= 0 || nc.Cost.CPUDuring <= nc.Cost.CPUBefore {
		t.Errorf("CPU per command before %.2fµs, during %.2fµs: MONITOR's work is not seen", nc.Cost.CPUBefore, nc.Cost.CPUDuring)
	}
	t.Logf("cost of the capture: %+v", nc.Cost)
	checkNoMonitor(t, []*redis.Client{n.c})
}

// waitMonitor waits until the server has a MONITOR client and returns its
// CLIENT ID.
func waitMonitor(t *testing.T, c *redis.Client) int64 {
	for i := 0; i < 500; i++ {
		for _, cl := range ParseClientList(c.ClientList(context.Background()).Val()) {
			if strings.Contains(cl.Flags, "O") {
				return cl.ID
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Error("no MONITOR connection appeared")
	return -1
}

// TestCaptureEnds: a cancelled capture and one whose connection the server
// kills both end with what they gathered, and close their connection.
func TestCaptureEnds(t *testing.T) {
	srv := redistest.Start(t)
	n := testNode(t, srv)
	admin := srv.Client(t)
	lctx, stop := context.WithCancel(context.Background())
	done := busy(lctx, t, srv.Addr)
	defer func() { stop(); <-done }()

	// Each capture ends once it has read a line of the load.
	ctx, cancel := context.WithCancel(context.Background())
	seen := make(chan struct{})
	go func() { <-seen; cancel() }()
	nc := captureSeeing(ctx, t, n, CaptureLimits{Duration: time.Minute, MaxLines: 1 << 40, MaxBytes: 1 << 40}, seen)
	if nc.Stopped != StopCancelled || nc.Lines == 0 {
		t.Errorf("cancel: stopped %q after %d lines", nc.Stopped, nc.Lines)
	}
	checkNoMonitor(t, []*redis.Client{admin})

	// Redis 7.0 refuses CLIENT KILL TYPE monitor ("Unknown client type"):
	// the server kills the MONITOR connection by its ID.
	seen = make(chan struct{})
	go func() {
		<-seen
		id := waitMonitor(t, admin)
		if err := admin.ClientKillByFilter(context.Background(), "ID", itoa(int(id))).Err(); err != nil {
			t.Errorf("CLIENT KILL ID %d: %v", id, err)
		}
	}()
	nc = captureSeeing(context.Background(), t, n, CaptureLimits{Duration: time.Minute, MaxLines: 1 << 40, MaxBytes: 1 << 40}, seen)
	if nc.Stopped != StopServer || nc.Lines == 0 || nc.Matched == 0 {
		t.Errorf("killed: stopped %q after %d lines (%d matched)", nc.Stopped, nc.Lines, nc.Matched)
	}
	if len(nc.att.Accesses()) == 0 {
		t.Error("killed: the lines read before the kill were lost")
	}
	checkNoMonitor(t, []*redis.Client{admin})
}

// TestMonitorRefused: a user without +monitor gets an error that says what
// to do, and no connection stays behind.
func TestMonitorRefused(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := context.Background()
	if err := admin.Do(ctx, "ACL", "SETUSER", "reader", "on", ">pw", "~*", "+@all", "-monitor").Err(); err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "reader", Password: "pw", ClientName: DefaultSelf})
	defer c.Close()
	_, err := capture(ctx, &node{addr: srv.Addr, c: c}, DefaultSelf, CaptureLimits{Duration: time.Second, MaxLines: 10, MaxBytes: 1000}, NewAttributor(0, func(string) bool { return true }))
	if err == nil || !strings.Contains(err.Error(), "NOPERM") || !strings.Contains(err.Error(), "--notify") {
		t.Fatalf("error %v", err)
	}
	checkNoMonitor(t, []*redis.Client{admin})
}

// TestCaptureUnixSocket: writes over a unix socket are attributed through
// CLIENT LIST's "path:0" address.
func TestCaptureUnixSocket(t *testing.T) {
	sock := t.TempDir() + "/r.sock"
	redistest.Start(t, "unixsocket "+sock, "unixsocketperm 700")
	// keyguard on the socket too: its MONITOR connection and its reads
	// share the writer's MONITOR source.
	self := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, ClientName: DefaultSelf})
	defer self.Close()
	self.Ping(context.Background())
	n := &node{addr: sock, c: self}
	w := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, ClientName: "unix-writer"})
	defer w.Close()
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ctx.Err() == nil; i++ {
			w.HSet(ctx, "load:1", "f", i)
			sleepCtx(ctx, 20*time.Millisecond)
		}
	}()
	nc := captureOn(context.Background(), t, n, CaptureLimits{Duration: 1500 * time.Millisecond, MaxLines: 1 << 40, MaxBytes: 1 << 40})
	stop()
	<-done
	var got []string
	for _, a := range nc.att.Accesses() {
		c := resolve(nc.clients, a.Source, DefaultSelf)
		got = append(got, a.Source+" → "+c.Service())
		if c.Service() != "unix-writer" || !strings.HasPrefix(a.Source, "unix:") {
			t.Errorf("%s resolved to %+v", a.Source, c)
		}
	}
	if len(got) == 0 {
		t.Error("no write over the unix socket was captured")
	}
}
