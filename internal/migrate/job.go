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

	"github.com/keyguard/keyguard/internal/keyslot"
	"github.com/keyguard/keyguard/internal/pace"
	"github.com/keyguard/keyguard/internal/progress"
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
}

func newJob(op string, p *Plan, rdb redis.UniversalClient, opts Options) *job {
	opts.defaults()
	_, cluster := rdb.(*redis.ClusterClient)
	return &job{op: op, plan: p, rdb: rdb, cluster: cluster, opts: opts, lim: pace.New(opts.Rate, opts.Batch)}
}

// run scans every master and hands each batch of the template's keys to
// j.work. The result is filled whatever happens; the error says why a run
// could not finish (not an interrupt, not MaxKeys).
func (j *job) run(ctx context.Context) (*Result, error) {
	start := time.Now()
	res := &Result{Op: j.op, From: j.plan.From, To: j.plan.To, Type: j.plan.Type, Fields: j.plan.Fields, DryRun: j.opts.DryRun, StartedAt: start.UTC()}
	nodes, err := discover(ctx, j.rdb)
	if err != nil {
		return res, err
	}
	if err := j.loadState(nodes, res); err != nil {
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
	stopProgress := j.startProgress(start)
	var wg sync.WaitGroup
	var firstErr error
	var errOnce sync.Once
	for i, n := range nodes {
		ns := j.ps.Nodes[i]
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := j.runNode(runCtx, n, ns); err != nil {
				errOnce.Do(func() { firstErr = err; cancel() })
			}
		}()
	}
	wg.Wait()
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

// loadState resumes from the cursor file, or starts every master at 0.
func (j *job) loadState(nodes []*node, res *Result) error {
	fresh := func() []*nodeState {
		out := make([]*nodeState, len(nodes))
		for i, n := range nodes {
			out[i] = &nodeState{ID: n.id, Addr: n.addr, RunID: n.runID}
		}
		return out
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
	saved := map[string]*nodeState{}
	for _, ns := range ps.Nodes {
		saved[ns.ID] = ns
	}
	same := len(saved) == len(nodes)
	for _, n := range nodes {
		same = same && saved[n.id] != nil
	}
	if !same {
		j.notes = append(j.notes, "the masters and their slots changed since the cursor file was written: every master is scanned again from the start (keys already copied are found and left alone)")
		ps.Nodes = fresh()
		return nil
	}
	out := make([]*nodeState, len(nodes))
	for i, n := range nodes {
		ns := saved[n.id]
		if ns.RunID != n.runID && !ns.Done {
			j.notes = append(j.notes, fmt.Sprintf("%s (%s) restarted since the cursor file was written: it is scanned again from the start", n.addr, n.id))
			ns = &nodeState{ID: n.id, Addr: n.addr, RunID: n.runID}
		}
		ns.Addr, ns.RunID = n.addr, n.runID
		out[i] = ns
	}
	ps.Nodes = out
	return nil
}

// runNode walks one master from its saved cursor. A goroutine runs the
// SCANs ahead (at most two batches), so that the server scans the next
// batch while this one is copied; batches are handled and committed in
// cursor order.
func (j *job) runNode(ctx context.Context, n *node, ns *nodeState) error {
	j.mu.Lock()
	cursor, done := ns.Cursor, ns.Done
	j.mu.Unlock()
	if done {
		return nil
	}
	type batch struct {
		keys []string
		next uint64
	}
	scanCtx, stopScan := context.WithCancel(ctx)
	defer stopScan()
	batches := make(chan batch, 2)
	scanErr := make(chan error, 1)
	go func() {
		defer close(batches)
		for c := cursor; ; {
			keys, next, err := j.scan(scanCtx, n, c)
			if err != nil {
				if scanCtx.Err() == nil {
					scanErr <- fmt.Errorf("SCAN %s: %w", n.addr, err)
				}
				return
			}
			select {
			case batches <- batch{keys, next}:
			case <-scanCtx.Done():
				return
			}
			if c = next; c == 0 {
				return
			}
		}
	}()
	for b := range batches {
		if j.opts.MaxKeys > 0 && j.keys.Load() >= j.opts.MaxKeys {
			j.stop("max-keys")
			return nil
		}
		var c Counts
		pairs := j.pairs(b.keys, &c)
		if err := j.lim.Wait(ctx, len(pairs)); err != nil {
			return nil
		}
		if len(pairs) > 0 {
			if err := j.work.batch(ctx, pairs, &c); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("%s: %w", n.addr, err)
			}
		}
		j.keys.Add(c.Keys)
		if err := j.commit(ns, b.next, b.next == 0, c); err != nil {
			return err
		}
	}
	select {
	case err := <-scanErr:
		return err
	default:
		return nil
	}
}

// scan runs one SCAN; copy asks for keys of the template's type only
// (the others are not copied; verify lists them).
func (j *job) scan(ctx context.Context, n *node, cursor uint64) ([]string, uint64, error) {
	match := j.opts.Match
	switch {
	case j.op == opRestore:
		match = TombPrefix + "*"
	case match == "":
		match = j.plan.Glob()
	}
	if j.op == opCopy {
		return n.c.ScanType(ctx, cursor, match, int64(j.opts.Batch), j.plan.Type).Result()
	}
	return n.c.Scan(ctx, cursor, match, int64(j.opts.Batch)).Result()
}

// pairs keeps the keys of the old template and maps them; keys whose
// values do not fit the new template are counted (and, for verify, listed).
func (j *job) pairs(keys []string, c *Counts) []pair {
	c.Scanned += int64(len(keys))
	out := make([]pair, 0, len(keys))
	if j.op == opRestore {
		return j.tombPairs(keys, c, out)
	}
	for _, k := range keys {
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

// commit records a finished batch and saves the cursor file when due.
func (j *job) commit(ns *nodeState, cursor uint64, done bool, c Counts) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	ns.Cursor, ns.Done = cursor, done
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
	for i, ns := range j.ps.Nodes {
		w := float64(max(j.nodes[i].dbsize, 1))
		total += w
		switch {
		case ns.Done:
			walked += w
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
		res.Nodes = append(res.Nodes, NodeResult{ID: ns.ID, Addr: ns.Addr, Cursor: ns.Cursor, Done: ns.Done, Counts: ns.Counts})
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
	return res
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
