package main

import (
	"fmt"

	"github.com/keyguard/keyguard/report"
)

// reportFormats are the --format values of the commands that print an
// audit report (audit, rdb); the first is the default. Read-only.
var reportFormats = []string{"text", "json", "csv", "html"}

// writeReport renders rep in format (one of reportFormats) to out, then
// commits out: an --out file is renamed into place only when the whole
// report was written, and removed otherwise.
func writeReport(out *output, format string, rep *report.Report) error {
	var err error
	switch format {
	case "json":
		err = rep.WriteJSON(out)
	case "csv":
		err = rep.WriteCSV(out)
	case "html":
		err = rep.WriteHTML(out)
	case "text":
		err = rep.WriteText(out)
	default:
		err = fmt.Errorf("unknown report format %q (use text, json, csv or html)", format)
	}
	if cerr := out.close(err == nil); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write the report: %w", err)
	}
	return nil
}
