package main

import (
	"context"

	"github.com/keyguard/keyguard/internal/audit/snapshot"
	"github.com/keyguard/keyguard/internal/cli"
)

func runMerge(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "merge", "merge [--registry FILE] [--format text|json|csv|html] [--out FILE] [--fail-on SEV] REPORT.json...",
		`  keyguard merge node1.json node2.json node3.json --format json --out cluster.json
  keyguard merge --format html --out fleet.html shard-*.json

One report from the JSON reports (keyguard audit or rdb --format json) of
different shards, hosts or databases, as if they had been audited
together: counts add up, capped lists keep the best of all, TTL quantiles
and mixed-schema come from the pooled sketches and samples. Give the
registry the reports were made with (none for reports made without one).`)
	fs.RegistryFlag(e.cli())
	fs.OutputFlags(reportFormats...)
	fs.FailOnFlag()
	view := newReportFlags(fs)
	files, err := fs.Parse(args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return cli.Usagef("name the JSON reports to merge (keyguard audit --format json --out FILE writes one)")
	}
	return snapshot.Merge(e.cli(), snapshot.MergeOptions{LoadRegistry: fs.LoadRegistry, RegistryGiven: fs.RegistryGiven(e.cli()), Files: files, Format: fs.Opts.Format, Out: fs.Opts.Out, Threshold: fs.Threshold(), View: *view})
}
