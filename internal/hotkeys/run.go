package hotkeys

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/hotkey"
	"github.com/keyguard/keyguard/internal/audit/live"
	"github.com/keyguard/keyguard/internal/cli"
	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/internal/redisconn"
	"github.com/keyguard/keyguard/internal/resp"
	"github.com/keyguard/keyguard/registry"
	"github.com/redis/go-redis/v9"
)

// RunOptions are what keyguard hotkeys runs with.
type RunOptions struct {
	Registry *registry.Registry
	Target   *redisconn.Target
	Report   ReportOptions // Window is also how far back the SDK reports are read
	NoLFU    bool          // skip the OBJECT FREQ walk
	LFU      LFUOptions
	// Snapshot reads the LFU counters from the masters' snapshots
	// (SnapshotLFU) instead of OBJECT FREQ key by key.
	Snapshot  bool
	Monitor   MonitorOptions // Duration 0: no MONITOR sample
	Format    string         // text or json
	Out       string
	Threshold finding.Severity
}

// Run lists the hot keys of a server, merged from the services' SDK
// reports (hotkey.Detector), OBJECT FREQ of every key under an LFU policy
// and, when asked, a bounded MONITOR sample whose cost is measured. It
// writes the report and returns cli.ErrFindings when a finding reaches
// the threshold, or an error naming what was not observed.
func Run(ctx context.Context, e *cli.Env, o RunOptions) error {
	target := o.Target
	rdb, err := redisconn.Connect(ctx, target)
	if err != nil {
		return err
	}
	defer rdb.Close()
	reps, err := hotkey.ReadReports(ctx, rdb, time.Now().Add(-o.Report.Window))
	var unread error // the SDK reports could not be read: the report holds the other sources
	switch {
	case err != nil && (o.NoLFU || strings.Contains(err.Error(), "NOPERM") || ctx.Err() != nil):
		return fmt.Errorf("%w\n\tTry: check that the user may read %s* (HGETALL, ZRANGE)", err, hotkey.RecordPrefix)
	case err != nil:
		unread = err
	}
	var lfu *LFUResult
	var interrupted error
	if !o.NoLFU {
		lo := o.LFU
		// Every key --top lists, and every hot key a finding (HotKept of them at least).
		lo.TopK = max(lo.TopK, o.Report.Top, HotKept)
		lo.Hot = cmp.Or(lo.Hot, o.Report.MinFreq)
		// As the audit: every database that holds keys unless the URL names one.
		lo.AllDBs = lo.AllDBs || !target.DBSet && !target.Cluster
		if o.Snapshot {
			waiting := func(why string) { fmt.Fprintf(e.Stderr, "keyguard hotkeys: %s\n", why) }
			lfu, err = SnapshotLFU(ctx, rdb, o.Registry, lo, waiting)
			if err != nil && lfu == nil {
				return err // replsync's errors say what to grant, or to go without --snapshot
			}
		} else {
			lfu, err = WalkLFU(ctx, rdb, lo)
		}
		switch {
		case err != nil && ctx.Err() != nil && lfu != nil:
			// Interrupted: the report lists what was read, each node saying where it stopped.
			interrupted = fmt.Errorf("interrupted: the report covers the keys read so far: %w", ctx.Err())
			ctx = context.WithoutCancel(ctx)
		case err != nil && lfu != nil:
			// A part not covered (a node lost): the report lists what was read and says what was not.
			what := "OBJECT FREQ walk"
			if o.Snapshot {
				what = "snapshot"
			}
			interrupted = fmt.Errorf("%s incomplete: the report covers the keys read so far: %w", what, err)
		case errors.As(err, new(*resp.ConnectError)):
			return live.ConnectFailure(err, target.Opts.TLSConfig != nil) // a node refused the credentials or cannot be reached
		case err != nil && strings.Contains(err.Error(), "NOPERM"):
			return fmt.Errorf("%w\n\tTry: give the user the permissions of keyguard-hotkeys in docs/audit-acl.md (+select walks the databases other than 0; --db N walks one), or --no-lfu to skip OBJECT FREQ", err)
		case err != nil:
			return fmt.Errorf("%w\n\tTry: --no-lfu to skip OBJECT FREQ, or --rate N to slow the walk", err)
		}
	}
	var mon *MonitorResult
	if o.Monitor.Duration > 0 && interrupted == nil {
		o.Monitor.TopK = max(o.Monitor.TopK, o.Report.Top, hotkey.DefaultTopK)
		if mon, err = monitorMasters(ctx, e, target, rdb, o.Monitor); err != nil {
			return err
		}
	}
	ro := o.Report
	ro.DB = target.Opts.DB // where the SDK reports were read
	rep := BuildReport(o.Registry, reps, lfu, mon, ro)
	if unread != nil {
		rep.SDK.Unread = unread.Error()
		if interrupted == nil {
			interrupted = fmt.Errorf("the services' hot-key reports (%s*) could not be read: %w; the report holds the LFU counters alone", hotkey.RecordPrefix, unread)
		}
	}
	out, err := cli.OpenOutput(e, "--out", o.Out)
	if err != nil {
		return err
	}
	partial := ""
	if interrupted != nil {
		partial = out.KeepExisting() // a partial report goes beside a complete one
	}
	if o.Format == "json" {
		err = rep.WriteJSON(out)
	} else {
		err = rep.WriteText(out)
	}
	err = out.Finish(err)
	if err != nil {
		return err
	}
	if interrupted != nil && partial != "" {
		return fmt.Errorf("%w; partial report in %s", interrupted, partial)
	}
	if interrupted != nil {
		return interrupted
	}
	if lost := mon.NotObserved(); len(lost) > 0 {
		// The report is written; the part of the sample not seen is an error.
		return fmt.Errorf("MONITOR sample incomplete: not observed on %s; run it again once the server answers", strings.Join(lost, "; "))
	}
	return cli.Verdict(rep.Findings, o.Threshold)
}

// monitorMasters runs the MONITOR sample on every master of rdb.
func monitorMasters(ctx context.Context, e *cli.Env, target *redisconn.Target, rdb redis.UniversalClient, mo MonitorOptions) (*MonitorResult, error) {
	addrs, err := MasterAddrs(ctx, rdb)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(e.Stderr, "keyguard hotkeys: MONITOR on %s for %s, after measuring the throughput without it…\n", human.Plural(len(addrs), "master"), registry.FormatDuration(mo.Duration))
	mon, err := Monitor(ctx, target.Opts, addrs, mo)
	if err != nil {
		return nil, fmt.Errorf("%w\n\tTry: MONITOR needs the +monitor ACL permission; without it, rely on the SDK reports", err)
	}
	return mon, nil
}
