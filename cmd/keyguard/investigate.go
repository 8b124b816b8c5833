package main

import (
	"context"
	"time"

	"github.com/keyguard/keyguard/internal/cli"
	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/internal/investigate"
)

// runInvestigate walks the chain of an overwritten key: find the keys
// around an ID, look at their values' styles, read the slow log, watch the
// TTLs, and with --monitor capture who writes them.
func runInvestigate(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "investigate", "investigate --redis URL (--id ID | --key KEY | --match PATTERN) [--watch 10s] [--monitor 10s] [--notify] [--format text|json]",
		"  keyguard investigate --redis redis://127.0.0.1:6379 --id 1001\n"+
			"  keyguard investigate --redis redis://10.0.0.1:7000 --cluster --key promo:sku:1001 --monitor 10s\n"+
			"  keyguard investigate --match 'promo:sku:*' --monitor 5s --max-lines 20000 --format json --out evidence.json\n"+
			"  keyguard investigate --id 1001 --notify --enable-notify   # where MONITOR is not allowed: timing without identity")
	fs.RegistryFlag(e.cli())
	redisFlags(fs, e)
	fs.OutputFlags("text", "json")
	fs.FailOnFlag()
	var o investigate.Options
	fs.StringVar(&o.ID, "id", "", "an entity `ID`: every key that holds it as a whole segment")
	fs.StringVar(&o.Key, "key", "", "one `key`")
	fs.StringVar(&o.Match, "match", "", "keys matching a SCAN MATCH `pattern`")
	fs.IntVar(&o.MaxKeys, "max-keys", investigate.DefaultMaxKeys, "keep at most `n` keys from the search")
	fs.Float64Var(&o.SearchRate, "search-rate", 0, "list at most `KEYS` per second in the key search, all masters together; 0 = no limit")
	fs.DurationVar(&o.Watch, "watch", investigate.DefaultWatch, "sample the keys' TTLs and values this long (0 skips the watch)")
	fs.DurationVar(&o.WatchEvery, "watch-every", investigate.DefaultWatchEvery, "TTL sampling interval")
	fs.DurationVar(&o.Monitor, "monitor", 0, "capture the writers with MONITOR this long on every master holding the keys (MONITOR costs the server throughput while it runs; off unless given)")
	fs.Int64Var(&o.MaxLines, "max-lines", investigate.DefaultMonitorLines, "stop a node's capture after `n` MONITOR lines")
	maxBytes := fs.String("max-bytes", "64MiB", "stop a node's capture after this many MONITOR `bytes` (64MiB, 500KB, 1048576)")
	fs.BoolVar(&o.Notify, "notify", false, "listen to keyspace notifications as long as --watch (10s when it is 0): timing and kinds of writes, no client identity")
	fs.BoolVar(&o.EnableNotify, "enable-notify", false, "with --notify: turn notify-keyspace-events on where it is off, and restore it afterwards")
	fs.BoolVar(&o.ShowValues, "show-values", false, "show values, cut, in the report (hidden by default: keys may hold personal data)")
	pos, err := fs.Parse(args)
	if err != nil {
		return err
	}
	if err := investigateUsage(fs, &o, pos, *maxBytes); err != nil {
		return err
	}
	// As the audit: without a registry, the keys are of the families
	// inferred from their names.
	reg, noReg, err := fs.LoadRegistryOrNone(e.cli())
	if err != nil {
		return err
	}
	target, err := targetFlag(fs)
	if err != nil {
		return err
	}
	o.NoRegistry = noReg
	if !noReg {
		o.Registry = fs.Opts.Registry // the report names the file
	}
	return investigate.Investigate(ctx, e.cli(), investigate.CommandOptions{Options: o, Registry: reg, Target: target,
		Format: fs.Opts.Format, Out: fs.Opts.Out, Threshold: fs.Threshold()})
}

// investigateUsage checks the target and the capture flags: MONITOR never
// runs unless --monitor asks for it.
func investigateUsage(fs *cli.FlagSet, o *investigate.Options, pos []string, maxBytes string) error {
	if len(pos) > 0 {
		return cli.Usagef("investigate takes no arguments; got %q (use --key %s)", pos[0], pos[0])
	}
	n := 0
	for _, s := range []string{o.ID, o.Key, o.Match} {
		if s != "" {
			n++
		}
	}
	if n != 1 {
		return cli.Usagef("give exactly one of --id ID, --key KEY or --match PATTERN")
	}
	b, err := human.ParseBytes(maxBytes)
	if err != nil {
		return cli.Usagef("--max-bytes: %v", err)
	}
	o.MaxBytes = b
	if o.Monitor <= 0 && (fs.IsSet("max-lines") || fs.IsSet("max-bytes")) {
		return cli.Usagef("--max-lines and --max-bytes bound a MONITOR capture, which runs only with --monitor DURATION: MONITOR makes the server copy every command to keyguard and costs it throughput (often tens of percent on a busy server) while it runs")
	}
	switch {
	case o.Monitor < 0, o.Watch < 0, o.MaxKeys <= 0, o.MaxLines <= 0:
		return cli.Usagef("--monitor, --watch, --max-keys and --max-lines must be positive")
	case o.EnableNotify && !o.Notify:
		return cli.Usagef("--enable-notify goes with --notify")
	case o.WatchEvery < 10*time.Millisecond:
		return cli.Usagef("--watch-every %s: sample at most every 10ms", o.WatchEvery)
	}
	return nil
}
