package hotkeys

import (
	"context"
	"errors"
	"fmt"
	"github.com/keyguard/keyguard/hotkey"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/hotkey/topk"
	"github.com/keyguard/keyguard/internal/monitor"
	"github.com/keyguard/keyguard/internal/rediscmd"
	"github.com/keyguard/keyguard/internal/resp"
	"github.com/keyguard/keyguard/internal/resp/redisopt"
)

// MONITOR defaults.
const (
	DefaultMonitorLines    = 1_000_000
	DefaultMonitorBytes    = 256 << 20
	DefaultMonitorLineSize = 64 << 10
	maxCostProbe           = 5 * time.Second
)

// MonitorOptions bounds a MONITOR sample.
type MonitorOptions struct {
	// Duration is how long to listen (required).
	Duration time.Duration
	// MaxLines and MaxBytes stop the sample early, all nodes together
	// (DefaultMonitorLines, DefaultMonitorBytes).
	MaxLines, MaxBytes int64
	// MaxLineBytes skips longer lines (counted, not parsed):
	// DefaultMonitorLineSize.
	MaxLineBytes int
	// TopK is how many keys are kept (hotkey.DefaultTopK).
	TopK int
	// NoCostProbe skips measuring the server's throughput before MONITOR
	// (the probe lasts as long as the sample, at most 5 s).
	NoCostProbe bool
}

// MonitorNode is what one node's MONITOR gave, and what it cost.
type MonitorNode struct {
	Addr      string `json:"addr"`
	Lines     int64  `json:"lines"`
	Bytes     int64  `json:"bytes"`
	LongLines int64  `json:"long_lines"` // over MaxLineBytes, skipped
	Unparsed  int64  `json:"unparsed"`   // lines that are not MONITOR command lines
	// Commands per second and server CPU (fraction of one core, user +
	// system) before and during MONITOR, from INFO; -1 when not measured.
	OpsBefore float64 `json:"ops_before"`
	OpsDuring float64 `json:"ops_during"`
	CPUBefore float64 `json:"cpu_before"`
	CPUDuring float64 `json:"cpu_during"`
	Err       string  `json:"error,omitempty"`
	// NotObserved is the part of the sample this node's MONITOR did not
	// see (the connection was lost): "from 2s to 10s"; "" when it saw all.
	NotObserved string `json:"not_observed,omitempty"`
}

// NotObserved lists the nodes whose MONITOR lost part of the sample, as
// "10.0.0.1:6379 from 2s to 10s (…)"; a key rate over them is a lower
// bound, and a key not seen there may be hot all the same.
func (r *MonitorResult) NotObserved() []string {
	if r == nil {
		return nil
	}
	var out []string
	for _, n := range r.Nodes {
		if n.NotObserved != "" {
			out = append(out, fmt.Sprintf("%s %s (%s)", n.Addr, n.NotObserved, n.Err))
		}
	}
	return out
}

// minCostOps is the throughput under which MONITOR's cost is not given as
// a share: on a nearly idle server the few commands a second (keyguard's
// own INFO among them) make any change a large percentage of nothing, and
// at a few hundred the load's own swings are larger than MONITOR's cost
// (investigate draws the same line).
const minCostOps = 1000

// Cost describes the node's throughput change under MONITOR, or "".
func (n *MonitorNode) Cost() string {
	if n.OpsBefore < 0 || n.OpsDuring < 0 {
		return ""
	}
	s := fmt.Sprintf("%s ops/s before, %s during", fmtRate(n.OpsBefore), fmtRate(n.OpsDuring))
	measurable := n.OpsBefore >= minCostOps
	if measurable {
		s += fmt.Sprintf(" (%+.1f%%)", 100*(n.OpsDuring-n.OpsBefore)/n.OpsBefore)
	} else {
		s += fmt.Sprintf(": the cost cannot be measured, the server ran under %s commands a second before MONITOR", fmtRate(minCostOps))
	}
	if n.CPUBefore >= 0 && n.CPUDuring >= 0 {
		s += fmt.Sprintf("; server CPU %.0f%% → %.0f%% of a core", 100*n.CPUBefore, 100*n.CPUDuring)
		// Per command, the cost does not depend on the traffic changing
		// between the two windows.
		if measurable && n.OpsDuring >= minCostOps {
			s += fmt.Sprintf(", %.1f → %.1f µs per command", 1e6*n.CPUBefore/n.OpsBefore, 1e6*n.CPUDuring/n.OpsDuring)
		}
	}
	return s
}

// MonitorResult is a MONITOR sample of every node.
type MonitorResult struct {
	Duration   time.Duration `json:"-"` // how long it listened
	DurationMS int64         `json:"duration_ms"`
	Lines      int64         `json:"lines"`
	Bytes      int64         `json:"bytes"`
	Truncated  string        `json:"truncated,omitempty"` // why the sample stopped early, or ""
	Nodes      []MonitorNode `json:"nodes"`
	Keys       []MonitorKey  `json:"-"` // keys per second over Duration, hottest first (in Report.Keys)
}

// MonitorKey is a key of a database and its operations per second in the
// sample.
type MonitorKey struct {
	Key  string
	DB   int
	Rate float64
}

// Monitor listens with MONITOR on every address for opts.Duration
// (concurrently), counting the keys of every command it sees. conn gives
// the network, credentials, TLS and dialer (its Addr is ignored). MONITOR costs
// the server throughput: each node's commands per second and CPU are
// measured before and during the sample.
func Monitor(ctx context.Context, conn *redis.Options, addrs []string, opts MonitorOptions) (*MonitorResult, error) {
	if opts.Duration <= 0 {
		return nil, fmt.Errorf("hotkey: MONITOR needs a duration")
	}
	if opts.MaxLines <= 0 {
		opts.MaxLines = DefaultMonitorLines
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMonitorBytes
	}
	if opts.MaxLineBytes <= 0 {
		opts.MaxLineBytes = DefaultMonitorLineSize
	}
	if opts.TopK <= 0 {
		opts.TopK = hotkey.DefaultTopK
	}
	m := &monitorRun{opts: opts, sk: topk.New(topk.Options{K: opts.TopK}), res: &MonitorResult{Nodes: make([]MonitorNode, len(addrs))}}
	ctx, m.stop = context.WithCancel(ctx)
	defer m.stop()
	probe := min(opts.Duration, maxCostProbe)
	if opts.NoCostProbe {
		probe = 0
	}
	var wg sync.WaitGroup
	start := time.Now().Add(probe)
	for i, addr := range addrs {
		wg.Go(func() { m.node(ctx, conn, addr, start, &m.res.Nodes[i]) })
	}
	wg.Wait()
	res := m.res
	res.Duration = opts.Duration
	if d := time.Duration(m.elapsed.Load()); d > 0 && d < res.Duration {
		res.Duration = d
	}
	res.DurationMS = res.Duration.Milliseconds()
	res.Lines, res.Bytes = m.lines.Load(), m.bytes.Load()
	if v := m.truncated.Load(); v != nil {
		res.Truncated = v.(string)
	}
	secs := max(res.Duration.Seconds(), 0.001)
	for _, it := range m.sk.Top(nil) {
		db, key := splitDBKey(it.Key)
		res.Keys = append(res.Keys, MonitorKey{Key: key, DB: db, Rate: float64(it.Count) / secs})
	}
	failed := 0
	for i := range res.Nodes {
		if res.Nodes[i].Err != "" {
			failed++
		}
	}
	if failed == len(addrs) && failed > 0 {
		return res, fmt.Errorf("MONITOR failed on every node: %s", res.Nodes[0].Err)
	}
	return res, nil
}

type monitorRun struct {
	opts         MonitorOptions
	sk           *topk.Sketch
	res          *MonitorResult
	stop         context.CancelFunc
	lines, bytes atomic.Int64
	elapsed      atomic.Int64 // the shortest node run that stopped on a cap, ns
	truncated    atomic.Value // string
}

// node measures and monitors one address; results go to n.
func (m *monitorRun) node(ctx context.Context, conn *redis.Options, addr string, start time.Time, n *MonitorNode) {
	n.Addr = addr
	n.OpsBefore, n.OpsDuring, n.CPUBefore, n.CPUDuring = -1, -1, -1, -1
	o := *conn
	o.Addr = addr
	o.PoolSize = 1
	info := redis.NewClient(&o)
	defer info.Close()
	before, beforeErr := readLoad(ctx, info)
	if wait := time.Until(start); wait > 0 {
		select {
		case <-ctx.Done():
			n.Err = ctx.Err().Error()
			return
		case <-time.After(wait):
		}
	}
	mid, midErr := readLoad(ctx, info)
	if beforeErr == nil && midErr == nil && !m.opts.NoCostProbe {
		n.OpsBefore, n.CPUBefore = mid.since(before)
	}
	if err := m.listen(ctx, &o, n); err != nil {
		n.Err = err.Error()
		if n.Lines == 0 {
			return
		}
	}
	end, endErr := readLoad(context.WithoutCancel(ctx), info)
	if midErr == nil && endErr == nil {
		n.OpsDuring, n.CPUDuring = end.since(mid)
	}
}

// listen runs MONITOR on one node until the duration ends or a cap is hit.
func (m *monitorRun) listen(ctx context.Context, o *redis.Options, n *MonitorNode) error {
	cfg, err := redisopt.Config(ctx, o)
	if err != nil {
		return err
	}
	c, err := resp.Dial(ctx, cfg, o.Addr, resp.Session{Timeout: 10 * time.Second})
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.Simple(ctx, "MONITOR"); err != nil {
		return fmt.Errorf("MONITOR on %s: %w", o.Addr, err)
	}
	start := time.Now()
	deadline := start.Add(m.opts.Duration)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if c.BeginUntil(ctx, deadline) != nil {
		return nil // the sample was stopped
	}
	var args []any
	for {
		ln, err := c.ReadLine(m.opts.MaxLineBytes)
		n.Bytes += int64(ln.Size)
		if m.bytes.Add(int64(ln.Size)) > m.opts.MaxBytes {
			m.cap(fmt.Sprintf("byte cap %d", m.opts.MaxBytes), start)
			return nil
		}
		var ne net.Error
		switch {
		case errors.As(err, &ne) && ne.Timeout():
			return nil // the duration is over (or the sample was stopped)
		case errors.Is(err, io.EOF):
			n.NotObserved = notObserved(time.Since(start), deadline.Sub(start))
			return fmt.Errorf("%s closed the MONITOR connection", o.Addr)
		case err != nil:
			n.NotObserved = notObserved(time.Since(start), deadline.Sub(start))
			return err
		case ln.Cut:
			n.LongLines++
			continue
		}
		n.Lines++
		if m.lines.Add(1) > m.opts.MaxLines {
			m.cap(fmt.Sprintf("line cap %d", m.opts.MaxLines), start)
			return nil
		}
		l, perr := monitor.Parse(string(ln.Text))
		if perr != nil {
			n.Unparsed++
			continue
		}
		args = args[:0]
		for _, a := range l.Args {
			args = append(args, a)
		}
		m.observe(l.DB, args)
	}
}

// notObserved is the span of a sample lost at `at` of `whole`.
func notObserved(at, whole time.Duration) string {
	return fmt.Sprintf("from %s to %s", at.Round(100*time.Millisecond), whole.Round(100*time.Millisecond))
}

// cap stops every node's sample: a cap is reached.
func (m *monitorRun) cap(why string, start time.Time) {
	if m.truncated.CompareAndSwap(nil, why) {
		m.elapsed.Store(int64(time.Since(start)))
		m.stop()
	}
}

// observe counts the keys of one command run in database db.
func (m *monitorRun) observe(db int, args []any) {
	c, ok := rediscmd.LookupArgs(args)
	if !ok || c.Class == rediscmd.ClassNone {
		return
	}
	_ = c.Keys(args, func(_ int, key string, _ rediscmd.KeyFlags) bool {
		m.sk.Observe(dbKeyName(db, key))
		return true
	})
}

// dbKeyName is the sketch's name of a key of a database: the database's
// digits, a NUL, the key (a key may hold NULs, the digits never do).
func dbKeyName(db int, key string) string { return strconv.Itoa(db) + "\x00" + key }

// splitDBKey undoes dbKeyName.
func splitDBKey(s string) (int, string) {
	i := strings.IndexByte(s, 0)
	db, _ := strconv.Atoi(s[:i])
	return db, s[i+1:]
}

// load is a node's cumulative commands and CPU seconds at a time.
type load struct {
	at   time.Time
	cmds int64
	cpu  float64
}

func readLoad(ctx context.Context, c *redis.Client) (load, error) {
	s, err := c.Info(ctx, "stats", "cpu").Result()
	if err != nil {
		return load{}, err
	}
	l := load{at: time.Now()}
	for _, line := range strings.Split(s, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		switch k {
		case "total_commands_processed":
			l.cmds, _ = strconv.ParseInt(v, 10, 64)
		case "used_cpu_sys", "used_cpu_user":
			f, _ := strconv.ParseFloat(v, 64)
			l.cpu += f
		}
	}
	return l, nil
}

// since returns commands per second and CPU fraction between p and l.
func (l load) since(p load) (float64, float64) {
	secs := l.at.Sub(p.at).Seconds()
	if secs <= 0 {
		return -1, -1
	}
	return float64(l.cmds-p.cmds) / secs, (l.cpu - p.cpu) / secs
}

// fmtRate writes a rate with thousands separators and no decimals above 10.
func fmtRate(r float64) string {
	if r < 10 {
		return strconv.FormatFloat(r, 'f', 1, 64)
	}
	s := strconv.FormatInt(int64(r+0.5), 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
