package main

import (
	"context"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/cli"
	"github.com/keyguard/keyguard/internal/keycheck"
)

func runLint(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "lint", "lint [--registry FILE] [--format text|json|sarif] [--fail-on SEVERITY] [--out FILE]",
		"  keyguard lint\n  keyguard lint --registry conf/keyguard.yaml --format json --out lint.json\n  keyguard lint --fail-on warning   # strict CI gate\n"+
			"  keyguard lint --format sarif -o keyguard.sarif   # code scanning; a file that does not load is a failed run in it")
	fs.RegistryFlag(e.cli())
	fs.OutputFlags("text", "json", "sarif")
	fs.FailOnFlag()
	docs := fs.String("docs-url", finding.DefaultDocsBase, "`URL` under which docs/ is published, for the rule links of JSON and SARIF (\"\": links relative to the repository)")
	pos, err := fs.Parse(args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return cli.Usagef("lint takes no arguments; got %q", pos[0])
	}
	reg, loadErr := fs.LoadRegistry()
	return keycheck.Lint(e.cli(), keycheck.LintOptions{Registry: reg, LoadErr: loadErr, File: fs.Opts.Registry, Format: fs.Opts.Format,
		Out: fs.Opts.Out, Threshold: fs.Threshold(), Docs: *docs, Version: moduleVersion()})
}
