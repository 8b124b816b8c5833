package main

import (
	"context"

	"github.com/keyguard/keyguard/internal/audit/snapshot"
	"github.com/keyguard/keyguard/internal/cli"
)

func runRDB(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "rdb", "rdb [--registry FILE] [--format text|json|csv|html] [--out FILE] [--fail-on SEV] [--match GLOB] [--db N] [--max-findings N] [--top N] FILE...",
		`  keyguard rdb dump.rdb
  keyguard rdb --format html --out keys.html dump.rdb
  keyguard rdb --format json --out cluster.json node1.rdb node2.rdb node3.rdb   # one Cluster, one report
  keyguard rdb --match 'order:*' --db 0 dump.rdb
  keyguard rdb dump.rdb.gz                  # a gzip- or zstd-compressed file is read as the RDB file it holds
  xz -dc dump.rdb.xz | keyguard rdb -
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
	case view.Depth < 0:
		return cli.Usagef("--depth cannot be negative")
	}
	if err := agg.check(); err != nil {
		return err
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
	return snapshot.Audit(ctx, e.cli(), snapshot.AuditOptions{Registry: reg, NoRegistry: noReg, Files: files, DB: *db, Match: *match,
		Inventory: agg.options(), Progress: prog, ReportOutput: cli.ReportOutput{Format: fs.Opts.Format, Out: fs.Opts.Out, Keys: keys.path, KeysFormat: keys.format,
			View: *view, TopSet: fs.IsSet("top"), Threshold: fs.Threshold()}})
}
