package main

import (
	"context"

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
	// Without a registry (none given or found), the report lists the key
	// templates found in code, and --suggest writes a registry of them.
	reg, noReg, err := fs.LoadRegistryOrNone(e.cli())
	if err != nil {
		return err
	}
	if *maxBytes <= 0 {
		return cli.Usagef("--max-file-bytes: want a positive number of bytes, got %d", *maxBytes)
	}
	return scancode.Command(ctx, e.cli(), scancode.CommandOptions{Paths: pos, Options: scancode.Options{Registry: reg, Langs: only, Tests: *tests,
		MaxFileBytes: *maxBytes}, Baseline: *baseline, Suggest: *suggest, NoRegistry: noReg, AllowPartial: *partial, Format: fs.Opts.Format, Out: fs.Opts.Out,
		Threshold: fs.Threshold(), Version: moduleVersion()})
}
