package main

import (
	"context"

	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/audit/snapshot"
	"github.com/keyguard/keyguard/internal/cli"
	"github.com/keyguard/keyguard/registry"
)

func runDiff(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "diff", "diff [--format text|json|csv] [--out FILE] [--fail-on SEVERITY] OLD NEW",
		`  keyguard diff monday.json today.json
  keyguard audit --format json | keyguard diff baseline.json -   # - reads one report from stdin
  keyguard diff --format json --fail-on warning old.json new.json  # CI: fail on any new warning
  keyguard diff yesterday.csv today.csv                            # key exports (audit or rdb --keys FILE)
  keyguard diff --format csv --out changes.csv yesterday.rdb today.rdb
  keyguard diff keys.csv dump.rdb                                   # an export against a snapshot

OLD and NEW are two audit reports (--format json): groups new, gone and
changed, and new findings. Or two key exports (--keys FILE) or RDB files,
in any mix: every key added, removed, holding another type, or grown or
shrunk past --min-bytes and --min-change, by template. Large inputs are
compared through temporary files (--tmp), in bounded memory.`)
	fs.OutputFlags("text", "json", "csv")
	fs.FailOnFlag()
	fs.RegistryFlag(e.cli())
	minBytes := fs.Int64("min-bytes", report.DefaultKeyDiffMinBytes, "key diffs: a key has grown or shrunk when its size moved by at least `N` bytes")
	minChange := fs.Float64("min-change", report.DefaultKeyDiffRatio*100, "key diffs: … and by at least this `PERCENT` of its old size")
	limit := fs.Int("limit", 20, "key diffs, text: changes listed per kind (0: all)")
	var docs string
	fs.DocsURLFlag(&docs)
	fs.MaxLineFlag(report.DefaultMaxKeyLine)
	tmp := fs.String("tmp", "", "key diffs: `DIR` for the temporary files (default: the system's)")
	pos, err := fs.Parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return cli.Usagef("give two audit reports (--format json), key exports (--keys FILE) or RDB files: OLD NEW")
	}
	if pos[0] == "-" && pos[1] == "-" {
		return cli.Usagef("only one of the inputs can come from stdin (-)")
	}
	if *minBytes < 0 || *minChange < 0 || *limit < 0 {
		return cli.Usagef("--min-bytes, --min-change and --limit cannot be negative")
	}
	return snapshot.Diff(ctx, e.cli(), snapshot.DiffOptions{Inputs: [2]string{pos[0], pos[1]}, Format: fs.Opts.Format, Out: fs.Opts.Out,
		Threshold: fs.Threshold(), Docs: docs, MaxLine: int64(fs.Opts.MaxLineBytes), Limit: *limit,
		Keys:         report.KeyDiffOptions{MinBytes: *minBytes, Ratio: *minChange / 100, TempDir: *tmp},
		LoadRegistry: func() (*registry.Registry, bool, error) { return fs.LoadRegistryOrNone(e.cli()) }})
}

// readReportFile reads an audit report from path, or from stdin for "-".
func readReportFile(e *env, path string) (*report.Report, error) {
	return cli.ReadReportFile(e.cli(), path)
}
