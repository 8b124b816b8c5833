package main

import (
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/cli"
)

// reportFormats are the --format values of the commands that print an
// audit report (audit, rdb, merge); the first is the default. Read-only.
var reportFormats = []string{"text", "json", "csv", "html"}

// reportFlags registers the flags every report-writing command shares.
func newReportFlags(fs *cli.FlagSet) *cli.ReportView {
	v := &cli.ReportView{}
	fs.IntVar(&v.Depth, "depth", report.DefaultPrefixDepth, "memory by key prefix down to `N` segments (0: none)")
	fs.BoolVar(&v.Verbose, "verbose", false, "text: every section in full, not one screen")
	fs.DocsURLFlag(&v.DocsURL)
	return v
}
