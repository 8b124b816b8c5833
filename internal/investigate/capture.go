package investigate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/keyguard/keyguard/internal/monitor"
	"github.com/keyguard/keyguard/internal/resp"
	"github.com/keyguard/keyguard/internal/resp/redisopt"
)

// Capture limits: MONITOR makes the server copy every command to us, so a
// capture is bounded in time, lines and bytes (each per node).
const (
	DefaultMonitorLines = 100_000
	DefaultMonitorBytes = 64 << 20
)

// Why a capture stopped.
const (
	StopTime      = "time"
	StopLines     = "line cap"
	StopBytes     = "byte cap"
	StopCancelled = "cancelled"
	StopServer    = "the server closed the connection"
)

// CaptureLimits bound one node's capture.
type CaptureLimits struct {
	Duration time.Duration
	MaxLines int64
	MaxBytes int64
}

// NodeCapture is one node's MONITOR capture: what it read, why it stopped,
// and what it cost the server.
type NodeCapture struct {
	Addr     string `json:"addr"`
	Duration Millis `json:"duration_ms"`
	Lines    int64  `json:"lines"`
	Bytes    int64  `json:"bytes"`
	Matched  int64  `json:"matched"` // lines that touched the keys
	Orphaned int64  `json:"orphaned_script_lines,omitempty"`
	Stopped  string `json:"stopped"`
	Reason   string `json:"reason,omitempty"` // the server's words when it closed the connection
	Cost     Cost   `json:"cost"`

	att     *Attributor
	clients map[string][]Client // addr → clients (several share a unix socket's), from CLIENT LIST
}

// Cost is what a capture cost the server, from INFO: the command rate
// (total_commands_processed) over a window before MONITOR started and over
// the capture, instantaneous_ops_per_sec at both ends, and the main
// thread's CPU time per command over the same windows.
type Cost struct {
	Before     float64 `json:"commands_per_sec_before"`
	During     float64 `json:"commands_per_sec_during"`
	InstBefore int64   `json:"instantaneous_ops_before"`
	InstDuring int64   `json:"instantaneous_ops_during"`
	// Percent is how much throughput fell (negative: it rose); valid only
	// when Measured. The load's own changes move it too.
	Percent  float64 `json:"fell_percent"`
	Measured bool    `json:"measured"`
	// CPUBefore and CPUDuring are the server's CPU microseconds per
	// command. A server that is busy all the time serves commands at the
	// inverse of that, so CPUPercent (1 - before/during) is the fall of its
	// top throughput under MONITOR, whatever the load did meanwhile.
	CPUBefore  float64 `json:"cpu_us_per_command_before"`
	CPUDuring  float64 `json:"cpu_us_per_command_during"`
	CPUPercent float64 `json:"saturated_fell_percent"`
	Note       string  `json:"note,omitempty"`
}

// minLoad is the throughput under which a change says nothing about
// MONITOR: at a few hundred commands a second the load's own swings are
// larger than MONITOR's cost.
const minLoad = 1000

// baselineWindow is how long the throughput is measured before MONITOR
// starts.
const baselineWindow = time.Second

// capture runs MONITOR on one node within lim, feeding the lines to att,
// and keeps CLIENT LIST current while new clients appear. The MONITOR
// connection is closed on every return path: at a cap, when ctx ends,
// and when the server drops it.
func capture(ctx context.Context, n *node, self string, lim CaptureLimits, att *Attributor) (*NodeCapture, error) {
	nc := &NodeCapture{Addr: n.addr, att: att}
	base, err := statsNow(ctx, n)
	if err != nil {
		return nil, fmt.Errorf("INFO stats on %s: %w", n.addr, err)
	}
	sleepCtx(ctx, min(baselineWindow, lim.Duration/4))
	if ctx.Err() != nil {
		nc.Stopped = StopCancelled
		return nc, nil
	}
	before, err := statsNow(ctx, n)
	if err != nil {
		return nil, fmt.Errorf("INFO stats on %s: %w", n.addr, err)
	}
	cfg, err := redisopt.Config(ctx, n.c.Options())
	if err != nil {
		return nil, err
	}
	conn, err := resp.Dial(ctx, cfg, n.addr, resp.Session{Name: self, Timeout: 10 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("connect for MONITOR: %w", err)
	}
	defer conn.Close()
	if _, err := conn.Simple(ctx, "MONITOR"); err != nil {
		return nil, monitorError(n.addr, err)
	}
	book := newClientBook(n)
	bookDone := book.run(ctx)
	start := time.Now()
	nc.read(ctx, conn, start.Add(lim.Duration), lim, book)
	nc.Duration = Millis(time.Since(start))
	conn.Close()
	// Read after closing, so that a cancelled run does not wait with a
	// MONITOR open; the reading still ends the capture's window.
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	during, derr := statsNow(lctx, n)
	att.Flush()
	nc.Matched, nc.Orphaned = att.Matched, att.Orphaned
	if derr == nil {
		nc.Cost = costOf(base, before, during)
	} else {
		nc.Cost.Note = "INFO after the capture failed: " + derr.Error()
	}
	book.stop()
	<-bookDone
	nc.clients = book.final(lctx)
	return nc, nil
}

// maxLine bounds one MONITOR line kept in memory; the rest of a longer
// line (a multi-megabyte SET) is read and dropped, the arguments before
// the cut still count.
const maxLine = 1 << 20

// read feeds the lines of the MONITOR stream to the attributor until end,
// a cap, ctx's end or the server's, and says why it stopped.
func (nc *NodeCapture) read(ctx context.Context, conn *resp.Conn, end time.Time, lim CaptureLimits, book *clientBook) {
	if err := conn.BeginUntil(ctx, end); err != nil {
		nc.Stopped, nc.Reason = stopReason(ctx, err)
		return
	}
	seen := map[string]bool{}
	for {
		ln, err := conn.ReadLine(maxLine)
		nc.Bytes += int64(ln.Size)
		if err != nil {
			nc.Stopped, nc.Reason = stopReason(ctx, err)
			return
		}
		nc.Lines++
		parse := monitor.Parse
		if ln.Cut {
			parse = monitor.ParseCut
		}
		if l, err := parse(string(ln.Text)); err == nil {
			if l.Source != SourceLua && !seen[l.Source] {
				seen[l.Source] = true
				book.want()
			}
			nc.att.Feed(&l)
		}
		if nc.Lines >= lim.MaxLines {
			nc.Stopped = StopLines
			return
		}
		if nc.Bytes >= lim.MaxBytes {
			nc.Stopped = StopBytes
			return
		}
	}
}

func stopReason(ctx context.Context, err error) (string, string) {
	var ne net.Error
	var se resp.ServerError
	switch {
	case ctx.Err() != nil:
		return StopCancelled, ""
	case errors.As(err, &ne) && ne.Timeout():
		return StopTime, ""
	case errors.As(err, &se):
		return StopServer, string(se)
	case errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed):
		return StopServer, ""
	}
	return StopServer, err.Error()
}

func monitorError(addr string, err error) error {
	var se resp.ServerError
	if errors.As(err, &se) && se.Code() == "NOPERM" {
		return fmt.Errorf("MONITOR on %s: %s\n\tTry: a user allowed +monitor, or --notify (keyspace notifications: timing without the writer's identity)", addr, se)
	}
	return fmt.Errorf("MONITOR on %s: %w", addr, err)
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// stats is a reading of INFO.
type stats struct {
	at    time.Time
	total int64   // total_commands_processed
	inst  int64   // instantaneous_ops_per_sec
	cpu   float64 // seconds of CPU: the main thread's (Redis 7+), else the process's
}

func statsNow(ctx context.Context, n *node) (stats, error) {
	text, err := n.c.Info(ctx).Result() // the default sections hold stats and cpu
	if err != nil {
		return stats{}, err
	}
	s := stats{at: time.Now()}
	var main, all float64
	for _, line := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		f, _ := strconv.ParseFloat(v, 64)
		switch k {
		case "total_commands_processed":
			s.total = int64(f)
		case "instantaneous_ops_per_sec":
			s.inst = int64(f)
		case "used_cpu_sys_main_thread", "used_cpu_user_main_thread":
			main += f
		case "used_cpu_sys", "used_cpu_user":
			all += f
		}
	}
	s.cpu = all
	if main > 0 {
		s.cpu = main
	}
	return s, nil
}

// costOf compares the command rate of the window before MONITOR (base to
// before) with the rate during the capture (before to during).
func costOf(base, before, during stats) Cost {
	c := Cost{InstBefore: before.inst, InstDuring: during.inst}
	if d := before.at.Sub(base.at).Seconds(); d > 0 {
		c.Before = float64(before.total-base.total) / d
	}
	if d := during.at.Sub(before.at).Seconds(); d > 0 {
		c.During = float64(during.total-before.total) / d
	}
	if c.Before < minLoad {
		c.Note = fmt.Sprintf("the load was too light to measure MONITOR's cost (%.0f commands/s before the capture)", c.Before)
		return c
	}
	c.Measured = true
	c.Percent = 100 * (c.Before - c.During) / c.Before
	if n0, n1 := before.total-base.total, during.total-before.total; n0 > 0 && n1 > 0 {
		c.CPUBefore = 1e6 * (before.cpu - base.cpu) / float64(n0)
		c.CPUDuring = 1e6 * (during.cpu - before.cpu) / float64(n1)
		if c.CPUBefore > 0 && c.CPUDuring > 0 {
			c.CPUPercent = 100 * (1 - c.CPUBefore/c.CPUDuring)
		}
	}
	return c
}

// clientBook keeps one node's CLIENT LIST: read when the capture starts,
// again soon after a client it does not know appears (at most every
// refreshGap), and once more at the end.
type clientBook struct {
	n      *node
	mu     sync.Mutex
	byAddr map[string][]Client
	wantCh chan struct{}
	stopCh chan struct{}
}

const refreshGap = 100 * time.Millisecond

func newClientBook(n *node) *clientBook {
	return &clientBook{n: n, byAddr: map[string][]Client{}, wantCh: make(chan struct{}, 1), stopCh: make(chan struct{})}
}

func (b *clientBook) want() {
	select {
	case b.wantCh <- struct{}{}:
	default:
	}
}

func (b *clientBook) stop() { close(b.stopCh) }

func (b *clientBook) run(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	b.refresh(ctx)
	go func() {
		defer close(done)
		for {
			select {
			case <-b.stopCh:
				return
			case <-ctx.Done():
				return
			case <-b.wantCh:
				b.refresh(ctx)
				sleepCtx(ctx, refreshGap)
			}
		}
	}()
	return done
}

// refresh reads CLIENT LIST; clients that left stay known.
func (b *clientBook) refresh(ctx context.Context) {
	text, err := b.n.c.ClientList(ctx).Result()
	if err != nil {
		return
	}
	now := map[string][]Client{}
	for _, c := range ParseClientList(text) {
		now[c.Addr] = append(now[c.Addr], c)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for addr, cs := range now {
		b.byAddr[addr] = cs
	}
}

func (b *clientBook) final(ctx context.Context) map[string][]Client {
	b.refresh(ctx)
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.byAddr
}
