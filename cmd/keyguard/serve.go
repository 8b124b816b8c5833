package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/keyguard/keyguard/hotkey"
	"github.com/keyguard/keyguard/internal/cli"
	"github.com/keyguard/keyguard/internal/dashboard"
	"github.com/keyguard/keyguard/internal/redisconn"
	"github.com/keyguard/keyguard/redishook"
)

// runServe audits on a schedule and serves the dashboard, the report as
// JSON and /metrics until interrupted (dashboard.Serve). It is long for its
// flags alone: the serving's and those of the audit it schedules.
func runServe(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "serve", "serve --redis URL [--cluster] [--registry FILE] [--listen 127.0.0.1:8080] [--interval 10m] [flags]",
		`  keyguard serve --redis redis://127.0.0.1:6379
  keyguard serve --redis redis://audit:PASSWORD@10.0.0.1:6379,10.0.0.2:6379 --cluster --interval 30m --rate 20000 --history-dir /var/lib/keyguard
  KEYGUARD_SERVE_TOKEN=$(cat token) keyguard serve --redis "$KEYGUARD_REDIS" --listen 0.0.0.0:8080

Pages at http://LISTEN/, the last report at /api/report.json, Prometheus
metrics at /metrics, health at /healthz. Audits run on their own schedule,
never on a scrape. docs/serve.md has the metrics and alert rules.`)
	fs.RegistryFlag(e.cli())
	redisFlags(fs, e)
	var (
		listen     = fs.String("listen", "127.0.0.1:8080", "serve on `host:port`; one other machines reach needs --auth-token, --basic-auth or --insecure-public")
		interval   = fs.Duration("interval", dashboard.DefaultInterval, "time between two audit starts")
		timeout    = fs.Duration("audit-timeout", 0, "stop an audit after this `duration`, keeping its partial report (0: --interval)")
		history    = fs.Int("history", dashboard.DefaultHistory, "audits kept for the trends (and in --history-dir)")
		historyDir = fs.String("history-dir", "", "save each audit's JSON report in `dir`, so that a restart keeps the history")
		token      = fs.String("auth-token", e.getenv("KEYGUARD_SERVE_TOKEN"), "require this bearer `token` (env KEYGUARD_SERVE_TOKEN); in a browser, any user name and the token as password")
		basic      = fs.String("basic-auth", e.getenv("KEYGUARD_SERVE_BASIC_AUTH"), "require basic auth `user:password` (env KEYGUARD_SERVE_BASIC_AUTH)")
		insecure   = fs.Bool("insecure-public", false, "serve a --listen address other machines reach without authentication")
		allowed    = fs.String("allowed-host", "", "without authentication, also answer to these Host `names` (comma-separated; .example.com for every name under it); localhost and IP addresses always")
		writersWin = fs.Duration("writers-window", redishook.DefaultWindow, "SDK writer records younger than this count")
		hotWin     = fs.Duration("hotkeys-window", hotkey.DefaultReportTTL, "SDK hot-key reports younger than this count")
		docsURL    string
	)
	fs.DocsURLFlag(&docsURL)
	walk := newWalkFlags(fs)
	pos, err := fs.Parse(args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return cli.Usagef("serve takes no arguments; got %q", pos[0])
	}
	switch {
	case *interval <= 0:
		return cli.Usagef("--interval must be positive, such as 10m")
	case *history <= 0:
		return cli.Usagef("--history must be positive")
	case *timeout < 0, *writersWin <= 0, *hotWin <= 0:
		return cli.Usagef("--audit-timeout cannot be negative; the windows must be positive")
	}
	if err := walk.check(); err != nil {
		return err
	}
	access := dashboard.Access{Token: *token}
	for _, h := range strings.Split(*allowed, ",") {
		if h = strings.TrimSpace(h); h != "" {
			access.AllowedHosts = append(access.AllowedHosts, h)
		}
	}
	if *basic != "" {
		if access.User, access.Password, err = dashboard.ParseBasicAuth(*basic); err != nil {
			return cli.Usagef("--basic-auth: %v", err)
		}
	}
	if err := dashboard.CheckListen(*listen, access, *insecure); err != nil {
		return cli.Usagef("%v", err)
	}
	// As the audit: without a registry (none given or found), the keys
	// are grouped by the families inferred from their names.
	reg, noReg, err := fs.LoadRegistryOrNone(e.cli())
	if err != nil {
		return err
	}
	tgt, err := targetFlag(fs)
	if down := (*redisconn.SentinelsDownError)(nil); errors.As(err, &down) {
		// As with a server that is down: serve starts, and each audit
		// asks the Sentinels again.
		fmt.Fprintf(e.stderr, "keyguard serve: warning: %v; serving all the same: each audit asks the Sentinels again\n", err)
		tgt, err = down.Target, nil
	}
	if err != nil {
		return err
	}
	target, err := walk.target(tgt)
	if err != nil {
		return err
	}
	opts := walk.options()
	opts.Inventory.NoRegistry = noReg
	var snap *dashboard.SnapshotOptions
	if walk.snapshot {
		nodes, read := walk.snapshotOptions(target)
		read.Inventory.NoRegistry = noReg
		nodes.Scheduled = true
		snap = &dashboard.SnapshotOptions{Nodes: nodes, Read: read}
	}
	return dashboard.Serve(ctx, e.cli(), dashboard.ServeOptions{Conn: tgt, Target: target, Walk: opts, Snapshot: snap, Listen: *listen,
		WritersWindow: *writersWin, HotKeysWindow: *hotWin, Config: dashboard.Config{Registry: reg, Interval: *interval, Timeout: *timeout,
			History: *history, HistoryDir: *historyDir, Access: access, DocsBase: docsURL}})
}
