package main

import (
	"context"

	"github.com/keyguard/keyguard/internal/audit/inventory"
	"github.com/keyguard/keyguard/internal/audit/report"
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
registry the reports were made with.`)
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
	reg, err := fs.LoadRegistry()
	if err != nil {
		return err
	}
	stdin := 0
	var reps []*report.Report
	for _, f := range files {
		if f == "-" {
			if stdin++; stdin > 1 {
				return cli.Usagef("only one of the reports can come from stdin (-)")
			}
		}
		rep, err := readReportFile(e, f)
		if err != nil {
			return err
		}
		reps = append(reps, rep)
	}
	out, err := fs.OpenOutput(e.cli())
	if err != nil {
		return err
	}
	rep, err := inventory.MergeReports(reg, reps, files)
	if err != nil {
		out.Close(false)
		return err
	}
	covs := make([]*report.Coverage, len(reps))
	for i, r := range reps {
		covs[i] = r.Coverage
	}
	rep.Coverage = report.JoinCoverage(covs...)
	view.Sep = reg.Separator
	if err := cli.WriteReport(out, fs.Opts.Format, rep, *view); err != nil {
		return err
	}
	return cli.ReportVerdict(rep.Summary.BySeverity, fs.Threshold())
}
