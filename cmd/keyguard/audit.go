package main

import (
	"context"
	"time"

	"github.com/keyguard/keyguard/internal/audit/live"
	"github.com/keyguard/keyguard/internal/audit/replsync"
	"github.com/keyguard/keyguard/internal/audit/snapshot"
	"github.com/keyguard/keyguard/internal/cli"
	"github.com/redis/go-redis/v9"
)

func runAudit(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "audit", "audit --redis URL [--cluster] [--format text|json|csv|html] [--out FILE] [flags]",
		`  keyguard audit --redis redis://127.0.0.1:6379
  keyguard audit --redis redis://audit:PASSWORD@10.0.0.1:6379,10.0.0.2:6379 --cluster --replicas --rate 20000 --format html --out audit.html
  keyguard audit --redis redis://127.0.0.1:6379 --sample 100000 --format json --out sample.json
  keyguard audit --redis redis://127.0.0.1:6379 --timeout 10m --format json --out a.json   # partial on timeout
  keyguard audit --redis redis://127.0.0.1:6379 --resume a.json --format json --out rest.json

  keyguard audit --redis redis://127.0.0.1:6379 --keys keys.csv   # every key, one row each
  keyguard audit --redis redis://admin:PASSWORD@127.0.0.1:6379 --snapshot   # from the server's snapshot, no command per key

Without a registry (no --registry, no keyguard.yaml here) the audit groups
keys by the families it infers from their names, and ends with the command
that writes a registry from its report (docs/audit.md).
The audit only reads; docs/audit-acl.md has the ACL user it needs.
Exit 2 (after writing the report) when the audit stopped early: a node
lost, Ctrl-C or --timeout; the report then has complete: false and a
cursor per node for --resume.
With --snapshot the server (each master, or with --replicas a replica of
each) sends the snapshot a new replica gets (SYNC): it forks once and no
command runs per key; the report is the one 'keyguard rdb' makes of that
snapshot. It needs an ACL user allowed REPLCONF and SYNC, and the
server's fork (docs/audit.md).`)
	fs.RegistryFlag(e.cli())
	redisFlags(fs, e)
	fs.OutputFlags(reportFormats...)
	fs.FailOnFlag()
	walk := newWalkFlags(fs)
	timeout := fs.Duration("timeout", 0, "stop after this `duration` and write a partial report (0 = none)")
	resume := fs.String("resume", "", "continue from a partial JSON report `FILE` (its per-node cursors)")
	progressMode := fs.ProgressFlag()
	view := newReportFlags(fs)
	keys := newKeysFlags(fs)
	pos, err := fs.Parse(args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return cli.Usagef("audit takes no arguments; got %q", pos[0])
	}
	if err := walk.check(); err != nil {
		return err
	}
	if err := keys.check(); err != nil {
		return err
	}
	if *timeout < 0 || view.Depth < 0 {
		return cli.Usagef("--timeout and --depth cannot be negative")
	}
	prog, err := cli.NewProgress(e.cli(), *progressMode)
	if err != nil {
		return err
	}
	reg, noReg, err := fs.LoadRegistryOrNone(e.cli())
	if err != nil {
		return err
	}
	tgt, err := targetFlag(fs)
	if err != nil {
		return err
	}
	target, err := walk.target(tgt)
	if err != nil {
		return err
	}
	out := cli.ReportOutput{Format: fs.Opts.Format, Out: fs.Opts.Out, Keys: keys.path, KeysFormat: keys.format,
		View: *view, TopSet: fs.IsSet("top"), Threshold: fs.Threshold()}
	if walk.snapshot {
		return auditSnapshot(ctx, e, fs, walk, target, *timeout, snapshot.AuditOptions{Registry: reg, NoRegistry: noReg, Progress: prog, ReportOutput: out})
	}
	return live.Audit(ctx, e.cli(), live.AuditOptions{Registry: reg, NoRegistry: noReg, Target: target, Walk: walk.options(),
		Timeout: *timeout, Resume: *resume, Progress: prog, ReportOutput: out})
}

// auditConn is the audit's connection settings from a parsed --redis URL.
func auditConn(o *redis.Options) live.Conn {
	return live.Conn{Network: o.Network, Addr: o.Addr, Username: o.Username, Password: o.Password, DB: o.DB, TLS: o.TLSConfig, DialTimeout: o.DialTimeout, Dialer: o.Dialer}
}

// auditSnapshot is audit --snapshot: the server's snapshot audited as a
// file (replsync). The walk's flags were refused by walk.check.
func auditSnapshot(ctx context.Context, e *env, fs *cli.FlagSet, walk *walkFlags, target live.Target, timeout time.Duration, o snapshot.AuditOptions) error {
	if fs.IsSet("resume") {
		return cli.Usagef("--resume walks the keys; --snapshot reads the server's snapshot instead: drop one of them")
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	ro, so := walk.snapshotOptions(target)
	o.DB, o.Match, o.Inventory = so.DB, so.Match, so.Inventory
	ro.Waiting = func(why string) { o.Progress.Show(why, false) }
	f := replsync.New(ro)
	o.Open, o.Finish = f.Open, f.Finish
	o.Command = "audit --redis URL --snapshot"
	if target.Cluster {
		o.Command = "audit --redis URL --cluster --snapshot"
	}
	return snapshot.Audit(ctx, e.cli(), o)
}
