package dashboard

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/keyguard/keyguard/internal/audit/live"
	"github.com/keyguard/keyguard/internal/cli"
	"github.com/keyguard/keyguard/internal/redisconn"
	"github.com/keyguard/keyguard/registry"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// ServeOptions are what keyguard serve runs with.
type ServeOptions struct {
	Config Config            // Auditor, Writers, HotKeys, metrics and Logger are filled in by Serve
	Conn   *redisconn.Target // for the SDK's records
	Target live.Target       // what each audit walks
	Walk   live.Options
	// Snapshot, when set, makes each audit read the nodes' snapshots
	// instead of walking Target (Walk is then unused).
	Snapshot      *SnapshotOptions
	Listen        string // host:port
	WritersWindow time.Duration
	HotKeysWindow time.Duration
}

// Serve audits on a schedule and serves the dashboard, the report as JSON
// and /metrics until ctx ends.
func Serve(ctx context.Context, e *cli.Env, o ServeOptions) error {
	client := o.Conn.FollowingClient() // for the SDK's records; not checked now: the server starts even while Redis is down
	defer client.Close()

	pr := prometheus.NewRegistry()
	pr.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	c, reg := o.Config, o.Config.Registry
	c.Auditor = NewAuditor(reg, o.Target, o.Walk)
	if o.Snapshot != nil {
		c.Auditor = NewSnapshotAuditor(reg, *o.Snapshot)
	}
	if o.Conn.Sentinel != nil {
		// Each audit asks the Sentinels where the master is now.
		c.Auditor = &followMaster{conn: o.Conn, target: o.Target, reg: reg, walk: o.Walk, snapshot: o.Snapshot}
	}
	c.Writers = NewWriterSource(client, reg, o.WritersWindow)
	c.HotKeys = NewHotKeySource(client, reg, o.HotKeysWindow, 100)
	c.Registerer, c.Gatherer = pr, pr
	c.Logger = slog.New(slog.NewTextHandler(e.Stderr, nil))
	srv, err := New(c)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return fmt.Errorf("--listen %s: %w (is another server on that port?)", o.Listen, err)
	}
	fmt.Fprintf(e.Stderr, "keyguard serve: http://%s/ auditing %s every %s\n", ln.Addr(), o.Conn.Display, registry.FormatTTL(c.Interval))
	return srv.Run(ctx, ln)
}
