package live

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/keyguard/keyguard/internal/audit/inventory"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/cli"
	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/internal/redisconn"
	"github.com/keyguard/keyguard/registry"
)

// AuditOptions are what keyguard audit runs with.
type AuditOptions struct {
	Registry   *registry.Registry
	NoRegistry bool // none given or found: families are inferred from names
	Target     Target
	Walk       Options
	Timeout    time.Duration // 0: none; a partial report when it runs out
	Resume     string        // a partial JSON report to continue from
	Progress   *cli.Progress // nil: none shown
	cli.ReportOutput
}

// Audit walks the target, writes the report (a partial one, saying so,
// when the walk stopped early) and returns cli.ErrFindings when a finding
// reaches the threshold, or an error that says why the audit stopped.
func Audit(ctx context.Context, e *cli.Env, o AuditOptions) error {
	reg, target, opts, view := o.Registry, o.Target, o.Walk, o.View
	opts.Inventory.NoRegistry = o.NoRegistry
	if o.Resume != "" {
		prev, err := readResume(o.Resume, target.Display)
		if err != nil {
			return err
		}
		// The partial report's groups are of the registry it was made
		// with: a run without one carries families, a run with one
		// templates, and neither reads the other's.
		switch {
		case prev.WithoutRegistry() && !o.NoRegistry:
			return cli.Usagef("--resume %s: that audit ran without a registry; resume it without one (no --registry, no KEYGUARD_REGISTRY, no keyguard.yaml here)", o.Resume)
		case !prev.WithoutRegistry() && o.NoRegistry:
			return cli.Usagef("--resume %s: that audit ran with a registry (%s); resume it with the same --registry", o.Resume, cmp.Or(prev.Registry, "its file not named"))
		}
		if err := inventory.SameRegistry(reg, prev); err != nil {
			return cli.Usagef("--resume %s: that audit was %v", o.Resume, err)
		}
		opts.Resume = prev
	}
	out, err := cli.OpenOutput(e, "--out", o.Out)
	if err != nil {
		return err
	}
	kout, err := cli.OpenKeys(e, o.Keys, o.KeysFormat)
	if err != nil {
		out.Close(false)
		return err
	}
	opts.Inventory.Keys = kout.Export()
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	if prog := o.Progress; prog != nil {
		opts.Progress = func(p Progress) { prog.Show(auditProgressLine(p), p.Final) }
		opts.Waiting = func(why string) { prog.Show(why, false) }
	}
	res, err := Run(ctx, reg, target, opts)
	o.Progress.Clear()
	if err != nil {
		out.Close(false)
		kout.Close(false)
		if o.Timeout > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			// Not the network's fault: the audit's own time ran out
			// before it could start.
			return fmt.Errorf("--timeout %s ran out before the audit of %s could start: --timeout bounds the whole audit, connecting included; give it minutes, not %s", registry.FormatDuration(o.Timeout), target.Display, registry.FormatDuration(o.Timeout))
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
		fmt.Fprintf(e.Stderr, "keyguard audit: %s is a Cluster node: %s\n", target.Conn.Addr, c.Summary())
	}
	if o.Resume != "" {
		rep.ResumedFrom = o.Resume
	}
	written := o.Out
	if !res.Complete {
		written = out.KeepExisting()
	}
	view.Sep = reg.Separator
	if o.TopSet {
		view.Top = opts.Inventory.TopKeys
	}
	if o.NoRegistry && res.Complete {
		// A partial audit's next step is --resume, which its error says.
		view.Next = cli.InitNext(o.Format, written, "audit --redis URL")
	}
	if err := cli.WriteReport(out, o.Format, rep, view); err != nil {
		return err
	}
	if o.NoRegistry && o.Format != "text" {
		fmt.Fprintf(e.Stderr, "keyguard audit: no registry (none given, no keyguard.yaml here): key families inferred from the names\n")
		if view.Next != "" {
			fmt.Fprintf(e.Stderr, "next: %s\n", view.Next)
		}
	}
	if !res.Complete {
		return &incompleteError{stops: res.Stopped, gaps: rep.Coverage, out: written, kept: written != o.Out, json: o.Format == "json"}
	}
	return cli.ReportVerdict(rep.Summary.BySeverity, o.Threshold)
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
	resumable := len(e.stops) > 0
	if len(e.stops) == 0 && e.gaps != nil {
		for _, g := range e.gaps.NotCovered {
			parts = append(parts, "not covered: "+human.OneLine(g.String()))
			// Keys the ACL user may not read stay so on a resumed run.
			resumable = resumable || !strings.Contains(g.Reason, unreadableMark)
		}
	}
	msg := "audit incomplete: " + strings.Join(parts, "; ")
	if strings.Contains(msg, "CLUSTERDOWN") {
		// The masters up refuse every key while a master's slots are
		// not served (cluster-require-full-coverage): their snapshots
		// are still had.
		msg += "; the Cluster refuses every key while a master's slots are not served (CLUSTERDOWN): --snapshot reads the keys of the masters up from their snapshots meanwhile"
	}
	if e.kept {
		msg += "; the existing report at --out was kept, the partial one written beside it"
	}
	switch {
	case !resumable && e.out != "":
		msg += fmt.Sprintf("; partial report in %s", e.out)
	case !resumable:
		msg += "; partial report written"
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
	if ce := ConnectFailure(err, tlsUsed); ce != err {
		return ce
	}
	return errors.New(human.OneLine(err.Error()))
}

// ConnectFailure turns a *ConnectError (a node that could not be reached,
// or refused the credentials) into one line that says what to check
// (redisconn.Error); other errors are returned as they are.
func ConnectFailure(err error, tlsUsed bool) error {
	var ce *ConnectError
	if !errors.As(err, &ce) {
		return err
	}
	if ce.Auth {
		return redisconn.AuthError(ce.Addr, ce.Err.Error(), "--redis")
	}
	return redisconn.Error(ce.Addr, tlsUsed, ce.Err, "--redis")
}

// readResume reads the partial report to resume from.
func readResume(path, target string) (*report.Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, cli.Usagef("--resume: %v", err)
	}
	defer f.Close()
	warmed := cli.WarmReports(path)
	rep, err := report.ReadReport(bufio.NewReaderSize(f, 1<<16))
	warmed()
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
func auditProgressLine(p Progress) string {
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
