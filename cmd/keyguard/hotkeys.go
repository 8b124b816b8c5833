package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/hotkey"
	"github.com/keyguard/keyguard/internal/hotkeys"
)

// maxMonitor bounds --monitor: MONITOR slows the server while it runs.
const maxMonitor = 10 * time.Minute

// runHotkeys lists the hot keys of a server, merged from the services'
// SDK reports (hotkey.Detector), OBJECT FREQ of every key under an LFU
// policy and, when
// asked with --monitor, a bounded MONITOR sample whose cost is measured.
func runHotkeys(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "hotkeys", "hotkeys --redis URL [--cluster] [--registry FILE] [--window 10m] [--min-rate N] [--sample N] [--rate N] [--monitor DURATION] [--format text|json] [--out FILE] [--fail-on SEVERITY]",
		"  keyguard hotkeys --redis redis://127.0.0.1:6379\n"+
			"  keyguard hotkeys --redis redis://10.0.0.1:7000,10.0.0.2:7000 --cluster --format json\n"+
			"  # no SDK reports and no LFU policy: listen 10 s with MONITOR (it slows the server; the cost is printed)\n"+
			"  keyguard hotkeys --redis redis://127.0.0.1:6379 --monitor 10s --monitor-lines 200000\n"+
			"  # cron: exit 1 when a hot key has no hot: protection\n"+
			"  keyguard hotkeys --redis \"$KEYGUARD_REDIS\" --fail-on warning >/dev/null || page-oncall")
	fs.registryFlag(e)
	fs.redisFlags(e)
	fs.outputFlags("text", "json")
	fs.failOnFlag()
	var (
		window   = fs.Duration("window", 10*time.Minute, "read the SDK reports written in the last `duration`")
		minRate  = fs.Float64("min-rate", hotkeys.DefaultMinRate, "a key read or written at least `N` times a second is hot")
		minFreq  = fs.Int("min-freq", hotkeys.DefaultMinFreq, "a key whose LFU counter (0-255, logarithmic) is at least `N` is hot")
		top      = fs.Int("top", hotkeys.DefaultTop, "keys listed (every hot key gets a finding)")
		noLFU    = fs.Bool("no-lfu", false, "skip the OBJECT FREQ walk")
		sample   = fs.Int("sample", 0, "OBJECT FREQ: read at most `N` keys per master; 0 = every key")
		rate     = fs.Int("rate", 0, "OBJECT FREQ: at most `N` keys a second per master; 0 = no limit")
		match    = fs.String("match", "", "OBJECT FREQ: only keys matching this SCAN `pattern`")
		monitor  = fs.Duration("monitor", 0, "also listen with MONITOR for this `duration` on every master (at most 10m); never without this flag")
		monLines = fs.Int64("monitor-lines", hotkeys.DefaultMonitorLines, "stop MONITOR after `N` lines, all masters together")
		monBytes = fs.Int64("monitor-bytes", hotkeys.DefaultMonitorBytes, "stop MONITOR after `N` bytes, all masters together")
		monLine  = fs.Int("monitor-line-bytes", hotkeys.DefaultMonitorLineSize, "skip MONITOR lines longer than `N` bytes (counted)")
	)
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 0:
		return usagef("hotkeys takes no arguments; got %q", pos[0])
	case *window <= 0:
		return usagef("--window %v: give a positive duration such as 10m", *window)
	case fs.isSet("monitor") && (*monitor <= 0 || *monitor > maxMonitor):
		return usagef("--monitor %v: give a duration from 1s to %v (MONITOR slows the server while it runs)", *monitor, maxMonitor)
	case *sample < 0 || *rate < 0:
		return usagef("--sample and --rate must be 0 (no limit) or positive")
	case *monLines <= 0 || *monBytes <= 0 || *monLine <= 0:
		return usagef("--monitor-lines, --monitor-bytes and --monitor-line-bytes must be positive")
	}
	reg, err := fs.loadRegistry()
	if err != nil {
		return err
	}
	target, err := fs.redisTarget()
	if err != nil {
		return err
	}
	rdb, err := connectRedis(ctx, target)
	if err != nil {
		return err
	}
	defer rdb.Close()
	reps, err := hotkey.ReadReports(ctx, rdb, time.Now().Add(-*window))
	if err != nil {
		return fmt.Errorf("%w\n\tTry: check that the user may read %s* (HGETALL, ZRANGE)", err, hotkey.RecordPrefix)
	}
	var lfu *hotkeys.LFUResult
	var interrupted error
	if !*noLFU {
		lfu, err = hotkeys.WalkLFU(ctx, rdb, hotkeys.LFUOptions{Sample: *sample, Rate: *rate, Match: *match})
		switch {
		case err != nil && ctx.Err() != nil && lfu != nil:
			// Interrupted: the report lists what was read, each node saying where it stopped.
			interrupted = fmt.Errorf("interrupted: the report covers the keys read so far: %w", ctx.Err())
			ctx = context.WithoutCancel(ctx)
		case err != nil && lfu != nil:
			// A part not covered (a node lost): the report lists what was read and says what was not.
			interrupted = fmt.Errorf("OBJECT FREQ walk incomplete: the report covers the keys read so far: %w", err)
		case err != nil:
			return fmt.Errorf("%w\n\tTry: --no-lfu to skip OBJECT FREQ, or --rate N to slow the walk", err)
		}
	}
	var mon *hotkeys.MonitorResult
	if *monitor > 0 && interrupted == nil {
		mo := hotkeys.MonitorOptions{Duration: *monitor, MaxLines: *monLines, MaxBytes: *monBytes, MaxLineBytes: *monLine}
		if mon, err = monitorMasters(ctx, e, target, rdb, mo); err != nil {
			return err
		}
	}
	rep := hotkeys.BuildReport(reg, reps, lfu, mon, hotkeys.ReportOptions{Target: target.display, Window: *window, MinRate: *minRate, MinFreq: *minFreq, Top: *top})
	out, err := fs.openOutput(e)
	if err != nil {
		return err
	}
	if interrupted != nil {
		out.keepExisting() // a partial report goes beside a complete one
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
	if interrupted != nil {
		return interrupted
	}
	if lost := mon.NotObserved(); len(lost) > 0 {
		// The report is written; the part of the sample not seen is an error.
		return fmt.Errorf("MONITOR sample incomplete: not observed on %s; run it again once the server answers", strings.Join(lost, "; "))
	}
	return verdict(rep.Findings, fs.threshold())
}

// monitorMasters runs the MONITOR sample on every master of rdb.
func monitorMasters(ctx context.Context, e *env, target *redisTarget, rdb redis.UniversalClient, mo hotkeys.MonitorOptions) (*hotkeys.MonitorResult, error) {
	addrs, err := hotkeys.MasterAddrs(ctx, rdb)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(e.stderr, "keyguard hotkeys: MONITOR on %s for %s, after measuring the throughput without it…\n", plural(len(addrs), "master"), formatDuration(mo.Duration))
	mon, err := hotkeys.Monitor(ctx, target.opts, addrs, mo)
	if err != nil {
		return nil, fmt.Errorf("%w\n\tTry: MONITOR needs the +monitor ACL permission; without it, rely on the SDK reports", err)
	}
	return mon, nil
}
