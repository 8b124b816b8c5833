package main

import (
	"context"

	"github.com/keyguard/keyguard/internal/cli"
	"github.com/keyguard/keyguard/internal/writers"
	"github.com/keyguard/keyguard/redishook"
)

// runWriters lists who wrote which template, from the records the SDK's
// redishook.Recorder flushes to Redis: a second writer of a key within
// 24 hours is the warning sign of a conflict. A writer the registry does
// not allow is an error, no records at all a warning (the services may
// not be recording), a template shared by allowed writers is info; the
// exit code follows --fail-on, so it can be cronned.
func runWriters(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "writers", "writers --redis URL [--cluster] [--registry FILE] [--window 24h] [--format text|json] [--fail-on SEVERITY]",
		"  keyguard writers --redis redis://127.0.0.1:6379\n"+
			"  keyguard writers --redis redis://10.0.0.1:7000,10.0.0.2:7000 --cluster --window 1h --format json\n"+
			"  # cron: page when a service writes a template it does not own, or when nothing records at all\n"+
			"  keyguard writers --redis \"$KEYGUARD_REDIS\" --fail-on warning >/dev/null || page-oncall")
	fs.RegistryFlag(e.cli())
	redisFlags(fs, e)
	fs.OutputFlags("text", "json")
	fs.FailOnFlag()
	window := fs.Duration("window", redishook.DefaultWindow, "how far back to look (records are kept 24h by default): 1h, 7d")
	pos, err := fs.Parse(args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return cli.Usagef("writers takes no arguments; got %q", pos[0])
	}
	if *window <= 0 {
		return cli.Usagef("--window %v: give a positive duration such as 24h", *window)
	}
	reg, err := fs.LoadRegistry()
	if err != nil {
		return err
	}
	target, err := targetFlag(fs)
	if err != nil {
		return err
	}
	return writers.Run(ctx, e.cli(), writers.Options{Registry: reg, Target: target, Window: *window, Format: fs.Opts.Format, Out: fs.Opts.Out, Threshold: fs.Threshold()})
}
