package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/audit/report"
)

func runDiff(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "diff", "diff [--format text|json] [--out FILE] [--fail-on SEVERITY] OLD.json NEW.json",
		"  keyguard diff monday.json today.json\n"+
			"  keyguard audit --format json | keyguard diff baseline.json -   # - reads one report from stdin\n"+
			"  keyguard diff --format json --fail-on warning old.json new.json  # CI: fail on any new warning")
	fs.outputFlags("text", "json")
	fs.failOnFlag()
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("give two audit reports (keyguard audit or rdb --format json): OLD.json NEW.json")
	}
	if pos[0] == "-" && pos[1] == "-" {
		return usagef("only one of the reports can come from stdin (-)")
	}
	old, err := readReportFile(e, pos[0])
	if err != nil {
		return err
	}
	cur, err := readReportFile(e, pos[1])
	if err != nil {
		return err
	}
	d := report.Diff(old, cur)
	out, err := fs.openOutput(e)
	if err != nil {
		return err
	}
	if fs.opts.format == "json" {
		err = d.WriteJSON(out)
	} else {
		err = d.WriteText(out)
	}
	if err := out.finish(err); err != nil {
		return err
	}
	fds := make([]finding.Finding, len(d.NewFindings))
	for i, f := range d.NewFindings {
		fds[i] = f.Finding
	}
	return verdict(fds, fs.threshold())
}

// readReportFile reads an audit report from path, or from stdin for "-".
func readReportFile(e *env, path string) (*report.Report, error) {
	var r io.Reader
	if path == "-" {
		r = e.stdin
	} else {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("%w\n\tTry: write reports with keyguard audit --format json --out FILE", err)
		}
		defer f.Close()
		r = f
	}
	rep, err := report.ReadReport(bufio.NewReaderSize(r, 1<<16))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rep, nil
}
