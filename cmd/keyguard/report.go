package main

import (
	"fmt"

	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/cli"
)

// reportFormats are the --format values of the commands that print an
// audit report (audit, rdb, merge); the first is the default. Read-only.
var reportFormats = []string{"text", "json", "csv", "html"}

// reportView is how a report is shown beyond its format.
type reportView struct {
	depth   int    // memory by prefix down to this many segments; 0 none
	sep     byte   // the registry's separator
	verbose bool   // text: every section in full
	top     int    // text: largest keys listed (0: the default)
	next    string // text: the report's last line, what to run next
	docsURL string // where docs/ is published: absolute rule links
}

// writeReport renders rep in format (one of reportFormats) to out, then
// commits out: an --out file is renamed into place only when the whole
// report was written, and removed otherwise.
func writeReport(out *cli.Output, format string, rep *report.Report, v reportView) error {
	if v.depth > 0 {
		rep.Prefixes = report.PrefixTree(rep.Groups, v.sep, v.depth)
	}
	if v.docsURL != "" {
		rep.LinkDocs(v.docsURL)
	}
	var err error
	switch format {
	case "json":
		err = rep.WriteJSON(out)
	case "csv":
		err = rep.WriteCSV(out)
	case "html":
		err = rep.WriteHTML(out)
	case "text":
		err = rep.WriteText(out, report.TextOptions{Verbose: v.verbose, Top: v.top, Next: v.next})
	default:
		err = fmt.Errorf("unknown report format %q (use text, json, csv or html)", format)
	}
	if err := out.Finish(err); err != nil {
		return fmt.Errorf("write the report: %w", err)
	}
	return nil
}

// reportFlags registers the flags every report-writing command shares.
func newReportFlags(fs *cli.FlagSet) *reportView {
	v := &reportView{}
	fs.IntVar(&v.depth, "depth", report.DefaultPrefixDepth, "memory by key prefix down to `N` segments (0: none)")
	fs.BoolVar(&v.verbose, "verbose", false, "text: every section in full, not one screen")
	fs.DocsURLFlag(&v.docsURL)
	return v
}
