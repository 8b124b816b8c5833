package main

import (
	"context"

	"github.com/keyguard/keyguard/internal/audit/live"
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

Without a registry (no --registry, no keyguard.yaml here) the audit groups
keys by the families it infers from their names, and ends with the command
that writes a registry from its report (docs/audit.md).
The audit only reads; docs/audit-acl.md has the ACL user it needs.
Exit 2 (after writing the report) when the audit stopped early: a node
lost, Ctrl-C or --timeout; the report then has complete: false and a
cursor per node for --resume.`)
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
	return live.Audit(ctx, e.cli(), live.AuditOptions{Registry: reg, NoRegistry: noReg, Target: target, Walk: walk.options(),
		Timeout: *timeout, Resume: *resume, Progress: prog, ReportOutput: cli.ReportOutput{Format: fs.Opts.Format, Out: fs.Opts.Out, Keys: keys.path, KeysFormat: keys.format,
			View: *view, TopSet: fs.IsSet("top"), Threshold: fs.Threshold()}})
}

// auditConn is the audit's connection settings from a parsed --redis URL.
func auditConn(o *redis.Options) live.Conn {
	return live.Conn{Addr: o.Addr, Username: o.Username, Password: o.Password, DB: o.DB, TLS: o.TLSConfig, DialTimeout: o.DialTimeout, Dialer: o.Dialer}
}
