package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

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
	fs.registryFlag(e)
	fs.redisFlags(e)
	fs.outputFlags("text", "json")
	fs.failOnFlag()
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
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if err := investigateUsage(fs, &o, pos, *maxBytes); err != nil {
		return err
	}
	reg, err := fs.loadRegistry()
	if err != nil {
		return err
	}
	target, err := fs.redisTarget()
	if err != nil {
		return err
	}
	target.opts.ClientName = investigate.DefaultSelf // our reads are not a client's
	rdb, err := connectRedis(ctx, target)
	if err != nil {
		return err
	}
	defer rdb.Close()
	o.Display, o.Registry = target.display, fs.opts.registry
	if d := max(o.Watch, o.Monitor); d > 0 {
		fmt.Fprintf(e.stderr, "keyguard investigate: watching for %s%s…\n", formatDuration(d), investigateMonitorNote(o.Monitor))
	}
	rep, err := investigate.Run(ctx, reg, rdb, o)
	if err != nil {
		return err
	}
	out, err := fs.openOutput(e)
	if err != nil {
		return err
	}
	if fs.opts.format == "json" {
		err = rep.WriteJSON(out)
	} else {
		err = rep.WriteText(out)
	}
	err = out.finish(err)
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		// Interrupted (Ctrl-C): the report covers what was seen until
		// then, and the exit code says it is partial, as audit's does.
		return errors.New("interrupted: the report covers what was seen before the stop")
	}
	if len(rep.NotObserved) > 0 {
		// The report is written; what it could not see is an error.
		var spans []string
		for _, sp := range rep.NotObserved {
			spans = append(spans, sp.String())
		}
		return fmt.Errorf("investigation incomplete: not observed: %s; run it again once the server answers", strings.Join(spans, "; "))
	}
	if gaps := rep.NotSearched(); len(gaps) > 0 {
		return fmt.Errorf("investigation incomplete: the key search did not cover %s; run it again", strings.Join(gaps, "; "))
	}
	return verdict(rep.Findings, fs.threshold())
}

func investigateMonitorNote(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return ", capturing writers with MONITOR for " + formatDuration(d) + " (it costs the server throughput meanwhile)"
}

// investigateUsage checks the target and the capture flags: MONITOR never
// runs unless --monitor asks for it.
func investigateUsage(fs *flagSet, o *investigate.Options, pos []string, maxBytes string) error {
	if len(pos) > 0 {
		return usagef("investigate takes no arguments; got %q (use --key %s)", pos[0], pos[0])
	}
	n := 0
	for _, s := range []string{o.ID, o.Key, o.Match} {
		if s != "" {
			n++
		}
	}
	if n != 1 {
		return usagef("give exactly one of --id ID, --key KEY or --match PATTERN")
	}
	b, err := human.ParseBytes(maxBytes)
	if err != nil {
		return usagef("--max-bytes: %v", err)
	}
	o.MaxBytes = b
	if o.Monitor <= 0 && (fs.isSet("max-lines") || fs.isSet("max-bytes")) {
		return usagef("--max-lines and --max-bytes bound a MONITOR capture, which runs only with --monitor DURATION: MONITOR makes the server copy every command to keyguard and costs it throughput (often tens of percent on a busy server) while it runs")
	}
	switch {
	case o.Monitor < 0, o.Watch < 0, o.MaxKeys <= 0, o.MaxLines <= 0:
		return usagef("--monitor, --watch, --max-keys and --max-lines must be positive")
	case o.EnableNotify && !o.Notify:
		return usagef("--enable-notify goes with --notify")
	case o.WatchEvery < 10*time.Millisecond:
		return usagef("--watch-every %s: sample at most every 10ms", o.WatchEvery)
	}
	return nil
}
