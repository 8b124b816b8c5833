package live

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"maps"
	"net"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/keyguard/keyguard/internal/audit/inventory"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/internal/progress"
	"github.com/keyguard/keyguard/internal/resp"
	"github.com/keyguard/keyguard/internal/topology"
	"github.com/keyguard/keyguard/registry"
)

// maxAggregators bounds the aggregators of a run: each keeps up to
// MaxFindings per rule, and one keeps up with several nodes.
const maxAggregators = 4

// Defaults of Options.
const (
	DefaultCount         = 1000
	DefaultMemorySamples = 5
	DefaultRetryFor      = 10 * time.Second
	DefaultIOTimeout     = 30 * time.Second
	DefaultProgressEvery = 250 * time.Millisecond

	// AllSamples as Options.MemorySamples sends MEMORY USAGE … SAMPLES 0:
	// exact sizes of collections, at O(elements) per key.
	AllSamples = -1

	// AllDBs as Conn.DB walks every database INFO keyspace lists with
	// keys (a Cluster has only database 0).
	AllDBs = -1
)

// How much a field-name probe reads.
const (
	fieldProbeCount = 32   // HRANDFIELD key 32: distinct fields, all of a small hash
	maxJSONKeys     = 32   // top-level JSON keys taken from one string value
	jsonPrefixBytes = 4096 // GETRANGE key 0 4095: enough for the top-level keys of most JSON values
)

// Conn is how to reach the server: its address (a Cluster seed with
// Target.Cluster), the credentials and TLS every node's connection uses,
// and the database to walk (AllDBs: every database that holds keys).
type Conn struct {
	Addr               string
	Network            string // "tcp" when empty, or "unix" (Addr is then the socket's path)
	Username, Password string
	DB                 int
	TLS                *tls.Config // nil: plain TCP (rediss:// sets it)
	DialTimeout        time.Duration
	// Dialer, when set, opens the TCP connections (a proxy, a test).
	Dialer func(ctx context.Context, network, addr string) (net.Conn, error)
}

// Config is the connection settings as the RESP client takes them.
func (c *Conn) Config() resp.Config {
	return resp.Config{Username: c.Username, Password: c.Password, Network: c.Network, TLS: c.TLS, DialTimeout: c.DialTimeout, Dialer: c.Dialer}
}

// dial opens one connection of the audit to addr.
func (r *run) dial(ctx context.Context, addr string, s resp.Session) (*resp.Conn, error) {
	s.Name = cmp.Or(r.name, "keyguard-audit")
	return resp.Dial(ctx, r.t.Conn.Config(), addr, s)
}

// nodeInfo runs INFO (the default sections: server, replication, memory,
// keyspace, cluster …).
func nodeInfo(ctx context.Context, c *resp.Conn) (info, error) {
	s, err := c.Simple(ctx, "INFO")
	if err != nil {
		return nil, err
	}
	return parseInfo(s), nil
}

// loadedInfo returns in, INFO of the server on c, or, while that server
// is loading its dataset (just started, or a replica in a full sync: INFO
// keyspace then counts the keys loaded so far, and the walk's commands
// answer LOADING), INFO again once it has loaded, asking up to wait. tell,
// when set, is told once how far the load is (percent).
func loadedInfo(ctx context.Context, c *resp.Conn, in info, wait time.Duration, tell func(perc string)) (info, error) {
	deadline := time.Now().Add(wait)
	backoff := 20 * time.Millisecond
	for told := false; in["loading"] == "1"; {
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("still loading its dataset after %v (%s%% loaded): audit it once it has loaded", wait, in["loading_loaded_perc"])
		}
		if tell != nil && !told {
			told = true
			tell(in["loading_loaded_perc"])
		}
		if err := sleepCtx(ctx, backoff); err != nil {
			return nil, err
		}
		backoff = min(2*backoff, time.Second)
		var err error
		if in, err = nodeInfo(ctx, c); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// WaitLoaded waits while the server on c loads its dataset, as
// loadedInfo, for a caller that has not read its INFO. An INFO that fails
// says nothing: the caller's next command will.
func WaitLoaded(ctx context.Context, c *resp.Conn, wait time.Duration, tell func(perc string)) error {
	in, err := nodeInfo(ctx, c)
	if err != nil {
		return nil
	}
	_, err = loadedInfo(ctx, c, in, wait, tell)
	return err
}

// Target is what to audit.
type Target struct {
	Conn Conn
	// Cluster walks every master of the Cluster that Conn.Addr and Seeds
	// belong to.
	Cluster bool
	Seeds   []string // more Cluster seeds, tried after Conn.Addr
	// Display is the target as the report names it: a URL without its
	// password.
	Display string
	// Master, for a server named through Sentinels, asks them where the
	// master is now: a server that goes down during the walk while the
	// Sentinels name another (a failover) stops the walk at once, saying
	// so, rather than being waited for. nil otherwise.
	Master func(ctx context.Context) (string, error)
}

// Options tune a run. The zero value audits every key at full speed.
type Options struct {
	Count         int    // SCAN COUNT; default 1000
	Match         string // SCAN MATCH pattern; "" every key
	MemorySamples int    // MEMORY USAGE SAMPLES; default 5; AllSamples for exact
	Sample        int64  // probe a random subset of about this many keys and extrapolate; 0 every key
	// SampleUniform probes every key of a Sample with the same
	// probability instead of stratifying by template or family and size
	// (sampler.go): a wider memory margin, kept to compare.
	SampleUniform bool
	Rate          float64 // commands per second across all nodes and connections; 0 no limit
	Replicas      bool    // walk a replica of each master (or of the standalone server) instead
	// ReplicasPrefer walks the master where Replicas finds no replica;
	// without it a master without a replica stops the run before it starts.
	ReplicasPrefer bool
	// CatchUp bounds how long a replica read in its master's stead is
	// waited for to apply its master's writes; default DefaultCatchUp.
	CatchUp time.Duration
	// Waiting, when set, is told why the walk has not begun yet (a
	// replica still applying its master's writes).
	Waiting func(why string)

	// Resume continues the stopped run of a partial report (read back
	// with report.ReadReport): only the nodes it lists as stopped are
	// walked, each from its cursor, and its aggregates are carried over,
	// so the new report covers every key of both runs once.
	Resume *report.Report

	Inventory inventory.Options // MaxFindings, TopKeys, HotKeys…; Sampled and SampleRatio are set by Run

	// Progress, when set, is called every ProgressEvery from a goroutine
	// of Run, and once at the end.
	Progress      func(Progress)
	ProgressEvery time.Duration

	RetryFor  time.Duration // how long a node may fail before it is given up, and a Cluster walk re-plan slots without counting one; default 10s
	IOTimeout time.Duration // bound on one pipeline round trip; default 30s
	Seed      uint64        // seed of the --sample choice; 0 picks one
}

func (o Options) withDefaults() Options {
	if o.Count <= 0 {
		o.Count = DefaultCount
	}
	if o.MemorySamples == 0 {
		o.MemorySamples = DefaultMemorySamples
	}
	if o.RetryFor <= 0 {
		o.RetryFor = DefaultRetryFor
	}
	if o.IOTimeout <= 0 {
		o.IOTimeout = DefaultIOTimeout
	}
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = DefaultProgressEvery
	}
	return o
}

// Progress is a snapshot of a run.
type Progress struct {
	Scanned   int64 // keys SCAN returned so far, all nodes
	Total     int64 // keys on the walked nodes when the run started (0 unknown)
	Nodes     int
	NodesDone int
	Elapsed   time.Duration
	Final     bool // the last update, when the run stops
}

// Rate is keys scanned per second so far.
func (p Progress) Rate() float64 {
	if p.Elapsed <= 0 {
		return 0
	}
	return float64(p.Scanned) / p.Elapsed.Seconds()
}

// ETA estimates the time left from the rate so far; ok is false before
// there is a rate or a total.
func (p Progress) ETA() (d time.Duration, ok bool) {
	r := p.Rate()
	if r <= 0 || p.Total <= 0 {
		return 0, false
	}
	left := max(p.Total-p.Scanned, 0)
	return time.Duration(float64(left) / r * float64(time.Second)), true
}

// Result is the outcome of a run that could start. Complete is false when
// any node stopped early; Stopped says where, and the report carries the
// same.
type Result struct {
	Report   *report.Report
	Complete bool
	Stopped  []report.NodeStop
	Scanned  int64 // keys SCAN returned
	Probed   int64 // keys probed and added (fewer with Sample)
	Vanished int64 // keys gone between SCAN and the probes
}

// ConnectError is a node that could not be reached or refused the
// credentials.
type ConnectError = resp.ConnectError

// PermissionError is an ACL user that lacks commands the audit needs.
type PermissionError struct {
	Addr     string
	Commands []string // e.g. "memory|usage"
	Reply    string   // the server's NOPERM reply
}

func (e *PermissionError) Error() string {
	return fmt.Sprintf("%s: the ACL user may not run %s (%s); grant the rules in docs/audit-acl.md",
		e.Addr, strings.Join(e.Commands, ", "), e.Reply)
}

// Run audits t against reg. It returns an error only when the audit could
// not start (no node reachable, credentials refused, an essential command
// not permitted, a bad Resume list); a run that stops early — ctx
// cancelled, a node lost — returns a Result with Complete false.
func Run(ctx context.Context, reg *registry.Registry, t Target, opts Options) (*Result, error) {
	if t.Conn.Addr == "" {
		return nil, errors.New("audit: Target.Conn.Addr is empty")
	}
	opts = opts.withDefaults()
	started := time.Now()
	r := &run{reg: reg, t: t, opts: opts, lim: newLimiter(opts.Rate), runIDs: map[string]string{}}
	var carry *inventory.Aggregator
	if opts.Resume != nil {
		var err error
		if carry, err = inventory.FromReport(reg, opts.Resume); err != nil {
			return nil, fmt.Errorf("resume: %w", err)
		}
	}
	if t.Cluster && t.Conn.DB > 0 {
		return nil, fmt.Errorf("database %d: a Redis Cluster has only database 0", t.Conn.DB)
	}
	plans, err := r.plan(ctx)
	if err != nil {
		return nil, err
	}
	r.catchUp(ctx, plans)
	if err := r.start(ctx, plans); err != nil {
		return nil, err
	}
	r.sampling()
	agg := r.walkAll(ctx, started)
	if carry != nil && !r.fresh {
		agg.Merge(carry)
	}
	res := r.result(agg, started)
	if opts.Progress != nil {
		opts.Progress(r.progress(started))
	}
	return res, nil
}

// sampling sets the probability each key is probed with (--sample).
func (r *run) sampling() {
	for _, w := range r.walkers {
		r.total += w.total
	}
	n, total := r.opts.Sample, r.total
	if n <= 0 {
		return
	}
	ratio := 1.0
	if total > 0 {
		ratio = min(1, float64(n)/float64(total))
	}
	if ratio >= 1 {
		r.note("--sample %d is at least the keyspace (%d keys): every key was audited", n, total)
		return
	}
	r.ratio = ratio
	r.opts.Inventory.Sampled = true
	r.opts.Inventory.SampleRatio = ratio
	if r.opts.SampleUniform {
		r.note("sampled: each key was probed with probability %.4g (about %d of %d keys); key, byte and TTL counts are extrapolated, findings are those of the sample", ratio, n, total)
	} else {
		r.smp = newSampler(n, total)
		r.opts.Inventory.Weighted = true
		r.note("sampled: about %d of %d keys probed, each with a probability set by its template or family and the sizes seen in it (small families of big keys whole, large families of small keys thinly; docs/audit.md); key, byte and TTL counts are extrapolated, findings are those of the sample", n, total)
	}
	if r.opts.Match != "" {
		r.note("the sample ratio counts every key of the database, not only keys matching %q: fewer keys than asked were probed", r.opts.Match)
	}
}

// walkAll walks every node at once into one aggregation pipeline.
func (r *run) walkAll(ctx context.Context, started time.Time) *inventory.Aggregator {
	r.width = max(len(r.walkers), 1)
	r.pipe = inventory.NewPipeline(r.reg, r.opts.Inventory, max(min(runtime.GOMAXPROCS(0), len(r.walkers), maxAggregators), 1))
	stopProgress := r.progressLoop(started)
	if r.t.Cluster {
		r.walkCluster(ctx, r.startLeft)
	} else {
		r.walkRound(ctx, r.walkers)
	}
	stopProgress()
	return r.pipe.Close()
}

// result makes the report of the run from the walkers' counts and notes.
func (r *run) result(agg *inventory.Aggregator, started time.Time) *Result {
	res := &Result{}
	stopped := slices.Clone(r.stopped)
	for _, w := range r.walkers {
		res.Scanned += w.scannedDone
		res.Probed += w.probed
		res.Vanished += w.vanished.Load()
		if w.stop != nil {
			stopped = append(stopped, *w.stop)
		}
	}
	r.walkNotes()
	slices.SortFunc(stopped, func(a, b report.NodeStop) int { return strings.Compare(a.Node, b.Node) })
	kind := "redis"
	if r.t.Cluster {
		kind = "cluster"
	}
	display := r.t.Display
	if display == "" {
		display = "redis://" + r.t.Conn.Addr
	}
	cov := r.coverage(stopped)
	meta := report.Meta{
		Source:    report.Source{Kind: kind, Target: display, Nodes: nodeCount(cov, stopped)},
		Registry:  r.reg.File,
		StartedAt: started,
		Duration:  time.Since(started),
		Complete:  len(stopped) == 0 && len(cov.NotCovered) == 0,
		Stopped:   stopped,
		Notes:     dedupe(r.notes),
	}
	if p := r.opts.Resume; p != nil && !r.fresh {
		meta.Source.Nodes = max(meta.Source.Nodes, p.Source.Nodes)
		meta.StartedAt = p.StartedAt
		meta.Duration += time.Duration(p.DurationMS) * time.Millisecond
	}
	res.Report = agg.Report(meta)
	rep := res.Report
	if r.smp != nil && rep.Sample != nil {
		// The larger of the two margins: the strata's, and the
		// aggregation's from the probed keys alone.
		rep.Sample.BytesMargin = max(rep.Sample.BytesMargin, r.smp.margin())
	}
	if p := r.opts.Resume; p != nil && !r.fresh {
		cov = report.JoinCoverage(p.Coverage, cov)
	}
	rep.Coverage = cov
	if rep.State != nil {
		rep.State.RunIDs = map[string]string{}
		if p := r.opts.Resume; p != nil && !r.fresh && p.State != nil {
			maps.Copy(rep.State.RunIDs, p.State.RunIDs)
		}
		for _, n := range cov.Nodes {
			if n.RunID != "" {
				rep.State.RunIDs[n.Addr] = n.RunID
			}
		}
	}
	res.Complete = meta.Complete
	res.Stopped = stopped
	return res
}

// nodeCount is the nodes walked or meant to be.
func nodeCount(c *report.Coverage, stopped []report.NodeStop) int {
	seen := map[string]bool{}
	for _, n := range c.Nodes {
		seen[n.Addr] = true
	}
	for _, s := range stopped {
		if s.Node != "" {
			seen[s.Node] = true
		}
	}
	return len(seen)
}

// unreadableMark is in the reason of a part not covered because the ACL
// user may not read its keys.
const unreadableMark = "not readable by this ACL user (NOPERM on the key)"

// coverage is what the run's walkers covered, and what they and the
// nodes that could not start did not.
func (r *run) coverage(stopped []report.NodeStop) *report.Coverage {
	c := &report.Coverage{}
	byAddr := map[string]int{}
	counted := map[string]bool{} // nodes that counted Cluster slots
	for _, w := range r.walkers {
		i, ok := byAddr[w.addr]
		if !ok {
			i = len(c.Nodes)
			byAddr[w.addr] = i
			c.Nodes = append(c.Nodes, report.CoverageNode{Addr: w.addr, Role: w.plan.role, RunID: w.runID})
		}
		n := &c.Nodes[i]
		done := w.finished.Load() && w.stop == nil
		d := report.CoverageDB{DB: w.plan.db, KeysStart: w.total, KeysEnd: w.keysEnd, Counted: w.scannedDone, Complete: done, Unreadable: w.denied.Load()}
		if j := slices.IndexFunc(n.DBs, func(e report.CoverageDB) bool { return e.DB == d.DB }); j >= 0 {
			// The same node walked again for other slots.
			e := &n.DBs[j]
			e.Counted += d.Counted
			e.Unreadable += d.Unreadable
			e.Complete = e.Complete && d.Complete
			if d.KeysEnd >= 0 {
				e.KeysEnd = d.KeysEnd
			}
		} else {
			n.DBs = append(n.DBs, d)
		}
		switch {
		case w.plan.slotList != nil && len(w.done) > 0:
			n.Slots = report.JoinSlotRanges(n.Slots, report.SlotRanges(w.done))
			counted[w.addr] = true
		case done && w.plan.slots != "":
			n.Slots = report.JoinSlotRanges(n.Slots, w.plan.slots)
			counted[w.addr] = true
		}
	}
	for _, s := range stopped {
		g := report.Gap{Node: s.Node, Slots: s.Slots, Reason: s.Reason}
		if !r.t.Cluster && !r.alone {
			g.DB = &s.DB
		}
		c.NotCovered = append(c.NotCovered, g)
	}
	for _, n := range c.Nodes {
		for _, d := range n.DBs {
			if d.Unreadable == 0 {
				continue
			}
			g := report.Gap{Node: n.Addr, Reason: fmt.Sprintf("%s keys %s, in no group: grant it %%R~* (docs/audit-acl.md), or audit only the keys it may read with --match", human.Count(d.Unreadable), unreadableMark)}
			if !r.t.Cluster && !r.alone {
				g.DB = &d.DB
			}
			c.NotCovered = append(c.NotCovered, g)
		}
	}
	if r.t.Cluster || r.alone {
		c.Cluster = r.clusterCoverage(c.Nodes, len(counted))
	}
	c.Finish()
	return c
}

// walkNotes adds what the walkers saw to the run's notes.
func (r *run) walkNotes() {
	var vanished, moved, denied, shrunk int64
	var nonLFU, touches []string
	for _, w := range r.walkers {
		vanished += w.vanished.Load()
		moved += w.moved.Load()
		denied += w.denied.Load()
		r.notes = append(r.notes, w.notes...)
		if w.shrunk {
			shrunk++
		}
		if !w.lfu {
			nonLFU = append(nonLFU, fmt.Sprintf("%s (%s)", w.addr, cmp.Or(w.policy, "maxmemory-policy not reported")))
		}
		if w.touches {
			touches = append(touches, w.addr)
		}
	}
	// A node walked in several rounds (a Cluster's slots walked again)
	// has a walker for each: named once.
	nonLFU, touches = dedupe(nonLFU), dedupe(touches)
	if len(nonLFU) > 0 {
		r.note("hot-key data unavailable on %s: maxmemory-policy is not LFU, and OBJECT FREQ needs allkeys-lfu or volatile-lfu; the SDK's meter (keyguard hotkeys) finds hot keys without it", listNodes(nonLFU))
	}
	if len(touches) > 0 {
		r.note("no CLIENT NO-TOUCH on %s (Redis < 7.2, or not permitted): element counts and field probes refreshed the LRU/LFU clock of the keys they read", listNodes(touches))
	}
	if vanished > 0 {
		r.note("%d keys vanished between SCAN and the probes (expired or deleted) and were skipped", vanished)
	}
	if r.rewalked > 0 {
		r.note("the Cluster changed during the audit (a failover or slot migration): %d slots were walked again on their owner of the moment; each slot was counted once, whole", r.rewalked)
	}
	if moved > 0 && !r.t.Cluster {
		r.note("%d keys answered MOVED or ASK (slots migrating during the audit) and were skipped on the old node", moved)
	}
	if shrunk > 0 {
		r.note("the key table of %d node(s) shrank during the walk: SCAN may return a key twice after a shrink, so a few keys may be counted twice", shrunk)
	}
	if r.opts.Match != "" {
		r.note("only keys matching %q were audited", r.opts.Match)
	}
	if p := r.opts.Resume; p != nil && !r.fresh {
		r.notes = append(r.notes, p.Notes...)
		r.note("resumed from an earlier partial report: this report counts its keys and those after its cursors, each once")
	}
}

// run is the state of one Run.
type run struct {
	reg   *registry.Registry
	t     Target
	opts  Options
	name  string // CLIENT SETNAME of its connections; "" keyguard-audit
	lim   *limiter
	ratio float64  // sampling probability; 0 means every key
	smp   *sampler // the stratified sample's; nil: uniform, or every key
	total int64

	walkers []*walker
	stopped []report.NodeStop // nodes that could not start

	width     int       // walkers of the first round: how many share the rate
	startLeft []pending // Cluster slots without a node to walk them at the start
	rewalked  int       // Cluster slots walked again after a topology change

	runIDs  map[string]string // run_id of the nodes planned, by address
	masters int               // Cluster: masters serving slots when the run began
	alone   bool              // a Cluster node audited without Target.Cluster
	fresh   bool              // Resume's nodes restarted since: nothing is carried over

	// The aggregation: a few aggregators whatever the number of nodes
	// (each keeps a full set of capped findings), fed batches by every
	// walker.
	pipe *inventory.Pipeline

	mu    sync.Mutex
	notes []string
	// replicas is what --replicas learnt of the replicas, by address.
	replicas map[string]replicaSeen
}

// replicaSeen is what --replicas learnt of the replica at an address:
// the node ID it answered as there, or why it could not be read (its
// listed address leads nowhere, or to another node).
type replicaSeen struct{ id, why string }

func (r *run) note(format string, args ...any) {
	r.mu.Lock()
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
	r.mu.Unlock()
}

// nodePlan is one database of one node to walk.
type nodePlan struct {
	addr     string
	db       int
	role     string // master or replica
	slots    string // a Cluster node audited alone: the slot ranges of its master
	readonly bool   // a Cluster replica: send READONLY
	cursor   string // where to start

	// A Cluster walk: the slots to count, in order; for a replica, its
	// master's id.
	slotList []int
	masterID string

	// of is the master of a replica read in its stead (--replicas): the
	// replica is walked once it has applied the master's writes.
	of string
}

// plan finds the nodes and databases to walk: the server (or one of its
// replicas), or every master (or one replica of each) of the Cluster;
// then applies Resume.
func (r *run) plan(ctx context.Context) ([]nodePlan, error) {
	if r.t.Cluster {
		return r.clusterPlan(ctx)
	}
	plans, err := r.serverPlan(ctx)
	if err != nil {
		return nil, err
	}
	for i := range plans {
		plans[i].cursor = "0"
	}
	if r.opts.Resume == nil {
		return plans, nil
	}
	if why := r.restartedSince(r.opts.Resume); why != "" {
		// SCAN cursors do not hold across a restart, and the earlier
		// counts cannot be told apart by node: walk everything again.
		r.fresh = true
		r.note("%s; nothing of the earlier report was carried over and every node was walked again from the start", why)
		return plans, nil
	}
	type nodeDB struct {
		addr string
		db   int
	}
	byNode := map[nodeDB]int{}
	nodes := map[string]bool{}
	for i, p := range plans {
		byNode[nodeDB{p.addr, p.db}] = i
		nodes[p.addr] = true
	}
	var out []nodePlan
	for _, s := range r.opts.Resume.Stopped {
		var p nodePlan
		if i, ok := byNode[nodeDB{s.Node, s.DB}]; ok {
			p = plans[i]
		} else if nodes[s.Node] {
			// A database that held no keys now: walk it from the stop's
			// cursor all the same.
			p = nodePlan{addr: s.Node, db: s.DB}
		} else {
			var have []string
			for _, p := range plans {
				have = append(have, p.addr)
			}
			return nil, fmt.Errorf("resume: node %s of the earlier report is not among the nodes walked now (%s); the topology changed: run the audit again without --resume", s.Node, strings.Join(dedupe(have), ", "))
		}
		p.cursor = s.Cursor
		if p.cursor == "" {
			p.cursor = "0"
		}
		if _, ok := resp.ParseInt([]byte(p.cursor)); !ok {
			return nil, fmt.Errorf("resume: node %s: cursor %q is not a SCAN cursor", s.Node, s.Cursor)
		}
		out = append(out, p)
	}
	return out, nil
}

// serverPlan plans a standalone server (or its replica): one plan per
// database it walks.
func (r *run) serverPlan(ctx context.Context) ([]nodePlan, error) {
	addr := r.t.Conn.Addr
	in, err := r.info(ctx, addr)
	if err != nil {
		return nil, err
	}
	of := "" // the master, when its replica is walked in its stead
	if r.opts.Replicas {
		listed := in.replicas()
		rep, repIn, why := r.pickReplica(ctx, in, listed)
		switch {
		case in["role"] == "slave":
			r.note("--replicas: %s is itself a replica; it was walked", addr)
		case len(listed) == 0 && !r.opts.ReplicasPrefer:
			return nil, fmt.Errorf("--replicas: %s has no online replica to read; audit the master without --replicas, or pass --replicas=prefer to walk the master when there is no replica", addr)
		case len(listed) == 0:
			r.note("--replicas=prefer: %s has no online replica; the master itself was walked", addr)
		case rep == "" && !r.opts.ReplicasPrefer:
			return nil, fmt.Errorf("--replicas: no replica of %s could be read: %s. %s; or pass --replicas=prefer to walk the master when no replica can be read, or drop --replicas", addr, strings.Join(why, "; "), ListedAddressHint)
		case rep == "":
			r.note("--replicas=prefer: no replica of %s could be read (%s); the master itself was walked", addr, strings.Join(why, "; "))
		default:
			addr, of, in = rep, addr, repIn
			r.note("--replicas: walked replica %s of %s; writes made during the walk reach a replica a moment after its master", rep, r.t.Conn.Addr)
			if len(why) > 0 {
				r.note("--replicas: %s, listed first, could not be read: %s", human.Plural(int64(len(why)), "replica"), strings.Join(why, "; "))
			}
		}
	}
	r.runIDs[addr] = in["run_id"]
	role := "master"
	if in["role"] == "slave" {
		role = "replica"
	}
	if why := in.stale(addr); why != "" {
		r.note("%s", why)
	}
	var plans []nodePlan
	for _, db := range r.dbsOf(in) {
		plans = append(plans, nodePlan{addr: addr, db: db, role: role, of: of})
	}
	r.otherDBs(addr, in)
	if in["cluster_enabled"] == "1" {
		r.shard(ctx, addr, plans)
	}
	return plans, nil
}

// ListedAddressHint is what to do when a replica cannot be reached at the
// address its master lists.
const ListedAddressHint = "A master lists each replica at the address it sees the replica connect from and the port the replica announces: where that address does not lead to the replica from here (NAT, containers, another network), set replica-announce-ip and replica-announce-port on the replica"

// pickReplica returns the first of the master's listed replicas that
// answers and is its replica, with its INFO; why says, for each listed
// before it (or all, when none is), why it was passed over.
func (r *run) pickReplica(ctx context.Context, master info, listed []string) (addr string, in info, why []string) {
	if master["role"] == "slave" {
		return "", nil, nil
	}
	return pickReplica(master, listed, func(a string) (info, error) { return r.info(ctx, a) })
}

// PickReplica returns the first of listed, the online replicas of the
// master whose INFO is masterText, that ask (INFO of an address) shows to
// be its replica; why says, for each passed over, why.
func PickReplica(masterText string, listed []string, ask func(addr string) (string, error)) (addr string, why []string) {
	addr, _, why = pickReplica(parseInfo(masterText), listed, func(a string) (info, error) {
		text, err := ask(a)
		return parseInfo(text), err
	})
	return addr, why
}

func pickReplica(master info, listed []string, ask func(addr string) (info, error)) (addr string, in info, why []string) {
	for _, rep := range listed {
		in, err := ask(rep)
		if err != nil {
			why = append(why, rep+": "+err.Error())
			continue
		}
		if not := notItsReplica(master, in); not != "" {
			why = append(why, rep+" answers, but "+not)
			continue
		}
		return rep, in, why
	}
	return "", nil, why
}

// shard reads the Cluster a node audited alone belongs to: how many
// masters it has and which slots the node holds, for the report to say
// how much of the Cluster it covers.
func (r *run) shard(ctx context.Context, addr string, plans []nodePlan) {
	r.alone = true
	c, err := r.dial(ctx, addr, resp.Session{Timeout: r.opts.IOTimeout})
	if err != nil {
		return
	}
	text, err := c.Simple(ctx, "CLUSTER", "NODES")
	c.Close()
	if err != nil {
		r.note("%s is a Redis Cluster node and was audited alone (CLUSTER NODES: %v); add --cluster to audit every master", addr, err)
		return
	}
	host, _, _ := net.SplitHostPort(addr)
	masters, owned, ok := topology.Alone(parseClusterNodes(text, host))
	r.masters += masters
	if !ok {
		return
	}
	slots := report.SlotRanges(owned)
	for i := range plans {
		plans[i].slots = slots
	}
	r.note("%s is 1 of %d masters of a Redis Cluster and was audited alone: slots %s; add --cluster for all", addr, r.masters, cmp.Or(slots, "none"))
}

// dbsOf is the databases to walk on a node: Conn.DB, or with AllDBs
// every database that holds keys (database 0 when none does).
func (r *run) dbsOf(in info) []int {
	if r.t.Conn.DB != AllDBs || r.t.Cluster {
		return []int{max(r.t.Conn.DB, 0)}
	}
	dbs := in.dbs()
	if len(dbs) == 0 {
		dbs = []int{0}
	}
	return dbs
}

// otherDBs notes a database asked for (--db, or the URL's /N) that held
// no key when the walk began while others did: a wrong number reads as a
// clean, empty keyspace.
func (r *run) otherDBs(addr string, in info) {
	db := r.t.Conn.DB
	if db == AllDBs || r.t.Cluster || in.keys(max(db, 0)) > 0 {
		return
	}
	var held []string
	for _, d := range in.dbs() {
		held = append(held, fmt.Sprintf("%d (%s)", d, human.Plural(in.keys(d), "key")))
	}
	if len(held) == 0 {
		return
	}
	r.note("database %d of %s held no key when the walk began; its keys are in database %s: give that number to --db (or the URL's /N), or neither for every database", max(db, 0), addr, strings.Join(held, ", "))
}

// info dials addr and reads INFO.
func (r *run) info(ctx context.Context, addr string) (info, error) {
	c, err := r.dial(ctx, addr, resp.Session{Timeout: r.opts.IOTimeout})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	in, err := nodeInfo(ctx, c)
	if err != nil {
		var se resp.ServerError
		if errors.As(err, &se) && se.Code() == "NOPERM" {
			return nil, &PermissionError{Addr: addr, Commands: []string{"info"}, Reply: string(se)}
		}
		return nil, fmt.Errorf("%s: INFO: %w", addr, err)
	}
	return in, nil
}

// restartedSince says which node of the resumed report has restarted
// since (another run_id), or "".
func (r *run) restartedSince(prev *report.Report) string {
	was := map[string]string{}
	if prev.State != nil {
		maps.Copy(was, prev.State.RunIDs)
	}
	for _, s := range prev.Stopped {
		old, now := cmp.Or(s.RunID, was[s.Node]), r.runIDs[s.Node]
		if old != "" && now != "" && old != now {
			return fmt.Sprintf("%s restarted since the partial report (run_id %s, now %s): its SCAN cursor no longer holds", s.Node, short(old), short(now))
		}
	}
	return ""
}

// short is the head of a run_id, enough to tell two apart.
func short(id string) string { return id[:min(len(id), 8)] }

// clusterPlan reads the topology and plans every slot served by a master
// on that master (or a replica of it); with Resume only the slots the
// partial report did not count.
func (r *run) clusterPlan(ctx context.Context) ([]nodePlan, error) {
	nodes, err := r.topology(ctx)
	if err != nil {
		return nil, err
	}
	var slots []int
	for _, n := range nodes {
		if n.Has("master") && len(n.Owned) > 0 {
			r.masters++
			slots = append(slots, n.Owned...)
		}
	}
	if r.masters == 0 {
		return nil, errors.New("CLUSTER NODES lists no master serving slots: is the cluster set up (cluster_state:ok)?")
	}
	if p := r.opts.Resume; p != nil {
		slots = slots[:0]
		for _, s := range p.Stopped {
			if !report.ValidSlotRanges(s.Slots) {
				return nil, fmt.Errorf("resume: the partial report's stop of %s names no Cluster slots (it was written by an earlier version, which walked with SCAN cursors); run the audit again without --resume", s.Node)
			}
			slots = append(slots, report.ParseSlotRanges(s.Slots)...)
		}
	}
	if r.opts.Replicas {
		r.probeReplicas(ctx, nodes)
	}
	plans, left := r.assign(slots, nodes)
	for _, l := range left {
		if strings.HasPrefix(l.reason, "--replicas") {
			return nil, errors.New(l.reason)
		}
	}
	r.startLeft = left
	if r.opts.Replicas {
		r.note("--replicas: replicas were walked instead of masters; writes made during the walk reach a replica a moment after its master")
	}
	slices.SortFunc(plans, func(a, b nodePlan) int { return strings.Compare(a.addr, b.addr) })
	return plans, nil
}

// start connects to every planned node and checks what the ACL user may
// run. A node that cannot be reached is an error for a standalone server
// and a stopped node for a Cluster.
func (r *run) start(ctx context.Context, plans []nodePlan) error {
	walkers := make([]*walker, len(plans))
	errs := make([]error, len(plans))
	var wg sync.WaitGroup
	for i, p := range plans {
		wg.Add(1)
		go func() {
			defer wg.Done()
			walkers[i], errs[i] = r.newWalker(ctx, p)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err == nil {
			continue
		}
		for _, w := range walkers {
			if w != nil {
				w.closeConn()
			}
		}
		var pe *PermissionError
		var ce *ConnectError
		switch {
		case errors.As(err, &pe), !r.t.Cluster, errors.As(err, &ce) && ce.Auth, ctx.Err() != nil:
			return err
		}
		r.startLeft = append(r.startLeft, pending{slots: plans[i].slotList, node: plans[i].addr, reason: "node down: unreachable at the start: " + err.Error()})
		walkers[i] = nil
	}
	for _, w := range walkers {
		if w != nil {
			r.walkers = append(r.walkers, w)
		}
	}
	if len(r.walkers) == 0 && len(r.startLeft) > 0 && len(plans) > 0 {
		return fmt.Errorf("no node of the cluster could be reached: %s", r.startLeft[0].reason)
	}
	return nil
}

func (r *run) progress(started time.Time) Progress {
	r.mu.Lock()
	ws := r.walkers
	r.mu.Unlock()
	p := Progress{Total: r.total, Nodes: len(ws), Elapsed: time.Since(started)}
	for _, w := range ws {
		p.Scanned += w.scanned.Load()
		if w.finished.Load() {
			p.NodesDone++
		}
	}
	return p
}

func (r *run) progressLoop(started time.Time) (stop func()) {
	if r.opts.Progress == nil {
		return func() {}
	}
	return progress.Start(r.opts.ProgressEvery, func(final bool) {
		p := r.progress(started)
		p.Final = final
		r.opts.Progress(p)
	})
}

// listNodes names a few nodes and counts the rest.
func listNodes(ns []string) string {
	const show = 3
	if len(ns) <= show {
		return strings.Join(ns, ", ")
	}
	return fmt.Sprintf("%s and %d more nodes", strings.Join(ns[:show], ", "), len(ns)-show)
}

func dedupe(ss []string) []string {
	seen := map[string]bool{}
	out := ss[:0:0]
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// clusterCoverage is the Cluster part of a coverage block: how many of the
// masters were walked (walked of them counted keys), and the slots the
// nodes covered, listed when not all of them.
func (r *run) clusterCoverage(nodes []report.CoverageNode, walked int) *report.ClusterCoverage {
	cl := &report.ClusterCoverage{Masters: r.masters, Walked: min(walked, max(r.masters, 1))}
	var got []int
	for _, n := range nodes {
		got = append(got, report.ParseSlotRanges(n.Slots)...)
	}
	slices.Sort(got)
	got = slices.Compact(got)
	cl.Slots = len(got)
	if cl.Slots < report.ClusterSlots {
		cl.Counted = report.SlotRanges(got)
	}
	return cl
}
