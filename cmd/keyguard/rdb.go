package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/audit/snapshot"
	"github.com/keyguard/keyguard/internal/cli"
	"github.com/keyguard/keyguard/internal/human"
)

func runRDB(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "rdb", "rdb [--registry FILE] [--format text|json|csv|html] [--out FILE] [--fail-on SEV] [--match GLOB] [--db N] [--max-findings N] [--top N] FILE...",
		`  keyguard rdb dump.rdb
  keyguard rdb --format html --out keys.html dump.rdb
  keyguard rdb --format json --out cluster.json node1.rdb node2.rdb node3.rdb   # one Cluster, one report
  keyguard rdb --match 'order:*' --db 0 dump.rdb
  zcat dump.rdb.gz | keyguard rdb -
  keyguard rdb --keys keys.jsonl dump.rdb   # every key, one row each

The audit of a snapshot: the same report as 'keyguard audit', from RDB
files (versions 1-12: Redis 2.x-7.4, Valkey 7-8) read anywhere, away from
production; without a registry (none given, no keyguard.yaml here) keys are
grouped by the families inferred from their names. Several files are the shards of one Cluster, decoded in
parallel and merged into one report. Remaining TTLs are counted from the
time the snapshot was taken; keys already expired then are left out.
Exit 2 (after writing the report) when a file is truncated or corrupt:
the report covers the keys before the damage, has complete: false and
the byte offset where each file stopped.`)
	fs.RegistryFlag(e.cli())
	fs.OutputFlags(reportFormats...)
	fs.FailOnFlag()
	var (
		match = fs.String("match", "", "report only keys matching this `glob` (Redis SCAN MATCH syntax: * ? [a-z] [^a] \\x)")
		db    = fs.Int("db", -1, "report only database `N`; -1 every database")
		agg   aggregateFlags
	)
	addAggregateFlags(fs, &agg)
	progressMode := fs.ProgressFlag()
	view := newReportFlags(fs)
	keys := newKeysFlags(fs)
	files, err := fs.Parse(args)
	if err != nil {
		return err
	}
	switch {
	case len(files) == 0:
		return cli.Usagef("name at least one RDB file (several: the shards of one Cluster; - reads stdin)")
	case *db < -1:
		return cli.Usagef("--db must be a database number (0, 1, ...)")
	case agg.maxFindings < 0, agg.top < 0, view.Depth < 0:
		return cli.Usagef("--max-findings, --top and --depth cannot be negative")
	}
	if err := keys.check(); err != nil {
		return err
	}
	prog, err := cli.NewProgress(e.cli(), *progressMode)
	if err != nil {
		return err
	}
	reg, noReg, err := fs.LoadRegistryOrNone(e.cli())
	if err != nil {
		return err
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
	ins, err := snapshot.Open(files, e.stdin)
	defer snapshot.Close(ins)
	if err != nil {
		out.Close(false)
		kout.Close(false)
		return err
	}
	opts := snapshot.Options{
		Inventory: agg.options(),
		DB:        *db,
		Match:     *match,
		TuneGC:    e.getenv("GOGC") == "",
	}
	opts.Inventory.NoRegistry = noReg
	opts.Inventory.Keys = kout.Export()
	if prog != nil {
		opts.Progress = func(p snapshot.Progress) {
			prog.Show(rdbProgressLine(p.Read, p.Total, p.Elapsed, p.FilesDone, p.Files), p.Final)
		}
	}
	res, err := snapshot.Run(ctx, reg, ins, opts)
	prog.Clear()
	if err != nil {
		out.Close(false)
		kout.Close(false)
		return err
	}
	if err := kout.Close(true); err != nil {
		out.Close(false)
		return err
	}
	rep := res.Report
	view.Sep = reg.Separator
	if fs.IsSet("top") {
		view.Top = agg.top
	}
	if noReg {
		view.Next = cli.InitNext(fs.Opts.Format, fs.Opts.Out, "rdb "+quoteAll(files))
	}
	if err := cli.WriteReport(out, fs.Opts.Format, rep, *view); err != nil {
		return err
	}
	if noReg && fs.Opts.Format != "text" {
		fmt.Fprintf(e.stderr, "keyguard rdb: no registry (none given, no keyguard.yaml here): key families inferred from the names\nnext: %s\n", view.Next)
	}
	if !res.Complete {
		return &rdbIncompleteError{stops: res.Stopped, out: fs.Opts.Out}
	}
	return cli.ReportVerdict(rep.Summary.BySeverity, fs.Threshold())
}

// rdbIncompleteError is a run where some file stopped early (truncated,
// corrupt, interrupted); the partial report has been written. Unlike the
// live audit's incompleteError there is nothing to resume: the fix is a
// good copy of the file.
type rdbIncompleteError struct {
	stops    []report.NodeStop
	out      string
	keysOnly bool // a key diff's export: there is no partial result
}

func (e *rdbIncompleteError) Error() string {
	var parts []string
	for _, s := range e.stops {
		parts = append(parts, fmt.Sprintf("%s stopped at byte %s after %s: %s", snapshot.DisplayName(s.Node), s.Cursor, human.Plural(s.Keys, "key"), s.Reason))
	}
	msg := "incomplete: " + strings.Join(parts, "; ")
	if e.keysOnly {
		return msg + "; a key diff needs the whole file (the keys past that point would show as removed)"
	}
	if e.out != "" {
		msg += "; report of the keys before that in " + e.out
	} else {
		msg += "; the report covers the keys before that"
	}
	return msg
}

// rdbProgressLine is "rdb [####....]  42% 70/167 MB  350 MB/s  ETA 1s
// files 1/3";
// without a total (a pipe) just what was read and the rate.
func rdbProgressLine(read, total int64, elapsed time.Duration, filesDone, files int) string {
	const mb = 1 << 20
	line := fmt.Sprintf("rdb: %.0f MB", float64(read)/mb)
	if total > 0 {
		line = fmt.Sprintf("rdb %s %.0f/%.0f MB", cli.Meter(float64(read)/float64(total)), float64(read)/mb, float64(total)/mb)
	}
	if elapsed > 0 {
		rate := float64(read) / elapsed.Seconds()
		line += fmt.Sprintf("  %.0f MB/s", rate/mb)
		if total > 0 && rate > 0 {
			line += "  ETA " + time.Duration(float64(max(total-read, 0))/rate*float64(time.Second)).Round(time.Second).String()
		}
	}
	if files > 1 {
		line += fmt.Sprintf("  files %d/%d", filesDone, files)
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
