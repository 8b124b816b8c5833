package migrate

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/audit/live"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/glob"
	"github.com/keyguard/keyguard/internal/keyslot"
	"github.com/keyguard/keyguard/internal/pace"
	"github.com/keyguard/keyguard/internal/progress"
	"github.com/keyguard/keyguard/internal/resp"
	"github.com/keyguard/keyguard/internal/resp/redisopt"
)

// Options control a Copy, Verify or Cleanup run. The zero value works.
type Options struct {
	// DryRun writes nothing and counts what a run would do.
	DryRun bool
	// Overwrite lets Copy replace new keys that exist. Without it a new key
	// that exists is left alone: a dual-writing service may have put newer
	// data there.
	Overwrite bool
	// KeepTTL makes Copy keep every old key's expiry as it is, even where
	// it breaks the new template's TTL policy (each such key is listed in
	// Result.Warnings). Without it a new key gets the expiry the new
	// template allows: none for a persistent template; the template's TTL
	// for an old key without one; at most the template's longest TTL.
	KeepTTL bool
	// Rate caps keys per second, all masters together; 0 is no limit.
	Rate float64
	// Batch is the SCAN COUNT and the number of keys per pipeline
	// (default 500; smaller when Rate is low, so the pace is even).
	Batch int
	// Match is a SCAN MATCH pattern that narrows the keys (default: the
	// pattern of the old template). Keys must still belong to the template.
	Match string
	// CursorFile makes Copy and Cleanup resumable: the SCAN cursor of every
	// master and the counts are saved there every CheckpointEvery keys and
	// when the run stops, and a run with the same file continues from them.
	CursorFile string
	// CheckpointEvery is how many keys pass between saves (default 10000).
	CheckpointEvery int
	// MaxKeys stops the run, resumably, after about this many keys of the
	// template (whole SCAN batches); 0 is no limit.
	MaxKeys int64
	// TTLTolerance is how far the expiries of an old and a new key may be
	// apart and still verify (default 1s).
	TTLTolerance time.Duration
	// MaxMismatches caps the mismatches Verify lists (default 1000); the
	// rest are counted.
	MaxMismatches int
	// Grace is how long Cleanup keeps an old key it deleted across Cluster
	// slots as a tombstone that Restore can bring back (default 1h).
	Grace time.Duration
	// Progress, when set, is called from one goroutine every ProgressEvery
	// (default 200ms) and once at the end.
	Progress      func(Progress)
	ProgressEvery time.Duration
}

// Progress is a snapshot of a running job.
type Progress struct {
	Op     string
	From   string
	Counts Counts
	Total  int64 // keys on the masters (DBSIZE) when the run started: an upper bound of Counts.Scanned
	// Done is the share of the keyspace walked, 0 to 1, from each master's
	// SCAN cursor (its bits reversed are its position in the hash table)
	// weighted by the master's keys.
	Done    float64
	Elapsed time.Duration
	// RunKeys is the template's keys this run handled (Counts holds the
	// earlier runs' too when resumed): the speed is RunKeys over Elapsed.
	RunKeys int64
	Final   bool
}

func (o *Options) defaults() {
	if o.Batch <= 0 {
		o.Batch = 500
	}
	if o.Rate > 0 && float64(o.Batch) > o.Rate/10 {
		o.Batch = max(1, int(o.Rate/10))
	}
	if o.CheckpointEvery <= 0 {
		o.CheckpointEvery = 10000
	}
	if o.TTLTolerance <= 0 {
		o.TTLTolerance = time.Second
	}
	if o.MaxMismatches <= 0 {
		o.MaxMismatches = 1000
	}
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = 200 * time.Millisecond
	}
}

// DefaultGrace is Options.Grace's default.
const DefaultGrace = time.Hour

// pair is an old key of the template and its new key; for Restore, an
// old key and its tombstone (in new) with the old key's expiry.
type pair struct {
	old, new string
	same     bool // one node can COPY: a standalone server, or one Cluster slot
	deadline int64
	// tomb, for Cleanup, is the old key's tombstone found by the walk (the
	// old key is gone): its new key is checked again against it, with
	// deadline the old key's expiry.
	tomb string
}

// src is the key that holds the old value: the old key, or its tombstone.
func (pr *pair) src() string {
	if pr.tomb != "" {
		return pr.tomb
	}
	return pr.old
}

// batcher does one operation's work on a batch of pairs.
type batcher interface {
	batch(ctx context.Context, pairs []pair, c *Counts) error
}

// job is one run of Copy, Verify or Cleanup over every master.
type job struct {
	op      string
	plan    *Plan
	rdb     redis.UniversalClient
	cluster bool
	opts    Options
	lim     *pace.Limiter
	work    batcher
	total   int64
	nodes   []*node // in the order of ps.Nodes

	keys atomic.Int64 // keys of the template handled by this run, for MaxKeys
	// match, when set, is matched here rather than by the walk: a Cluster
	// cleanup lists every key, to find the tombstones among them.
	match string

	mu        sync.Mutex
	state     *stateFile
	ps        *planState
	sinceSave int
	mism      []Mismatch
	moreMism  int64
	warn      []Mismatch
	moreWarn  int64
	stopped   string
	notes     []string
	// unfinished: keys of batches the run stopped in the middle of,
	// whose writes may have been made without being counted.
	unfinished int64

	cancel   context.CancelFunc // stops the run
	errOnce  sync.Once
	firstErr error
}

func newJob(op string, p *Plan, rdb redis.UniversalClient, opts Options) *job {
	opts.defaults()
	_, cluster := rdb.(*redis.ClusterClient)
	return &job{op: op, plan: p, rdb: rdb, cluster: cluster, opts: opts, lim: pace.New(opts.Rate, opts.Batch)}
}

// run walks every master (every slot of a Cluster, re-planned on its
// owner when a failover or a migration moves it; a server's database
// again from the start when the server restarts) with the audit's walk,
// and hands each batch of the template's keys to j.work. The result is
// filled whatever happens; the error says why a run could not finish (not
// an interrupt, not MaxKeys). Complete is true only when every key of the
// walk was handled: the parts not covered are named.
func (j *job) run(ctx context.Context) (*Result, error) {
	start := time.Now()
	res := &Result{Op: j.op, From: j.plan.From, To: j.plan.To, Type: j.plan.Type, Fields: j.plan.Fields, DryRun: j.opts.DryRun, StartedAt: start.UTC()}
	nodes, err := discover(ctx, j.rdb)
	if err != nil {
		res.Stopped = "error: " + err.Error() // before any key: the report says why
		return res, err
	}
	if err := j.loadState(nodes, res); err != nil {
		res.Stopped = "error: " + err.Error()
		return res, err
	}
	if j.ps.Complete {
		j.notes = append(j.notes, fmt.Sprintf("the cursor file %s says this run finished on %s; remove it to run again", j.opts.CursorFile, j.state.SavedAt.Format(time.RFC3339)))
		return j.finish(res, start), nil
	}
	for _, n := range nodes {
		j.total += n.dbsize
	}
	j.nodes = nodes

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	j.cancel = cancel
	stopProgress := j.startProgress(start)
	walked, err := j.walk(runCtx)
	if err != nil {
		j.fail(err)
	}
	if walked != nil {
		res.Coverage = walked.Coverage
		j.notes = append(j.notes, walked.Notes...)
		j.mu.Lock()
		ns := j.ps.Nodes[0]
		ns.Done = walked.Complete
		if j.cluster && walked.Complete {
			ns.Slots = "0-16383"
		}
		j.mu.Unlock()
		if !walked.Complete && j.firstErr == nil && ctx.Err() == nil && j.stopped == "" {
			var gaps []string
			for _, g := range walked.Coverage.NotCovered {
				gaps = append(gaps, g.String())
			}
			j.stop("not covered: " + strings.Join(gaps, "; "))
		}
	}
	firstErr := j.firstErr
	switch {
	case firstErr != nil:
		j.stop("error: " + firstErr.Error())
	case ctx.Err() != nil:
		j.stop("interrupted")
	}
	j.finish(res, start)
	if j.opts.CursorFile != "" {
		j.mu.Lock()
		j.ps.Complete = res.Complete
		err := j.state.save(j.opts.CursorFile)
		j.mu.Unlock()
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	stopProgress() // the final update, with the run's last counts
	return res, firstErr
}

// fail records the first error of the run and stops it.
func (j *job) fail(err error) {
	j.errOnce.Do(func() {
		j.firstErr = err
		if j.cancel != nil {
			j.cancel()
		}
	})
}

// loadState resumes from the cursor file, or starts afresh: one state for
// a server's database (its SCAN cursor), or one for a whole Cluster (the
// slots handled).
func (j *job) loadState(nodes []*node, res *Result) error {
	fresh := func() []*nodeState {
		if j.cluster {
			var addrs []string
			for _, n := range nodes {
				addrs = append(addrs, n.addr)
			}
			return []*nodeState{{ID: "cluster", Addr: strings.Join(addrs, ",")}}
		}
		n := nodes[0]
		return []*nodeState{{ID: n.id, Addr: n.addr, RunID: n.runID}}
	}
	if j.opts.CursorFile == "" {
		j.state = &stateFile{Version: stateVersion, Op: j.op}
		j.ps = &planState{Nodes: fresh()}
		return nil
	}
	st, existed, err := loadState(j.opts.CursorFile, j.op)
	if err != nil {
		return err
	}
	ps, err := st.plan(j.plan, &j.opts)
	if err != nil {
		return err
	}
	j.state, j.ps = st, ps
	if ps.Complete {
		return nil
	}
	if len(ps.Nodes) == 0 {
		ps.Nodes = fresh()
		return nil
	}
	if existed {
		res.ResumedOf = j.opts.CursorFile
	}
	want := fresh()[0]
	if len(ps.Nodes) != 1 || ps.Nodes[0].ID != want.ID {
		j.notes = append(j.notes, "the server or Cluster changed since the cursor file was written: every key is walked again from the start (keys already copied are found and left alone)")
		ps.Nodes = []*nodeState{want}
		return nil
	}
	ns := ps.Nodes[0]
	if !j.cluster && ns.RunID != want.RunID && !ns.Done {
		j.notes = append(j.notes, fmt.Sprintf("%s (%s) restarted since the cursor file was written: it is walked again from the start", want.Addr, want.ID))
		ns = want
	}
	ns.Addr, ns.RunID = want.Addr, want.RunID
	ps.Nodes[0] = ns
	return nil
}

// walk hands every batch of keys of the walk to j.work; copy asks a
// server for keys of the template's type only (the others are not copied;
// verify lists them).
func (j *job) walk(ctx context.Context) (*live.WalkResult, error) {
	cfg, addrs, db, cluster, err := redisopt.Reach(ctx, j.rdb)
	if err != nil {
		return nil, err
	}
	match := j.opts.Match
	switch {
	case j.op == opRestore:
		match = TombPrefix + "*"
	case match == "":
		match = j.plan.Glob()
	}
	j.mu.Lock()
	ns := j.ps.Nodes[0]
	o := live.WalkOptions{Match: match, Count: j.opts.Batch, Name: "keyguard-migrate", Visit: j.visit, Restarted: j.restarted}
	if j.op == opCopy && !cluster {
		o.Type = j.plan.Type
	}
	if j.op == opCleanup && cluster {
		// A Cluster's slot listings are matched by the client anyway: take
		// every key, so that the walk finds the plan's tombstones too,
		// which an interrupted cleanup can leave unchecked (cleaner.orphans).
		o.Match, j.match = "", match
	}
	if !cluster && ns.Cursor != 0 {
		o.Cursor = strconv.FormatUint(ns.Cursor, 10)
	}
	if cluster {
		o.Skip = report.ParseSlotRanges(ns.Slots)
	}
	j.mu.Unlock()
	res, err := live.Walk(ctx, live.TargetOf(cfg, addrs, db, cluster), o)
	if err != nil && ctx.Err() == nil {
		return nil, fmt.Errorf("walk the keys: %w", err)
	}
	return res, nil
}

// visit handles one batch of the walk and records it (a server's cursor,
// a Cluster's slots) once done.
func (j *job) visit(ctx context.Context, b *live.Batch) error {
	if j.opts.MaxKeys > 0 && j.keys.Load() >= j.opts.MaxKeys {
		j.stop("max-keys")
		j.cancel()
		return ctx.Err()
	}
	keys := b.Keys
	if j.op == opCopy && j.cluster {
		var err error
		if keys, err = ofType(ctx, b, j.plan.Type); err != nil {
			return err
		}
	}
	var c Counts
	pairs := j.pairs(keys, &c)
	if err := j.lim.Wait(ctx, len(pairs)); err != nil {
		return err
	}
	if len(pairs) > 0 {
		if err := j.work.batch(ctx, pairs, &c); err != nil {
			j.mu.Lock()
			j.unfinished += int64(len(pairs))
			j.mu.Unlock()
			if ctx.Err() != nil {
				return ctx.Err()
			}
			err = fmt.Errorf("%s: %w", b.Node, err)
			j.fail(err)
			return err
		}
	}
	j.keys.Add(c.Keys)
	if err := j.commit(j.ps.Nodes[0], b, c); err != nil {
		j.fail(err)
		return err
	}
	return nil
}

var typeCmd = resp.NewKeyCmd([]string{"TYPE"})

// ofType keeps the keys of b of type t, as SCAN … TYPE does on a server
// (a Cluster's slot listing cannot filter by type): one TYPE per key on
// the walk's connection to the node. A key that answers MOVED or ASK
// gives its slot back to the walk, which lists it again on its owner.
func ofType(ctx context.Context, b *live.Batch, t string) ([]string, error) {
	c := b.Conn
	if err := c.Begin(ctx); err != nil {
		return nil, err
	}
	for _, k := range b.Keys {
		c.Key(typeCmd, k)
	}
	c.Take()
	if err := c.Flush(); err != nil {
		return nil, err
	}
	is := make([]bool, len(b.Keys))
	for i := range b.Keys {
		rp, err := c.Read()
		if err != nil {
			return nil, err
		}
		if rp.Kind == '-' {
			if se := resp.ServerError(rp.Str); live.IsRedirect(se) {
				b.Redo(i)
				continue
			} else {
				return nil, fmt.Errorf("TYPE: %w", se)
			}
		}
		is[i] = string(rp.Str) == t
	}
	var out []string
	for i, k := range b.Keys {
		if is[i] && !b.Dropped(i) {
			out = append(out, k)
		}
	}
	return out, nil
}

// restarted drops the cursor of a server that restarted during the walk:
// its walk starts again from the first key, and its counts are those of
// the new life (keys copied before are found again, and left alone).
func (j *job) restarted(addr string, db int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	ns := j.ps.Nodes[0]
	ns.Cursor, ns.Done, ns.Counts = 0, false, Counts{}
	j.notes = append(j.notes, fmt.Sprintf("%s restarted during the run: its keys were walked again from the first, and the counts are those of the walk after the restart", addr))
}

// pairs keeps the keys of the old template and maps them; keys whose
// values do not fit the new template are counted (and, for verify, listed).
func (j *job) pairs(keys []string, c *Counts) []pair {
	if j.match == "" {
		c.Scanned += int64(len(keys))
	}
	out := make([]pair, 0, len(keys))
	if j.op == opRestore {
		return j.tombPairs(keys, c, out)
	}
	for _, k := range keys {
		if j.match != "" {
			if !glob.MatchString(j.match, k) {
				if pr, ok := j.orphan(k); ok {
					out = append(out, pr)
				}
				continue
			}
			c.Scanned++
		}
		nk, owned, err := j.plan.MapOwned(k)
		if !owned {
			continue
		}
		c.Keys++
		if err != nil {
			c.NotFit++
			if j.op != opCopy {
				c.Mismatched++
				j.mismatch(Mismatch{Old: k, Kind: MismatchNotFit, Detail: err.Error()})
			}
			continue
		}
		out = append(out, pair{old: k, new: nk, same: !j.cluster || keyslot.Slot(k) == keyslot.Slot(nk)})
	}
	return out
}

// tombPairs keeps the tombstones of the plan's old keys (whole keys, or
// the plan's moved fields).
func (j *job) tombPairs(keys []string, c *Counts, out []pair) []pair {
	for _, k := range keys {
		old, fields, deadline, ok := parseTomb(k)
		if !ok || fields != (j.plan.Fields != nil) || !j.plan.Owns(old) {
			continue
		}
		c.Keys++
		out = append(out, pair{old: old, new: k, same: true, deadline: deadline})
	}
	return out
}

// orphan reads a tombstone of one of the plan's old keys that the walk
// listed (Cleanup on a Cluster): the pair of its old key and new key, to
// check again.
func (j *job) orphan(k string) (pair, bool) {
	if !strings.HasPrefix(k, TombPrefix) {
		return pair{}, false
	}
	old, fields, deadline, ok := parseTomb(k)
	if !ok || fields != (j.plan.Fields != nil) || !glob.MatchString(j.match, old) {
		return pair{}, false
	}
	nk, owned, err := j.plan.MapOwned(old)
	if !owned || err != nil {
		return pair{}, false
	}
	return pair{old: old, new: nk, deadline: deadline, tomb: k}, true
}

// commit records a finished batch and saves the cursor file when due.
func (j *job) commit(ns *nodeState, b *live.Batch, c Counts) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if b.Whole != nil {
		ns.Slots = report.JoinSlotRanges(ns.Slots, report.SlotRanges(b.Whole))
	} else if cur, err := strconv.ParseUint(b.Next, 10, 64); err == nil {
		ns.Cursor, ns.Done = cur, cur == 0
	}
	ns.Counts.add(c)
	j.sinceSave += int(c.Keys)
	if j.opts.CursorFile == "" || j.sinceSave < j.opts.CheckpointEvery {
		return nil
	}
	j.sinceSave = 0
	return j.state.save(j.opts.CursorFile)
}

func (j *job) mismatch(m Mismatch) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(j.mism) >= j.opts.MaxMismatches {
		j.moreMism++
		return
	}
	j.mism = append(j.mism, m)
}

// warning lists a key copied with an expiry that breaks the new template.
func (j *job) warning(m Mismatch) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(j.warn) >= j.opts.MaxMismatches {
		j.moreWarn++
		return
	}
	j.warn = append(j.warn, m)
}

func (j *job) stop(why string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.stopped == "" {
		j.stopped = why
	}
}

// done is the share of the keyspace walked (see Progress.Done).
func (j *job) done() float64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	var walked, total float64
	for _, ns := range j.ps.Nodes {
		w := float64(max(j.total, 1))
		total += w
		switch {
		case ns.Done:
			walked += w
		case ns.Slots != "":
			walked += w * float64(len(report.ParseSlotRanges(ns.Slots))) / report.ClusterSlots
		case ns.Cursor != 0:
			walked += w * float64(bits.Reverse64(ns.Cursor)) / (1 << 64)
		}
	}
	if total == 0 {
		return 1
	}
	return walked / total
}

func (j *job) counts() Counts {
	j.mu.Lock()
	defer j.mu.Unlock()
	var c Counts
	for _, ns := range j.ps.Nodes {
		c.add(ns.Counts)
	}
	return c
}

func (j *job) startProgress(start time.Time) (stop func()) {
	if j.opts.Progress == nil {
		return func() {}
	}
	return progress.Start(j.opts.ProgressEvery, func(final bool) {
		j.opts.Progress(Progress{Op: j.op, From: j.plan.From, Counts: j.counts(), Total: j.total, Done: j.done(), Elapsed: time.Since(start), RunKeys: j.keys.Load(), Final: final})
	})
}

func (j *job) finish(res *Result, start time.Time) *Result {
	j.mu.Lock()
	defer j.mu.Unlock()
	res.Duration = time.Since(start)
	res.DurationMS = res.Duration.Milliseconds()
	res.RunKeys = j.keys.Load()
	res.Complete = true
	for _, ns := range j.ps.Nodes {
		res.Counts.add(ns.Counts)
		res.Nodes = append(res.Nodes, NodeResult{ID: ns.ID, Addr: ns.Addr, Cursor: ns.Cursor, Slots: ns.Slots, Done: ns.Done, Counts: ns.Counts})
		res.Complete = res.Complete && ns.Done
	}
	if !res.Complete {
		res.Stopped = j.stopped
		if res.Stopped == "" {
			res.Stopped = "interrupted"
		}
	}
	res.Mismatches, res.MoreMismatches = j.mism, j.moreMism
	res.Warnings, res.MoreWarnings = j.warn, j.moreWarn
	res.PlanNotes, res.Notes = j.plan.Notes, j.notes
	if n := j.unfinished; n > 0 && !j.opts.DryRun {
		if what, next := unfinishedWrites(j.op, j.cluster); what != "" {
			res.Notes = append(slices.Clip(res.Notes), fmt.Sprintf("the run stopped in the middle of a batch: up to %d keys of it may have been %s without being counted here%s", n, what, next))
		}
	}
	return res
}

// unfinishedWrites says what the keys of a batch of op that the run
// stopped in the middle of may have been made (what: "" for an operation
// that does not write), and what a next run does of them. Only a cleanup
// across Cluster slots moves old keys to tombstones.
func unfinishedWrites(op string, cluster bool) (what, next string) {
	switch {
	case op == opCopy:
		return "copied", "; the next run finds them and leaves them alone"
	case op == opCleanup && cluster:
		return "deleted (their new keys verified) or moved to their tombstones",
			"; the next run puts back a tombstone's old key if its new key no longer verifies"
	case op == opCleanup:
		return "deleted (their new keys verified)", ""
	case op == opRestore:
		return "put back", ""
	}
	return "", ""
}

// node is one master: a standalone server, or a Cluster master.
type node struct {
	id     string // "db0", or the Cluster slot ranges it serves ("0-5460")
	addr   string
	runID  string
	dbsize int64
	c      *redis.Client
}

// discover lists the masters to scan.
func discover(ctx context.Context, rdb redis.UniversalClient) ([]*node, error) {
	switch c := rdb.(type) {
	case *redis.Client:
		n := &node{id: "db" + strconv.Itoa(c.Options().DB), addr: c.Options().Addr, c: c}
		return []*node{n}, n.describe(ctx)
	case *redis.ClusterClient:
		return discoverCluster(ctx, c)
	}
	return nil, fmt.Errorf("migrate needs a *redis.Client or *redis.ClusterClient, not %T", rdb)
}

func discoverCluster(ctx context.Context, c *redis.ClusterClient) ([]*node, error) {
	slots, err := c.ClusterSlots(ctx).Result()
	if err != nil {
		return nil, fmt.Errorf("CLUSTER SLOTS: %w", err)
	}
	slices.SortFunc(slots, func(a, b redis.ClusterSlot) int { return a.Start - b.Start })
	ranges := map[string][]string{}
	for _, s := range slots {
		if len(s.Nodes) > 0 {
			ranges[s.Nodes[0].Addr] = append(ranges[s.Nodes[0].Addr], fmt.Sprintf("%d-%d", s.Start, s.End))
		}
	}
	var mu sync.Mutex
	var nodes []*node
	err = c.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		n := &node{addr: m.Options().Addr, c: m, id: strings.Join(ranges[m.Options().Addr], ",")}
		if n.id == "" { // a master without slots holds no keys
			return nil
		}
		if err := n.describe(ctx); err != nil {
			return err
		}
		mu.Lock()
		nodes = append(nodes, n)
		mu.Unlock()
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(nodes, func(a, b *node) int { return strings.Compare(a.id, b.id) })
	return nodes, nil
}

// describe reads the run_id (a SCAN cursor is only good on the process
// that gave it) and DBSIZE.
func (n *node) describe(ctx context.Context) error {
	info, err := n.c.Info(ctx, "server").Result()
	if err != nil && !isReply(err) { // a server without INFO server has no run_id to give
		return fmt.Errorf("INFO %s: %w", n.addr, err)
	}
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "run_id:"); ok {
			n.runID = v
		}
	}
	if n.dbsize, err = n.c.DBSize(ctx).Result(); err != nil {
		return fmt.Errorf("DBSIZE %s: %w", n.addr, err)
	}
	return nil
}

// errRedis tells a server's reply to one command (redis.Error) from a
// failed connection.
func isReply(err error) bool {
	var re redis.Error
	return errors.As(err, &re)
}
