package scancode

import (
	"context"
	"fmt"
	"strings"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/cli"
)

// CommandOptions are what keyguard scan-code runs with.
type CommandOptions struct {
	Paths        []string
	Options      Options
	Baseline     string // a JSON report whose findings are accepted
	Suggest      bool   // write registry entries instead of the report
	NoRegistry   bool   // none given or found (Options.Registry is empty): the report lists the keys found, Suggest writes a registry of them
	AllowPartial bool   // files not analysed are a warning, not exit 2
	Format       string // text, json or sarif
	Out          string
	Threshold    finding.Severity
	Version      string // keyguard's, for SARIF
}

// Command scans the paths, writes the report (or the suggested registry
// entries), and returns cli.ErrFindings when a finding reaches the
// threshold, or an error when files could not be analysed.
func Command(ctx context.Context, e *cli.Env, o CommandOptions) error {
	reg := o.Options.Registry
	if o.NoRegistry && o.Baseline != "" {
		return cli.Usagef("--baseline accepts the findings of a scan against a registry; without one there are none: drop --baseline, or give the registry")
	}
	res, err := Scan(ctx, o.Paths, o.Options)
	if err != nil {
		return err
	}
	rep := NewReport(reg.File, res)
	var suggestions []Suggestion // of a scan without a registry: its keys
	if o.NoRegistry {
		suggestions = Suggest(reg, rep.Findings)
		rep.WithoutRegistry(suggestions)
	}
	if o.Baseline != "" {
		b, err := ReadBaselineFile(o.Baseline)
		if err != nil {
			return err
		}
		b.Apply(rep)
	}
	out, err := cli.OpenOutput(e, "--out", o.Out)
	if err != nil {
		return err
	}
	switch {
	case o.Suggest && o.NoRegistry:
		err = WriteRegistry(out, reg.Separator, suggestions)
	case o.Suggest:
		err = WriteSuggestions(out, Suggest(reg, rep.Findings))
	case o.Format == "json":
		err = rep.WriteJSON(out)
	case o.Format == "sarif":
		err = rep.WriteSARIF(out, o.Version)
	default:
		err = rep.WriteText(out)
	}
	err = out.Finish(err)
	if err != nil {
		return err
	}
	if n := len(rep.NotAnalysed); n > 0 {
		b := notAnalysedLines(rep.NotAnalysed)
		if !o.AllowPartial {
			return fmt.Errorf("%s could not be analysed, so their keys are unchecked:%s\n\tTry: fix what the reasons say, or --allow-partial to report them as a warning (see docs/scan-code.md)", plural(n, "file"), b)
		}
		fmt.Fprintf(e.Stderr, "keyguard scan-code: warning: %s not analysed (--allow-partial):%s\n", plural(n, "file"), b)
	}
	if o.Suggest {
		return nil
	}
	if w, ok := rep.Worst(); ok && w.AtLeast(o.Threshold) {
		return cli.ErrFindings
	}
	return nil
}

// notAnalysedLines are the files not analysed, a line per reason (a Go
// module that does not load gives every one of its files the same
// reason): the files of a reason, three of them named, and the reason;
// ten reasons at most, the report listing every file.
func notAnalysedLines(files []FileIssue) string {
	var reasons []string
	byReason := map[string][]string{}
	for _, fi := range files {
		if _, ok := byReason[fi.Reason]; !ok {
			reasons = append(reasons, fi.Reason)
		}
		byReason[fi.Reason] = append(byReason[fi.Reason], fi.File)
	}
	var b strings.Builder
	left := len(files)
	for i, r := range reasons {
		if i == 10 {
			fmt.Fprintf(&b, "\n\t... and %s (the report lists them all)", plural(left, "more file"))
			break
		}
		fs := byReason[r]
		names := strings.Join(fs[:min(len(fs), 3)], ", ")
		if len(fs) > 3 {
			names += fmt.Sprintf(" and %d more", len(fs)-3)
		}
		fmt.Fprintf(&b, "\n\t%s: %s", names, r)
		left -= len(fs)
	}
	return b.String()
}
