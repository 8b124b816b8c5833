package snapshot

import (
	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/audit/inventory"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/cli"
	"github.com/keyguard/keyguard/registry"
)

// MergeOptions are what keyguard merge runs with.
type MergeOptions struct {
	Registry  *registry.Registry // the registry the reports were made with
	Files     []string           // JSON reports; "-" is stdin (once)
	Format    string             // text, json, csv or html
	Out       string
	Threshold finding.Severity
	View      cli.ReportView
}

// Merge writes one report from the JSON reports of different shards,
// hosts or databases, as if they had been audited together (see
// inventory.MergeReports), with their coverage joined. It returns
// cli.ErrFindings when a finding reaches the threshold.
func Merge(e *cli.Env, o MergeOptions) error {
	stdin := 0
	var reps []*report.Report
	for _, f := range o.Files {
		if f == "-" {
			if stdin++; stdin > 1 {
				return cli.Usagef("only one of the reports can come from stdin (-)")
			}
		}
		rep, err := cli.ReadReportFile(e, f)
		if err != nil {
			return err
		}
		reps = append(reps, rep)
	}
	out, err := cli.OpenOutput(e, "--out", o.Out)
	if err != nil {
		return err
	}
	rep, err := inventory.MergeReports(o.Registry, reps, o.Files)
	if err != nil {
		out.Close(false)
		return err
	}
	covs := make([]*report.Coverage, len(reps))
	for i, r := range reps {
		covs[i] = r.Coverage
	}
	rep.Coverage = report.JoinCoverage(covs...)
	view := o.View
	view.Sep = o.Registry.Separator
	if err := cli.WriteReport(out, o.Format, rep, view); err != nil {
		return err
	}
	return cli.ReportVerdict(rep.Summary.BySeverity, o.Threshold)
}
