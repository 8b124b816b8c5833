package hotkeys

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/keyguard/keyguard/internal/audit/inventory"
	"github.com/keyguard/keyguard/internal/audit/live"
	"github.com/keyguard/keyguard/internal/audit/replsync"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/audit/snapshot"
	"github.com/keyguard/keyguard/internal/cli"
	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/internal/resp"
	"github.com/keyguard/keyguard/registry"
	"github.com/redis/go-redis/v9"
)

// SnapshotLFU reads every key's LFU counter from the snapshots the
// masters send over the replication link (keyguard hotkeys --snapshot),
// as keyguard audit --snapshot reads the keys: one fork per master and
// no command per key, where WalkLFU sends OBJECT FREQ for each. A server
// under an LFU policy writes each key's counter into its snapshots as
// OBJECT FREQ would answer it then (decayed to that moment). The masters'
// policies are read first (INFO memory): nodes without LFU counters are
// skipped, and none is asked for a snapshot when no node has them.
// opts.Sample and opts.Rate do not apply (a snapshot holds every key);
// Match and AllDBs do. reg names the keys' templates, as for the audit.
// A name over 1,024 bytes is listed cut to its first 1,024, as the
// audit's lists keep it.
// A snapshot that stopped early (a link lost, ctx ended) returns what was
// read with an error, as WalkLFU does.
func SnapshotLFU(ctx context.Context, rdb redis.UniversalClient, reg *registry.Registry, opts LFUOptions, waiting func(string)) (*LFUResult, error) {
	opts = opts.withDefaults()
	cfg, addrs, masters, db, cluster, err := reachMasters(ctx, rdb)
	if err != nil {
		return nil, err
	}
	nodes := map[string]*LFUNode{}
	lfu := 0
	for _, addr := range masters {
		n := &LFUNode{Addr: addr}
		n.Policy, err = infoPolicy(ctx, cfg, addr)
		switch {
		case err != nil && cluster && resp.Unreachable(err) && ctx.Err() == nil:
			// A master down: the snapshot of the others is read, and
			// its slots are not covered (replsync says so).
			n.Policy, n.Stopped = "unknown", human.OneLine(err.Error())
			nodes[addr] = n
			continue
		case err != nil:
			return nil, err
		}
		if !strings.HasSuffix(n.Policy, "-lfu") {
			n.Skipped = fmt.Sprintf("maxmemory-policy is %s: a snapshot carries LFU counters only under allkeys-lfu or volatile-lfu", n.Policy)
		} else {
			lfu++
		}
		nodes[addr] = n
	}
	res := &LFUResult{Floor: opts.Floor, From: LFUFromSnapshot}
	if lfu == 0 {
		// No counters anywhere: no fork for nothing.
		res.Nodes = byAddr(nodes)
		return res, nil
	}
	if reg == nil {
		if reg, err = cli.EmptyRegistry(); err != nil {
			return nil, err
		}
	}
	t := live.TargetOf(cfg, addrs, db, cluster)
	so := snapshot.Options{DB: db, Match: opts.Match, Inventory: inventory.Options{
		HotKeys: opts.TopK, HotFreqFloor: opts.Floor, SkipFields: true, TopKeys: 1, MaxFindings: 1}}
	if cluster {
		so.DB = 0
	} else if opts.AllDBs {
		so.DB, t.Conn.DB = -1, live.AllDBs
	}
	snap, err := replsync.Run(ctx, reg, replsync.Options{Target: t, Waiting: waiting}, so)
	if err != nil {
		return nil, err
	}
	rep := snap.Report
	res.Coverage = rep.Coverage
	stopped := map[string][]string{}
	for _, s := range snap.Stopped {
		stopped[s.Node] = append(stopped[s.Node], s.Reason)
	}
	if cov := rep.Coverage; cov != nil {
		for _, cn := range cov.Nodes {
			n := nodes[cn.Addr]
			if n == nil {
				// A master the Cluster's map named that the client did not.
				n = &LFUNode{Addr: cn.Addr, Policy: "unknown"}
				nodes[cn.Addr] = n
			}
			for _, d := range cn.DBs {
				n.Sampled += int(d.Counted)
			}
			n.Whole = len(stopped[cn.Addr]) == 0 && !slices.ContainsFunc(cn.DBs, func(d report.CoverageDB) bool { return !d.Complete })
			if r := stopped[cn.Addr]; len(r) > 0 {
				n.Stopped = human.OneLine(strings.Join(r, "; "))
			}
		}
	}
	for _, n := range nodes {
		if n.Skipped != "" {
			n.Whole, n.Sampled = false, 0
		}
	}
	res.Nodes = byAddr(nodes)
	if rep.State != nil {
		for _, h := range rep.State.Hot {
			if n := nodes[h.Node]; n != nil && n.Skipped != "" {
				continue
			}
			res.Keys = append(res.Keys, LFUKey{Key: string(h.Key), DB: h.DB, Freq: h.Freq, Node: h.Node})
		}
	}
	res.keepTop(opts)
	if !snap.Complete {
		var errs []error
		if cov := rep.Coverage; cov != nil {
			for _, g := range cov.NotCovered {
				what := g.Node
				if g.Slots != "" {
					what = "slots " + g.Slots
				}
				errs = append(errs, fmt.Errorf("%s not covered: %s", what, g.Reason))
			}
		}
		if len(errs) == 0 {
			errs = append(errs, stopErr(ctx))
		}
		return res, errors.Join(errs...)
	}
	return res, nil
}

// stopErr is why a snapshot stopped early without a gap in its coverage:
// ctx ended, or its link did.
func stopErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return errors.New("the snapshot stopped before its end")
}

// infoPolicy reads a node's maxmemory-policy from INFO memory: the
// snapshot's user needs no CONFIG.
func infoPolicy(ctx context.Context, cfg resp.Config, addr string) (string, error) {
	c, err := resp.Dial(ctx, cfg, addr, resp.Session{Name: "keyguard-hotkeys"})
	if err != nil {
		return "", err
	}
	defer c.Close()
	text, err := c.Simple(ctx, "INFO", "memory")
	if err != nil {
		return "", fmt.Errorf("%s: INFO memory: %w", addr, err)
	}
	return live.InfoField(text, "maxmemory_policy"), nil
}

// byAddr lists nodes in the order of their addresses.
func byAddr(nodes map[string]*LFUNode) []LFUNode {
	list := make([]LFUNode, 0, len(nodes))
	for _, n := range nodes {
		list = append(list, *n)
	}
	slices.SortFunc(list, func(a, b LFUNode) int { return strings.Compare(a.Addr, b.Addr) })
	return list
}
