package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/keyguard/keyguard/internal/audit/inventory"
	"github.com/keyguard/keyguard/internal/audit/live"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/cli"
	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/internal/redisconn"
	"github.com/keyguard/keyguard/registry"
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
	opts := walk.options()
	opts.Inventory.NoRegistry = noReg
	if *resume != "" {
		prev, err := readResume(*resume, tgt.Display)
		if err != nil {
			return err
		}
		opts.Resume = prev
	}
	out, err := fs.OpenOutput(e.cli())
	if err != nil {
		return err
	}
	kout, err := cli.OpenKeys(e.cli(), keys.path, keys.format)
	if err != nil {
		out.Close(false)
		return err
	}
	opts.Inventory.Keys = kout.Export()
	if *timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *timeout)
		defer cancel()
	}
	if prog != nil {
		opts.Progress = func(p live.Progress) { prog.Show(auditProgressLine(p), p.Final) }
	}
	res, err := live.Run(ctx, reg, target, opts)
	prog.Clear()
	if err != nil {
		out.Close(false)
		kout.Close(false)
		if *timeout > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			// Not the network's fault: the audit's own time ran out
			// before it could start.
			return fmt.Errorf("--timeout %s ran out before the audit of %s could start: --timeout bounds the whole audit, connecting included; give it minutes, not %s", registry.FormatDuration(*timeout), tgt.Display, registry.FormatDuration(*timeout))
		}
		return auditError(err, target.Conn.TLS != nil)
	}
	if err := kout.Close(true); err != nil {
		out.Close(false)
		return err
	}
	// The walk's buffers are garbage now: collect them before writing, so
	// the heap goal starts from the report alone (lower peak RSS).
	runtime.GC()

	rep := res.Report
	if c := rep.Coverage; c != nil && c.Cluster != nil && c.Cluster.Walked < c.Cluster.Masters && !target.Cluster {
		fmt.Fprintf(e.stderr, "keyguard audit: %s is a Cluster node: %s\n", target.Conn.Addr, c.Summary())
	}
	if *resume != "" {
		rep.ResumedFrom = *resume
	}
	written := fs.Opts.Out
	if !res.Complete {
		written = out.KeepExisting()
	}
	view.Sep = reg.Separator
	if fs.IsSet("top") {
		view.Top = walk.top
	}
	if noReg {
		view.Next = cli.InitNext(fs.Opts.Format, written, "audit --redis URL")
	}
	if err := cli.WriteReport(out, fs.Opts.Format, rep, *view); err != nil {
		return err
	}
	if noReg && fs.Opts.Format != "text" {
		fmt.Fprintf(e.stderr, "keyguard audit: no registry (none given, no keyguard.yaml here): key families inferred from the names\nnext: %s\n", view.Next)
	}
	if !res.Complete {
		return &incompleteError{stops: res.Stopped, gaps: rep.Coverage, out: written, kept: written != fs.Opts.Out, json: fs.Opts.Format == "json"}
	}
	return cli.ReportVerdict(rep.Summary.BySeverity, fs.Threshold())
}

// incompleteError is an audit that stopped early; its partial report has
// been written. main maps it to exit 2 like any other error.
type incompleteError struct {
	stops []report.NodeStop
	gaps  *report.Coverage // what was not covered, when the stops do not say it all
	out   string           // where the partial report went
	kept  bool             // beside an existing --out file, which was left as it was
	json  bool
}

func (e *incompleteError) Error() string {
	var parts []string
	for _, s := range e.stops {
		where := "at cursor " + s.Cursor
		if s.Slots != "" {
			where = "with slots " + s.Slots + " not counted"
		}
		db := ""
		if s.DB != 0 {
			db = fmt.Sprintf(" db %d", s.DB)
		}
		node := s.Node
		if node == "" {
			node = "the Cluster"
		}
		parts = append(parts, fmt.Sprintf("%s%s stopped after %s %s: %s", node, db, human.Plural(s.Keys, "key"), where, human.OneLine(s.Reason)))
	}
	if len(e.stops) == 0 && e.gaps != nil {
		for _, g := range e.gaps.NotCovered {
			parts = append(parts, "not covered: "+human.OneLine(g.String()))
		}
	}
	msg := "audit incomplete: " + strings.Join(parts, "; ")
	if e.kept {
		msg += "; the existing report at --out was kept, the partial one written beside it"
	}
	switch {
	case e.out != "" && e.json:
		msg += fmt.Sprintf("; partial report in %s; continue with --resume %s", e.out, e.out)
	case e.out != "":
		msg += fmt.Sprintf("; partial report in %s (write it with --format json to resume from it)", e.out)
	default:
		msg += "; partial report written (save it with --format json --out FILE to resume from it)"
	}
	return msg
}

// auditError gives a failure to start one line that says what to do.
func auditError(err error, tlsUsed bool) error {
	var ce *live.ConnectError
	if errors.As(err, &ce) {
		if ce.Auth {
			return fmt.Errorf("%s refused the credentials (%s): check the user and password in --redis (redis://user:password@host:port)", ce.Addr, human.OneLine(ce.Err.Error()))
		}
		return redisconn.Error(ce.Addr, tlsUsed, ce.Err, "--redis")
	}
	return errors.New(human.OneLine(err.Error()))
}

// readResume reads the partial report to resume from.
func readResume(path, target string) (*report.Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, cli.Usagef("--resume: %v", err)
	}
	defer f.Close()
	rep, err := report.ReadReport(bufio.NewReaderSize(f, 1<<16))
	if err != nil {
		return nil, cli.Usagef("--resume %s: %v", path, err)
	}
	switch {
	case rep.Source.Kind != "redis" && rep.Source.Kind != "cluster":
		kind := rep.Source.Kind
		if kind == "rdb" {
			kind = "RDB"
		}
		return nil, cli.Usagef("--resume %s: %s %s report, not a live audit", path, human.Article(kind), kind)
	case len(rep.Stopped) == 0:
		return nil, cli.Usagef("--resume %s: the report is complete; there is nothing to resume", path)
	case rep.Source.Target != target:
		return nil, cli.Usagef("--resume %s: the report audited %s, not %s", path, rep.Source.Target, target)
	case rep.State == nil:
		return nil, cli.Usagef("--resume %s: %v", path, inventory.ErrNoState)
	}
	return rep, nil
}

// auditProgressLine is "audit [######....]  25% 250,000/1,000,000 keys
// 50,000 keys/s  ETA 15s  nodes 1/3".
func auditProgressLine(p live.Progress) string {
	line := fmt.Sprintf("audit: %s keys", human.Count(p.Scanned))
	if p.Total > 0 {
		line = fmt.Sprintf("audit %s %s/%s keys", cli.Meter(float64(p.Scanned)/float64(p.Total)), human.Count(p.Scanned), human.Count(p.Total))
	}
	line += fmt.Sprintf("  %s keys/s", human.Count(int64(p.Rate())))
	if eta, ok := p.ETA(); ok {
		line += "  ETA " + eta.Round(time.Second).String()
	}
	if p.Nodes > 1 {
		line += fmt.Sprintf("  nodes %d/%d", p.NodesDone, p.Nodes)
	}
	return line
}

// auditConn is the audit's connection settings from a parsed --redis URL.
func auditConn(o *redis.Options) live.Conn {
	return live.Conn{Addr: o.Addr, Username: o.Username, Password: o.Password, DB: o.DB, TLS: o.TLSConfig, DialTimeout: o.DialTimeout, Dialer: o.Dialer}
}
