package main

import (
	"fmt"

	"github.com/keyguard/keyguard/internal/audit/inventory"
	"github.com/keyguard/keyguard/internal/audit/live"
	"github.com/keyguard/keyguard/internal/audit/replsync"
	"github.com/keyguard/keyguard/internal/audit/snapshot"
	"github.com/keyguard/keyguard/internal/cli"
	"github.com/keyguard/keyguard/internal/redisconn"
)

// aggregateFlags are the flags of the aggregation, shared by the live
// audit (audit, serve) and the snapshot audit (rdb).
type aggregateFlags struct {
	maxFindings, top, hot int
	fields                bool
}

func addAggregateFlags(fs *cli.FlagSet, a *aggregateFlags) {
	fs.IntVar(&a.maxFindings, "max-findings", inventory.DefaultMaxFindings, "findings listed per rule; the report counts the rest")
	fs.IntVar(&a.top, "top", inventory.DefaultTopKeys, "largest keys listed")
	fs.IntVar(&a.hot, "hot", inventory.DefaultHotKeys, "hot-key findings: at most the `N` keys with the highest LFU counters (when the server keeps them)")
	fs.BoolVar(&a.fields, "fields", true, "read the field names of every hash and JSON value (the schema, mixed-schema and value-format rules); --fields=false skips them: faster, those rules unchecked")
}

// options are the aggregation's options.
func (a *aggregateFlags) options() inventory.Options {
	return inventory.Options{MaxFindings: a.maxFindings, TopKeys: a.top, HotKeys: a.hot, SkipFields: !a.fields}
}

// check refuses values no aggregation can take.
func (a *aggregateFlags) check() error {
	switch {
	case a.maxFindings < 0, a.top < 0:
		return cli.Usagef("--max-findings and --top cannot be negative")
	case a.hot < 1:
		return cli.Usagef("--hot must be 1 or more (the hot keys listed)")
	}
	return nil
}

// walkFlags are the flags of a live audit's walk, shared by audit and
// serve (which schedules audits).
type walkFlags struct {
	aggregateFlags
	count, memSamples, db int
	match                 string
	sample                int64
	rate                  float64
	replicas              replicasFlag
	snapshot              bool
	fs                    *cli.FlagSet // which flags were given
}

// replicasFlag is --replicas: a boolean flag that also takes "prefer"
// (walk the master where there is no replica).
type replicasFlag string

func (f *replicasFlag) String() string { return string(*f) }

func (f *replicasFlag) Set(v string) error {
	switch v {
	case "true", "1":
		*f = "true"
	case "false", "0", "":
		*f = ""
	case "prefer":
		*f = "prefer"
	default:
		return fmt.Errorf("want true, false or prefer, got %q", v)
	}
	return nil
}

func (f *replicasFlag) IsBoolFlag() bool { return true }

func newWalkFlags(fs *cli.FlagSet) *walkFlags {
	w := &walkFlags{fs: fs}
	addAggregateFlags(fs, &w.aggregateFlags)
	fs.IntVar(&w.count, "count", live.DefaultCount, "SCAN COUNT: keys asked for per batch")
	fs.StringVar(&w.match, "match", "", "audit only keys matching this SCAN `pattern` (glob)")
	fs.IntVar(&w.memSamples, "memory-samples", live.DefaultMemorySamples, "MEMORY USAGE SAMPLES for collections; 0 = every element (exact, slow on big keys)")
	fs.Int64Var(&w.sample, "sample", 0, "probe a random subset of about `N` keys and extrapolate (marked as an estimate); 0 = every key")
	fs.Float64Var(&w.rate, "rate", 0, "at most `OPS` commands per second, all nodes together; 0 = no limit")
	fs.IntVar(&w.db, "db", -1, "walk database `N` only (default: the URL's, else every database that holds keys)")
	fs.Var(&w.replicas, "replicas", "walk a replica of each master instead of the master (an error where there is none); --replicas=prefer walks the master there")
	fs.BoolVar(&w.snapshot, "snapshot", false, "audit the snapshot each node sends a new replica (SYNC) instead of walking: one fork per node, no command per key; needs +replconf +sync (docs/audit.md)")
	return w
}

// check refuses values no walk can take.
func (w *walkFlags) check() error {
	switch {
	case w.count <= 0:
		return cli.Usagef("--count must be positive")
	case w.memSamples < 0:
		return cli.Usagef("--memory-samples must be 0 (exact) or positive")
	case w.sample < 0, w.rate < 0:
		return cli.Usagef("--sample and --rate cannot be negative")
	}
	if w.snapshot {
		for _, f := range []string{"sample", "rate", "count", "memory-samples"} {
			if w.fs.IsSet(f) {
				return cli.Usagef("--%s walks the keys; --snapshot reads the server's snapshot instead: drop one of them", f)
			}
		}
	}
	return w.aggregateFlags.check()
}

// snapshotOptions are --snapshot's: which nodes send their snapshot, and
// what of it the audit reads.
func (w *walkFlags) snapshotOptions(target live.Target) (replsync.Options, snapshot.Options) {
	so := snapshot.Options{DB: target.Conn.DB, Match: w.match, Inventory: w.aggregateFlags.options()}
	if so.DB == live.AllDBs {
		so.DB = -1
	}
	return replsync.Options{Target: target, Replicas: w.replicas != "", ReplicasPrefer: w.replicas == "prefer"}, so
}

// target is the audit's target: the --redis URL with --db applied.
func (w *walkFlags) target(tgt *redisconn.Target) (live.Target, error) {
	conn := auditConn(tgt.Opts)
	if w.db >= 0 {
		if tgt.Cluster && w.db != 0 {
			return live.Target{}, cli.Usagef("--db %d: a Redis Cluster has only database 0", w.db)
		}
		conn.DB = w.db
	} else if !tgt.DBSet && !tgt.Cluster {
		conn.DB = live.AllDBs
	}
	t := live.Target{Conn: conn, Cluster: tgt.Cluster, Seeds: tgt.Addrs[1:], Display: tgt.Display}
	if tgt.Sentinel != nil {
		t.Master = tgt.MasterAddr
	}
	return t, nil
}

// options are the walk's audit options.
func (w *walkFlags) options() live.Options {
	o := live.Options{
		Count:          w.count,
		Match:          w.match,
		MemorySamples:  w.memSamples,
		Sample:         w.sample,
		Rate:           w.rate,
		Replicas:       w.replicas != "",
		ReplicasPrefer: w.replicas == "prefer",
		Inventory:      w.aggregateFlags.options(),
	}
	if w.memSamples == 0 {
		o.MemorySamples = live.AllSamples
	}
	return o
}
