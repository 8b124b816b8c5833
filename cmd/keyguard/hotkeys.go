package main

import (
	"context"
	"time"

	"github.com/keyguard/keyguard/internal/cli"
	"github.com/keyguard/keyguard/internal/hotkeys"
)

// maxMonitor bounds --monitor: MONITOR slows the server while it runs.
const maxMonitor = 10 * time.Minute

// runHotkeys lists the hot keys of a server, merged from the services'
// SDK reports (hotkey.Detector), OBJECT FREQ of every key under an LFU
// policy and, when
// asked with --monitor, a bounded MONITOR sample whose cost is measured.
func runHotkeys(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "hotkeys", "hotkeys --redis URL [--cluster] [--db N] [--registry FILE] [--window 10m] [--min-rate N] [--sample N] [--rate N] [--snapshot] [--monitor DURATION] [--format text|json] [--out FILE] [--fail-on SEVERITY]",
		"  keyguard hotkeys --redis redis://127.0.0.1:6379\n"+
			"  keyguard hotkeys --redis redis://10.0.0.1:7000,10.0.0.2:7000 --cluster --format json\n"+
			"  # no SDK reports and no LFU policy: listen 10 s with MONITOR (it slows the server; the cost is printed)\n"+
			"  keyguard hotkeys --redis redis://127.0.0.1:6379 --monitor 10s --monitor-lines 200000\n"+
			"  # cron: exit 1 when a hot key has no hot: protection\n"+
			"  keyguard hotkeys --redis \"$KEYGUARD_REDIS\" --fail-on warning >/dev/null || page-oncall")
	fs.RegistryFlag(e.cli())
	redisFlags(fs, e)
	fs.OutputFlags("text", "json")
	fs.FailOnFlag()
	var (
		window   = fs.Duration("window", 10*time.Minute, "read the SDK reports written in the last `duration`")
		minRate  = fs.Float64("min-rate", hotkeys.DefaultMinRate, "a key read or written at least `N` times a second is hot")
		minFreq  = fs.Int("min-freq", hotkeys.DefaultMinFreq, "a key whose LFU counter (0-255, logarithmic) is at least `N` is hot")
		top      = fs.Int("top", hotkeys.DefaultTop, "keys listed (every hot key gets a finding)")
		noLFU    = fs.Bool("no-lfu", false, "skip the OBJECT FREQ walk")
		sample   = fs.Int("sample", 0, "OBJECT FREQ: read at most `N` keys per master; 0 = every key")
		rate     = fs.Int("rate", 0, "OBJECT FREQ: at most `N` keys a second per master; 0 = no limit")
		match    = fs.String("match", "", "OBJECT FREQ: only keys matching this SCAN `pattern`")
		snap     = fs.Bool("snapshot", false, "read every key's LFU counter from the server's snapshot (SYNC, as a new replica: one fork per master, no command per key; needs +replconf +sync) instead of OBJECT FREQ")
		db       = fs.Int("db", -1, "database `N` only (default: the URL's, else every database that holds keys)")
		monitor  = fs.Duration("monitor", 0, "also listen with MONITOR for this `duration` on every master (at most 10m); never without this flag")
		monLines = fs.Int64("monitor-lines", hotkeys.DefaultMonitorLines, "stop MONITOR after `N` lines, all masters together")
		monBytes = fs.Int64("monitor-bytes", hotkeys.DefaultMonitorBytes, "stop MONITOR after `N` bytes, all masters together")
		monLine  = fs.Int("monitor-line-bytes", hotkeys.DefaultMonitorLineSize, "skip MONITOR lines longer than `N` bytes (counted)")
	)
	pos, err := fs.Parse(args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 0:
		return cli.Usagef("hotkeys takes no arguments; got %q", pos[0])
	case *window <= 0:
		return cli.Usagef("--window %v: give a positive duration such as 10m", *window)
	case fs.IsSet("monitor") && (*monitor <= 0 || *monitor > maxMonitor):
		return cli.Usagef("--monitor %v: give a duration from 1s to %v (MONITOR slows the server while it runs)", *monitor, maxMonitor)
	case *db < -1:
		return cli.Usagef("--db %d: give a database number (0, 1, …)", *db)
	case *sample < 0 || *rate < 0:
		return cli.Usagef("--sample and --rate must be 0 (no limit) or positive")
	case *snap && *noLFU:
		return cli.Usagef("--snapshot reads the LFU counters; --no-lfu skips them: drop one of them")
	case *snap && (fs.IsSet("sample") || fs.IsSet("rate")):
		return cli.Usagef("--sample and --rate pace the OBJECT FREQ walk; --snapshot reads every key's counter at once: drop them, or --snapshot")
	case *monLines <= 0 || *monBytes <= 0 || *monLine <= 0:
		return cli.Usagef("--monitor-lines, --monitor-bytes and --monitor-line-bytes must be positive")
	}
	// As the audit: without a registry, the keys are grouped by the
	// families inferred from their names.
	reg, noReg, err := fs.LoadRegistryOrNone(e.cli())
	if err != nil {
		return err
	}
	target, err := targetFlag(fs)
	if err != nil {
		return err
	}
	if *db >= 0 {
		if target.Cluster && *db != 0 {
			return cli.Usagef("--db %d: a Redis Cluster has only database 0", *db)
		}
		target.Opts.DB, target.DBSet = *db, true
	}
	return hotkeys.Run(ctx, e.cli(), hotkeys.RunOptions{Registry: reg, Target: target, Report: hotkeys.ReportOptions{Target: target.Display,
		Window: *window, MinRate: *minRate, MinFreq: *minFreq, Top: *top, NoRegistry: noReg}, NoLFU: *noLFU, LFU: hotkeys.LFUOptions{Sample: *sample, Rate: *rate, Match: *match}, Snapshot: *snap,
		Monitor: hotkeys.MonitorOptions{Duration: *monitor, MaxLines: *monLines, MaxBytes: *monBytes, MaxLineBytes: *monLine},
		Format:  fs.Opts.Format, Out: fs.Opts.Out, Threshold: fs.Threshold()})
}
