package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/keyguard/keyguard/internal/cli"
	"github.com/keyguard/keyguard/internal/scancode"
)

func runScanCode(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "scan-code", "scan-code [--registry FILE] [--format text|json|sarif] [--baseline FILE] [--suggest] [--lang LIST] [--tests] [--allow-partial] [--max-file-bytes N] [--fail-on SEVERITY] [PATH...]",
		"  keyguard scan-code                                   # the tree here: Go, Java, Python, TypeScript, JavaScript\n"+
			"  keyguard scan-code --format sarif --out keys.sarif   # for code scanning\n"+
			"  keyguard scan-code --format json --out baseline.json # accept today's findings once...\n"+
			"  keyguard scan-code --baseline baseline.json          # ...then fail only on new ones\n"+
			"  keyguard scan-code --suggest >> new-entries.yaml     # registry entries for the keys nobody declared")
	fs.RegistryFlag(e.cli())
	fs.OutputFlags("text", "json", "sarif")
	fs.FailOnFlag()
	baseline := fs.String("baseline", "", "a scan-code JSON report (`file`) whose findings are accepted: only new ones are reported")
	suggest := fs.Bool("suggest", false, "write registry entries for the key templates that match none, instead of the report")
	langs := fs.String("lang", "", "scan only these languages, a comma-separated `list`: go, java, python, ts (ts covers JavaScript)")
	tests := fs.Bool("tests", false, "also scan test files (_test.go, src/test/, test_*.py, *.test.ts...)")
	partial := fs.Bool("allow-partial", false, "report files that could not be analysed (Go packages that do not load, files that do not parse) as a warning instead of failing with exit 2")
	maxBytes := fs.Int64("max-file-bytes", scancode.DefaultMaxFileBytes, "skip and list source files larger than this many `bytes`")
	pos, err := fs.Parse(args)
	if err != nil {
		return err
	}
	only, err := scancode.ParseLangs(*langs)
	if err != nil {
		return cli.Usagef("--lang: %v", err)
	}
	if len(pos) == 0 {
		pos = []string{"."}
	}
	reg, err := fs.LoadRegistry()
	if err != nil {
		return err
	}
	if *maxBytes <= 0 {
		return cli.Usagef("--max-file-bytes: want a positive number of bytes, got %d", *maxBytes)
	}
	res, err := scancode.Scan(ctx, pos, scancode.Options{Registry: reg, Langs: only, Tests: *tests, MaxFileBytes: *maxBytes})
	if err != nil {
		return err
	}
	rep := scancode.NewReport(reg.File, res)
	if *baseline != "" {
		b, err := scancode.ReadBaselineFile(*baseline)
		if err != nil {
			return err
		}
		b.Apply(rep)
	}
	out, err := fs.OpenOutput(e.cli())
	if err != nil {
		return err
	}
	switch {
	case *suggest:
		err = scancode.WriteSuggestions(out, scancode.Suggest(reg, rep.Findings))
	case fs.Opts.Format == "json":
		err = rep.WriteJSON(out)
	case fs.Opts.Format == "sarif":
		err = rep.WriteSARIF(out, moduleVersion())
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
		if !*partial {
			return fmt.Errorf("%d files could not be analysed, so their keys are unchecked:%s\n\tTry: fix what the reasons say, or --allow-partial to report them as a warning (see docs/scan-code.md)", n, b.String())
		}
		fmt.Fprintf(e.stderr, "keyguard scan-code: warning: %d files not analysed (--allow-partial):%s\n", n, b.String())
	}
	if *suggest {
		return nil
	}
	if w, ok := rep.Worst(); ok && w.AtLeast(fs.Threshold()) {
		return cli.ErrFindings
	}
	return nil
}
