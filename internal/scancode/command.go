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
		var b strings.Builder
		for i, fi := range rep.NotAnalysed {
			if i == 10 {
				fmt.Fprintf(&b, "\n\t... and %d more (the report lists them all)", n-10)
				break
			}
			fmt.Fprintf(&b, "\n\t%s: %s", fi.File, fi.Reason)
		}
		if !o.AllowPartial {
			return fmt.Errorf("%d files could not be analysed, so their keys are unchecked:%s\n\tTry: fix what the reasons say, or --allow-partial to report them as a warning (see docs/scan-code.md)", n, b.String())
		}
		fmt.Fprintf(e.Stderr, "keyguard scan-code: warning: %d files not analysed (--allow-partial):%s\n", n, b.String())
	}
	if o.Suggest {
		return nil
	}
	if w, ok := rep.Worst(); ok && w.AtLeast(o.Threshold) {
		return cli.ErrFindings
	}
	return nil
}
