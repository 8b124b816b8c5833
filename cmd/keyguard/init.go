package main

import (
	"context"
	"os"

	"github.com/keyguard/keyguard/internal/cli"
	"github.com/keyguard/keyguard/internal/starter"
)

func runInit(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "init", "init [--out FILE] [--force] [--from-audit REPORT.json]",
		"  keyguard init                       # a commented starter keyguard.yaml here\n"+
			"  keyguard init -o conf/keyguard.yaml\n"+
			"  keyguard audit --redis redis://10.0.0.1:6379 --format json --out audit.json\n"+
			"  keyguard init --from-audit audit.json   # the families the audit found, every decision marked FILL-IN\n"+
			"  keyguard lint                       # fails until every FILL-IN is replaced")
	fs.StringVar(&fs.Opts.Out, "out", "keyguard.yaml", "write the registry to `file` (- for stdout)")
	force := fs.Bool("force", false, "replace an existing file")
	from := fs.String("from-audit", "", "build the registry from the suggested entries of an audit report `file` (keyguard audit or rdb --format json)")
	pos, err := fs.Parse(args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return cli.Usagef("init takes no arguments; got %q (use --out FILE)", pos[0])
	}
	if fs.Opts.Out != "-" && !*force {
		if _, err := os.Stat(fs.Opts.Out); err == nil {
			return cli.Usagef("%s exists: keyguard init does not overwrite a registry; pass --force to replace it, or --out another file", fs.Opts.Out)
		}
	}
	return starter.Run(e.cli(), starter.Options{Out: fs.Opts.Out, FromAudit: *from})
}
