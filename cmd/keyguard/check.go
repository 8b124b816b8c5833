package main

import (
	"context"

	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/cli"
	"github.com/keyguard/keyguard/internal/keycheck"
)

func runCheck(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "check", "check [flags] KEY... | check [flags] -",
		"  keyguard check promo:sku:1001 order:order:1001:base\n  redis-cli --scan | keyguard check - --only-findings\n  keyguard check - --format json < keys.txt > keys.ndjson")
	fs.RegistryFlag(e.cli())
	fs.OutputFlags("text", "json")
	fs.FailOnFlag()
	onlyFindings := fs.Bool("only-findings", false, "print only keys that break a rule (the summary still counts all)")
	fs.MaxLineFlag(report.DefaultMaxKeyLine)
	nul := fs.Bool("0", false, "keys on stdin are separated by NUL bytes instead of newlines (keys may then hold newlines)")
	var docs string
	fs.DocsURLFlag(&docs)
	keys, err := fs.Parse(args)
	if err != nil {
		return err
	}
	if len(keys) == 0 {
		return cli.Usagef("give keys as arguments, or - to read one per line from stdin")
	}
	// Without a registry (none given or found), the rules of names alone:
	// each key is of the family its name infers.
	reg, noReg, err := fs.LoadRegistryOrNone(e.cli())
	if err != nil {
		return err
	}
	return keycheck.Check(ctx, e.cli(), keycheck.CheckOptions{Registry: reg, Keys: keys, NUL: *nul, MaxLine: int64(fs.Opts.MaxLineBytes),
		Format: fs.Opts.Format, Out: fs.Opts.Out, OnlyFindings: *onlyFindings, Threshold: fs.Threshold(), Docs: docs, NoRegistry: noReg})
}
