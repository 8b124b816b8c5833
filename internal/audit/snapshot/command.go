package snapshot

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/keyguard/keyguard/internal/audit/inventory"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/cli"
	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/registry"
)

// AuditOptions are what keyguard rdb runs with.
type AuditOptions struct {
	Registry   *registry.Registry
	NoRegistry bool     // none given or found: families are inferred from names
	Files      []string // RDB files, "-" for stdin; several are one Cluster
	DB         int      // -1: every database
	Match      string
	Inventory  inventory.Options
	Progress   *cli.Progress // nil: none shown
	cli.ReportOutput

	// Open, when set, opens the inputs instead of Files: the snapshots of
	// a live server (keyguard audit --snapshot). Finish then completes
	// the result before it is written (its source, its coverage), and
	// Command is the command line the next step's hint repeats.
	Open    func(ctx context.Context) ([]*Input, error)
	Finish  func(ctx context.Context, res *Result)
	Command string
}

// Audit decodes the files into one report and writes it (a partial one,
// saying so, when a file is truncated or corrupt). It returns
// cli.ErrFindings when a finding reaches the threshold.
func Audit(ctx context.Context, e *cli.Env, o AuditOptions) error {
	reg, noReg, view := o.Registry, o.NoRegistry, o.View
	out, err := cli.OpenOutput(e, "--out", o.Out)
	if err != nil {
		return err
	}
	kout, err := cli.OpenKeys(e, o.Keys, o.KeysFormat)
	if err != nil {
		out.Close(false)
		return err
	}
	var ins []*Input
	if o.Open != nil {
		// Open's Waiting says why, when the server is slow to begin.
		o.Progress.Show("waiting for the server's snapshot", false)
		ins, err = o.Open(ctx)
	} else {
		ins, err = Open(o.Files, e.Stdin)
	}
	defer Close(ins)
	if err != nil {
		o.Progress.Clear()
		out.Close(false)
		kout.Close(false)
		return err
	}
	opts := Options{
		Inventory: o.Inventory,
		DB:        o.DB,
		Match:     o.Match,
		TuneGC:    e.Getenv("GOGC") == "",
	}
	if o.Open != nil {
		// Every stream at once: no server's snapshot waits for a decoder.
		opts.Procs = max(runtime.GOMAXPROCS(0), len(ins))
	}
	opts.Inventory.NoRegistry = noReg
	opts.Inventory.Keys = kout.Export()
	if prog := o.Progress; prog != nil {
		opts.Progress = func(p Progress) {
			prog.Show(rdbProgressLine(p.Read, p.Total, p.Elapsed, p.FilesDone, p.Files, o.Open != nil), p.Final)
		}
	}
	res, err := Run(ctx, reg, ins, opts)
	o.Progress.Clear()
	if err != nil {
		out.Close(false)
		kout.Close(false)
		return err
	}
	if o.Finish != nil {
		o.Finish(ctx, res)
	}
	if err := kout.Close(true); err != nil {
		out.Close(false)
		return err
	}
	rep := res.Report
	view.Sep = reg.Separator
	if o.TopSet {
		view.Top = o.Inventory.TopKeys
	}
	command := o.Command
	if command == "" {
		command = "rdb " + quoteAll(o.Files)
	}
	if noReg {
		view.Next = cli.InitNext(o.Format, o.Out, command)
	}
	if err := cli.WriteReport(out, o.Format, rep, view); err != nil {
		return err
	}
	if noReg && o.Format != "text" {
		name, _, _ := strings.Cut(command, " ")
		fmt.Fprintf(e.Stderr, "keyguard %s: no registry (none given, no keyguard.yaml here): key families inferred from the names\nnext: %s\n", name, view.Next)
	}
	if !res.Complete {
		var gaps []report.Gap
		if rep.Coverage != nil {
			gaps = rep.Coverage.NotCovered
		}
		return &rdbIncompleteError{stops: res.Stopped, gaps: gaps, out: o.Out}
	}
	return cli.ReportVerdict(rep.Summary.BySeverity, o.Threshold)
}

// rdbIncompleteError is a run where some file stopped early (truncated,
// corrupt, interrupted); the partial report has been written. Unlike the
// live audit's incompleteError there is nothing to resume: the fix is a
// good copy of the file.
type rdbIncompleteError struct {
	stops    []report.NodeStop
	gaps     []report.Gap // what else was not covered (a Cluster's slots that moved)
	out      string
	keysOnly bool // a key diff's export: there is no partial result
}

func (e *rdbIncompleteError) Error() string {
	var parts []string
	for _, s := range e.stops {
		parts = append(parts, fmt.Sprintf("%s stopped at byte %s after %s: %s", DisplayName(s.Node), s.Cursor, human.Plural(s.Keys, "key"), s.Reason))
	}
	if len(e.stops) == 0 {
		for _, g := range e.gaps {
			if g.Slots != "" {
				parts = append(parts, "slots "+g.Slots+": "+g.Reason)
			} else {
				parts = append(parts, g.Reason)
			}
		}
	}
	msg := "incomplete: " + strings.Join(parts, "; ")
	if e.keysOnly {
		return msg + "; a key diff needs the whole file (the keys past that point would show as removed)"
	}
	switch {
	case len(e.stops) == 0 && e.out != "":
		msg += "; report of the rest in " + e.out
	case len(e.stops) == 0:
		msg += "; the report covers the rest"
	case e.out != "":
		msg += "; report of the keys before that in " + e.out
	default:
		msg += "; the report covers the keys before that"
	}
	return msg
}

// rdbProgressLine is "rdb [####....]  42% 70/167 MB  350 MB/s  ETA 1s
// files 1/3";
// without a total (a pipe) just what was read and the rate. Of a live
// server's snapshots (nodes) it says "snapshot" and "nodes".
func rdbProgressLine(read, total int64, elapsed time.Duration, filesDone, files int, nodes bool) string {
	const mb = 1 << 20
	what, parts := "rdb", "files"
	if nodes {
		what, parts = "snapshot", "nodes"
	}
	line := fmt.Sprintf("%s: %.0f MB", what, float64(read)/mb)
	if total > 0 {
		line = fmt.Sprintf("%s %s %.0f/%.0f MB", what, cli.Meter(float64(read)/float64(total)), float64(read)/mb, float64(total)/mb)
	}
	if elapsed > 0 {
		rate := float64(read) / elapsed.Seconds()
		line += fmt.Sprintf("  %.0f MB/s", rate/mb)
		if total > 0 && rate > 0 {
			line += "  ETA " + time.Duration(float64(max(total-read, 0))/rate*float64(time.Second)).Round(time.Second).String()
		}
	}
	if files > 1 {
		line += fmt.Sprintf("  %s %d/%d", parts, filesDone, files)
	}
	return line
}

// quoteAll is files on a command line.
func quoteAll(files []string) string {
	q := make([]string, len(files))
	for i, f := range files {
		q[i] = cli.ShellQuote(f)
	}
	return strings.Join(q, " ")
}
