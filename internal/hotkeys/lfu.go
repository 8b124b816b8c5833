package hotkeys

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/hotkey"
	"github.com/keyguard/keyguard/internal/audit/live"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/internal/pace"
	"github.com/keyguard/keyguard/internal/resp"
	"github.com/keyguard/keyguard/internal/resp/redisopt"
)

// LFU walk defaults.
const (
	// DefaultLFUCount is the SCAN COUNT of the walk: one round trip reads
	// about this many keys' counters.
	DefaultLFUCount = 1000
	// LFUEvidence is the lowest LFU counter listed. Redis starts a key at
	// 5 and, with the default lfu-log-factor 10, a counter of 10 takes
	// about a hundred reads since the key last cooled down: below it a
	// key was barely read, which is no evidence of heat.
	LFUEvidence = 10
)

// LFUOptions bounds the OBJECT FREQ walk.
type LFUOptions struct {
	// Sample, when positive, stops after that many keys per master;
	// 0 walks every key.
	Sample int
	// Rate caps keys read per second per master; 0 does not wait.
	Rate int
	// AllDBs walks every database of a server that holds keys (INFO
	// keyspace), as the audit does when the URL names none, instead of
	// the client's database alone. A Cluster has only database 0.
	AllDBs bool
	// Match is a SCAN MATCH pattern ("" = every key).
	Match string
	// Count is the SCAN COUNT (DefaultLFUCount).
	Count int
	// TopK is how many keys are kept (hotkey.DefaultTopK), those with
	// the highest counters.
	TopK int
	// Hot is the counter at or above which a key is hot (DefaultMinFreq):
	// when the TopK keys kept are all that hot, others as hot may have
	// been left out, and the result says so.
	Hot int
	// Floor is the lowest counter listed (LFUEvidence).
	Floor int
	// RetryFor is how long a node may fail before its part is given up
	// as not covered (live.DefaultRetryFor).
	RetryFor time.Duration
}

// LFUNode is one node's part of the walk.
type LFUNode struct {
	Addr   string `json:"addr"`
	Policy string `json:"policy,omitempty"` // maxmemory-policy, "" when unknown
	// Sampled is how many keys' counters were read.
	Sampled int `json:"sampled"`
	// Whole is true when the walk covered the node's keyspace (on a
	// Cluster, every slot it was walked for), false when --sample or an
	// error stopped it.
	Whole bool `json:"whole"`
	// Skipped says why OBJECT FREQ was not used on this node ("" when it was).
	Skipped string `json:"skipped,omitempty"`
	// Stopped says why the walk ended early (an error, an interruption):
	// the counters of the keys read so far are in the result.
	Stopped string `json:"stopped,omitempty"`
	// Unreadable are keys listed that the ACL user may not read (NOPERM
	// on the key): their counters are unknown, and the node not whole.
	Unreadable int `json:"unreadable,omitempty"`
}

// LFUKey is a key and its LFU counter (0–255, logarithmic: with the
// default lfu-log-factor 10, about 100 hits give 10, 1,000 give 18,
// 100,000 give 142, a million 255; it decays by one per lfu-decay-time
// minutes).
type LFUKey struct {
	Key  string
	DB   int
	Freq int
	Node string
}

// LFUResult is the OBJECT FREQ walk of every master.
type LFUResult struct {
	Nodes []LFUNode `json:"nodes"`
	Floor int       `json:"floor"` // the lowest counter listed
	Keys  []LFUKey  `json:"-"`     // highest counter first (in Report.Keys)
	// Coverage is the walk's coverage block, as in an audit report: the
	// nodes and slots walked, and what was not covered and why.
	Coverage *report.Coverage `json:"coverage,omitempty"`
	// From is LFUFromSnapshot when the counters were read from the
	// masters' snapshots (SnapshotLFU), "" for OBJECT FREQ.
	From string `json:"from,omitempty"`
	// Notes say what happened during the walk, as an audit report's do:
	// a server that restarted and was walked again, slots walked again
	// on their new owner.
	Notes []string `json:"notes,omitempty"`
}

// LFUFromSnapshot is LFUResult.From of counters read from snapshots.
const LFUFromSnapshot = "snapshot"

// WalkLFU reads the LFU counter of every key rdb reaches (a server's
// database, every database that holds keys with AllDBs, or every master
// of a Cluster), or the first Sample keys of
// each master, on nodes whose maxmemory-policy is an LFU policy; other
// nodes are skipped with the reason. It walks on the walk the audit and
// the other tools share (live.Walk): a server with SCAN, a Cluster slot
// by slot, each slot counted whole once on its owner of the moment and
// walked again on its new owner after a failover or a migration, a
// server's walk started again when it restarts; the result carries the
// walk's coverage. Per batch one pipeline of OBJECT FREQ (which does not
// touch the key) while the walk lists the next batch. On a part not
// covered or a cancelled ctx, what was read is returned with an error.
func WalkLFU(ctx context.Context, rdb redis.UniversalClient, opts LFUOptions) (*LFUResult, error) {
	opts = opts.withDefaults()
	cfg, addrs, nodes, db, cluster, err := reachMasters(ctx, rdb)
	if err != nil {
		return nil, err
	}
	w := &lfuWalk{opts: opts, masters: len(nodes), nodes: map[string]*lfuNode{}}
	lfu, err := w.checkPolicies(ctx, cfg, nodes, cluster)
	if err != nil {
		return nil, err
	}
	if lfu == 0 {
		// No LFU counters anywhere: nothing to walk.
		return w.result(ctx, &live.WalkResult{})
	}
	ctx, w.stop = context.WithCancel(ctx)
	defer w.stop()
	w.startKeeper()
	defer w.stopKeeper()
	t := live.TargetOf(cfg, addrs, db, cluster)
	if opts.AllDBs && !cluster {
		t.Conn.DB = live.AllDBs
	}
	var lim *pace.Limiter
	if opts.Rate > 0 {
		// --rate is per master; the walk's limiter is shared by all.
		lim = pace.New(float64(opts.Rate*w.masters), max(opts.Count, 1))
	}
	wr, err := live.Walk(ctx, t, live.WalkOptions{
		Match: opts.Match, Count: opts.Count, Limiter: lim, PerKey: 1, Name: "keyguard-hotkeys", RetryFor: opts.RetryFor,
		Visit: w.visit, Restarted: w.restarted,
	})
	w.stopKeeper()
	if err != nil {
		return nil, err
	}
	return w.result(ctx, wr)
}

// withDefaults fills the zero fields of o.
func (o LFUOptions) withDefaults() LFUOptions {
	if o.Count <= 0 {
		o.Count = DefaultLFUCount
	}
	if o.TopK <= 0 {
		o.TopK = hotkey.DefaultTopK
	}
	if o.Floor <= 0 {
		o.Floor = LFUEvidence
	}
	if o.Hot <= 0 {
		o.Hot = DefaultMinFreq
	}
	return o
}

// HotKept is how many keys' counters hotkeys keeps at least, whatever
// --top lists: every hot key among them gets a finding.
const HotKept = 10000

// keepTop keeps the opts.TopK keys of res with the highest counters, and
// notes when every one of them is hot: keys as hot beyond them were not
// kept (a list is cut only below its lowest counter kept, so a hot key
// left out means a full list of hot keys).
func (res *LFUResult) keepTop(opts LFUOptions) {
	res.Keys = topLFU(res.Keys, opts.TopK)
	if n := len(res.Keys); n > 0 && n >= opts.TopK && res.Keys[n-1].Freq >= opts.Hot {
		res.Notes = append(res.Notes, fmt.Sprintf("the counters of %s keys were kept, every one at or above the hot counter %d: keys as hot beyond them may be left out; give --top more than %d to keep more",
			human.Count(int64(n)), opts.Hot, n))
	}
}

// reachMasters is what rdb reaches: its connection settings, the
// addresses it was given, its masters (the server itself, or every master
// of a Cluster), its database, and whether it is a Cluster.
func reachMasters(ctx context.Context, rdb redis.UniversalClient) (cfg resp.Config, addrs, masters []string, db int, cluster bool, err error) {
	cfg, addrs, db, cluster, err = redisopt.Reach(ctx, rdb)
	if err != nil {
		return
	}
	masters = addrs[:1]
	if cluster {
		masters, err = MasterAddrs(ctx, rdb)
	}
	return
}

var objectFreq = resp.NewKeyCmd([]string{"OBJECT", "FREQ"})

// lfuWalk is the state of one WalkLFU; Visit runs on one goroutine per
// node.
type lfuWalk struct {
	opts    LFUOptions
	masters int
	stop    context.CancelFunc

	mu      sync.Mutex
	nodes   map[string]*lfuNode
	full    int  // nodes that read their Sample
	sampled bool // the walk was stopped because every master read its Sample

	// keep takes the counters a batch read to the goroutine that keeps
	// them (keeper), in the order the nodes' walks read them: offering a
	// batch's keys on the walk's own goroutine held its next round trip
	// back (a list of 100,000 takes a few hundred thousand keys in).
	keep    chan keptBatch
	keeping sync.WaitGroup
}

// keptBatch is a batch's counters over the floor for the keeper, or (restart)
// the word that a node's database is walked again from its start.
type keptBatch struct {
	n       *lfuNode
	db      int
	keys    []LFUKey
	restart bool
}

// startKeeper starts the goroutine that keeps the counters in the nodes'
// lists (lfuNode.found, its own until stopKeeper returns).
func (w *lfuWalk) startKeeper() {
	w.keep = make(chan keptBatch, 64)
	w.keeping.Go(func() {
		for m := range w.keep {
			if m.restart {
				delete(m.n.found, m.db)
				continue
			}
			t := m.n.found[m.db]
			if t == nil {
				t = &lfuTop{k: w.opts.TopK}
				m.n.found[m.db] = t
			}
			for _, f := range m.keys {
				t.offer(f)
			}
		}
	})
}

// stopKeeper returns once every batch sent is kept.
func (w *lfuWalk) stopKeeper() {
	if w.keep != nil {
		close(w.keep)
		w.keeping.Wait()
		w.keep = nil
	}
}

// lfuNode is what the walk read on one node, per database.
type lfuNode struct {
	LFUNode
	checked bool
	found   map[int]*lfuTop
	read    map[int]int // keys read per database (their sum is Sampled)
	denied  map[int]int // keys the user may not read, per database (their sum is Unreadable)
}

func (w *lfuWalk) node(addr string) *lfuNode {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := w.nodes[addr]
	if n == nil {
		n = &lfuNode{LFUNode: LFUNode{Addr: addr}, found: map[int]*lfuTop{}, read: map[int]int{}, denied: map[int]int{}}
		w.nodes[addr] = n
	}
	return n
}

// visit reads the counters of one batch; a call that fails keeps nothing
// (the walk hands the batch, or its slots, over again).
func (w *lfuWalk) visit(ctx context.Context, b *live.Batch) error {
	n := w.node(b.Node)
	if err := n.checkPolicy(ctx, b.Conn); err != nil || n.Skipped != "" {
		return err
	}
	keys := b.Keys
	if w.opts.Sample > 0 {
		w.mu.Lock()
		left := w.opts.Sample - n.Sampled
		w.mu.Unlock()
		if left <= 0 {
			return nil
		}
		keys = keys[:min(len(keys), left)]
	}
	found, denied, err := readFreqs(ctx, b, keys, w.opts.Floor)
	if err != nil {
		return err
	}
	read, unread := 0, 0
	for i := range keys {
		switch {
		case b.Dropped(i):
		case denied[i]:
			unread++
		default:
			read++
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	n.Sampled += read
	n.read[b.DB] += read
	n.Unreadable += unread
	n.denied[b.DB] += unread
	if len(found) > 0 {
		// Sent under mu, as restarted sends its word: the keeper sees a
		// database's batches and its restart in the order they came.
		w.keep <- keptBatch{n: n, db: b.DB, keys: found}
	}
	if w.opts.Sample > 0 && n.Sampled >= w.opts.Sample {
		if w.full++; w.full >= w.masters {
			w.sampled = true
			w.stop()
		}
	}
	return nil
}

// restarted drops what was read of a database of a server that
// restarted: its walk starts again from its first key.
func (w *lfuWalk) restarted(addr string, db int) {
	n := w.node(addr)
	w.mu.Lock()
	defer w.mu.Unlock()
	n.Sampled -= n.read[db]
	n.Unreadable -= n.denied[db]
	delete(n.read, db)
	delete(n.denied, db)
	w.keep <- keptBatch{n: n, db: db, restart: true}
}

// result joins the nodes' counters and the walk's coverage; every part
// not covered is an error.
func (w *lfuWalk) result(ctx context.Context, wr *live.WalkResult) (*LFUResult, error) {
	res := &LFUResult{Floor: w.opts.Floor, Coverage: wr.Coverage, Notes: wr.Notes}
	if slices.ContainsFunc(wr.Notes, func(n string) bool { return strings.Contains(n, "restarted during the walk") }) {
		res.Notes = append(res.Notes, "a server that restarts starts its LFU counters again from what it loaded: a key hot before the restart may read cold until it is read again")
	}
	stopped := map[string][]string{}
	var errs []error
	cov := wr.Coverage
	if cov == nil {
		cov = &report.Coverage{}
	}
	if w.sampled {
		for i := range cov.NotCovered {
			cov.NotCovered[i].Reason = fmt.Sprintf("stopped by --sample once every master had %d keys read", w.opts.Sample)
		}
	} else {
		for _, g := range cov.NotCovered {
			stopped[g.Node] = append(stopped[g.Node], g.Reason)
			what := g.Node
			if g.Slots != "" {
				what = fmt.Sprintf("slots %s (last tried on %s)", g.Slots, g.Node)
			}
			errs = append(errs, fmt.Errorf("%s not covered: %s", what, g.Reason))
		}
		if len(errs) == 0 && ctx.Err() != nil {
			errs = append(errs, ctx.Err())
		}
	}
	for _, cn := range cov.Nodes {
		n := w.node(cn.Addr)
		n.Whole = !w.sampled && len(stopped[cn.Addr]) == 0 && !slices.ContainsFunc(cn.DBs, func(d report.CoverageDB) bool { return !d.Complete })
		for i := range cn.DBs {
			d := &cn.DBs[i]
			if d.Unreadable = int64(n.denied[d.DB]); d.Unreadable == 0 {
				continue
			}
			n.Whole = false
			g := report.Gap{Node: cn.Addr, Reason: fmt.Sprintf("%s keys not readable by this ACL user (NOPERM on the key), their counters unknown: grant it %%R~* (docs/audit-acl.md), or read only the keys it may read with --match", human.Count(d.Unreadable))}
			if cov.Cluster == nil {
				g.DB = &d.DB
			}
			cov.NotCovered = append(cov.NotCovered, g)
			errs = append(errs, fmt.Errorf("%s not covered: %s", cn.Addr, g.Reason))
		}
	}
	cov.Finish()
	var lists [][]LFUKey // each in lfuCmp's order
	for _, n := range w.nodes {
		switch r := stopped[n.Addr]; {
		case n.Skipped != "":
		case len(r) > 0:
			n.Stopped = human.OneLine(strings.Join(r, "; "))
		case n.Unreadable > 0: // said by its count
		case !n.Whole && !w.sampled && len(cov.Nodes) > 0:
			n.Stopped = "it stopped serving some of its slots during the walk (a failover or a migration): they were read on their new owner"
		}
		res.Nodes = append(res.Nodes, n.LFUNode)
		for _, t := range n.found {
			lists = append(lists, t.kept())
		}
	}
	res.Keys = mergeLFU(lists)
	res.keepTop(w.opts)
	slices.SortFunc(res.Nodes, func(a, b LFUNode) int { return strings.Compare(a.Addr, b.Addr) })
	return res, errors.Join(errs...)
}

// checkPolicies reads the maxmemory-policy of the masters before the
// walk and returns how many have LFU counters. A node the walk reaches
// later (a replica promoted meanwhile) is checked on its first batch.
// The policy is the server's, whatever the database.
func (w *lfuWalk) checkPolicies(ctx context.Context, cfg resp.Config, addrs []string, cluster bool) (int, error) {
	lfu := 0
	for _, addr := range addrs {
		c, err := resp.Dial(ctx, cfg, addr, resp.Session{Name: "keyguard-hotkeys"})
		switch {
		case err != nil && cluster && resp.Unreachable(err) && ctx.Err() == nil:
			// A Cluster master down: the walk reads the others and
			// lists its slots as not covered.
			w.node(addr).Policy = "unknown"
			lfu++
			continue
		case err != nil:
			return 0, err
		}
		n := w.node(addr)
		err = n.checkPolicy(ctx, c)
		c.Close()
		if err != nil {
			return 0, fmt.Errorf("%s: %w", addr, err)
		}
		if n.Skipped == "" {
			lfu++
		}
	}
	return lfu, nil
}

// checkPolicy reads the node's maxmemory-policy once: OBJECT FREQ needs
// an LFU policy. INFO memory says it, so the user needs no CONFIG (which
// managed services and hardened servers rename or refuse); CONFIG GET
// is asked only of a server whose INFO does not say it.
func (n *lfuNode) checkPolicy(ctx context.Context, c *resp.Conn) error {
	if n.checked {
		return nil
	}
	var policy string
	text, err := c.Simple(ctx, "INFO", "memory")
	var se resp.ServerError
	switch {
	case err == nil:
		policy = live.InfoField(text, "maxmemory_policy")
	case !errors.As(err, &se):
		return err
	}
	if policy == "" {
		var ce error
		policy, ce = c.ConfigGet(ctx, "maxmemory-policy")
		var cse resp.ServerError
		switch {
		case errors.As(ce, &cse):
			why := "INFO memory does not say it"
			if err != nil {
				why = "INFO memory refused (" + human.OneLine(se.Error()) + ")"
			}
			n.Skipped = fmt.Sprintf("%s and CONFIG GET maxmemory-policy refused (%v): cannot tell whether the LFU counters exist", why, human.OneLine(cse.Error()))
		case ce != nil:
			return ce
		}
	}
	if n.Skipped == "" && !strings.HasSuffix(policy, "-lfu") {
		n.Skipped = fmt.Sprintf("maxmemory-policy is %s: OBJECT FREQ needs allkeys-lfu or volatile-lfu", policy)
	}
	n.Policy, n.checked = policy, true
	return nil
}

// readFreqs reads OBJECT FREQ of keys (the batch's, or the first of them)
// in one round trip and returns those at or above floor. A key whose slot
// moved is given back to the walk (b.Redo), and so is every key of its
// slot in the batch.
func readFreqs(ctx context.Context, b *live.Batch, keys []string, floor int) (_ []LFUKey, denied map[int]bool, _ error) {
	c := b.Conn
	if err := c.Begin(ctx); err != nil {
		return nil, nil, err
	}
	for _, k := range keys {
		c.Key(objectFreq, k)
	}
	c.Take()
	if err := c.Flush(); err != nil {
		return nil, nil, err
	}
	var found []LFUKey
	var at []int
	for i, k := range keys {
		rp, err := c.Read()
		var se resp.ServerError // an error reply's, read only then
		if rp.Kind == '-' {
			se = resp.ServerError(rp.Str)
		}
		switch {
		case err != nil:
			return nil, nil, err
		case rp.Kind == '-' && live.IsRedirect(se):
			b.Redo(i)
		case rp.Kind == '-' && se.Code() == "NOPERM" && strings.Contains(string(se), "key"):
			if denied == nil {
				denied = map[int]bool{}
			}
			denied[i] = true
		case rp.Kind == '-':
			return nil, nil, fmt.Errorf("OBJECT FREQ on %s: %s", b.Node, rp.Str)
		case rp.Kind == ':' && int(rp.N) >= floor:
			found = append(found, LFUKey{Key: k, DB: b.DB, Freq: int(rp.N), Node: b.Node})
			at = append(at, i)
		} // null: the key is gone since it was listed
	}
	kept := found[:0]
	for j, f := range found {
		if !b.Dropped(at[j]) {
			kept = append(kept, f)
		}
	}
	return kept, denied, nil
}

// topLFU keeps the k highest counters, highest first.
func topLFU(keys []LFUKey, k int) []LFUKey {
	// A total order (a key is on one node at a time, but for a moment
	// during a migration): no stable sort needed, whose merges cost
	// seconds on a few hundred thousand keys.
	if !slices.IsSortedFunc(keys, lfuCmp) {
		slices.SortFunc(keys, lfuCmp)
	}
	if len(keys) > k {
		keys = keys[:k]
	}
	return keys
}

// mergeLFU merges lists, each in lfuCmp's order, into one in that order
// (the nodes' and databases' keys: sorting them together again compared
// the names of a few hundred thousand keys some 17 times each).
func mergeLFU(lists [][]LFUKey) []LFUKey {
	if len(lists) == 0 {
		return nil
	}
	for len(lists) > 1 {
		next := lists[:0]
		for i := 0; i < len(lists); i += 2 {
			if i+1 == len(lists) {
				next = append(next, lists[i])
				break
			}
			a, b := lists[i], lists[i+1]
			m := make([]LFUKey, 0, len(a)+len(b))
			for len(a) > 0 && len(b) > 0 {
				if lfuCmp(b[0], a[0]) < 0 {
					m, b = append(m, b[0]), b[1:]
				} else {
					m, a = append(m, a[0]), a[1:]
				}
			}
			m = append(append(m, a...), b...)
			next = append(next, m) // lists[i] and lists[i+1] are read: next's slot is at most i
		}
		lists = next
	}
	return lists[0]
}

// lfuCmp orders keys as the report lists them: the highest counter
// first, then by name, database and node.
func lfuCmp(a, b LFUKey) int {
	if a.Freq != b.Freq {
		return b.Freq - a.Freq
	}
	return cmp.Or(strings.Compare(a.Key, b.Key), cmp.Compare(a.DB, b.DB), strings.Compare(a.Node, b.Node))
}

// lfuTop keeps the k keys offered to it that topLFU would keep of them
// all, in about k keys of memory whatever the walk reads (a database of
// millions of keys over the floor) and O(1) a key: keys by counter (0 to
// 255), the counters below those of the k best dropped, and the lowest
// counter kept cut by name when it holds twice what it needs.
//
// A key is held as its name's bytes in its counter's own buffer and an
// entry without pointers: the collector never reads what a list of
// 100,000 keys holds (it read every held LFUKey's two strings at each
// cycle of the walk, a fifth of a --top 100000 run's CPU), a key's name
// does not keep the walk's batch it came in alive, and a counter dropped
// or cut takes its names with it.
type lfuTop struct {
	k      int
	byFreq [256]lfuBucket
	n      int // keys held
	low    int // no counter below it is held
	nodes  []string
}

// lfuBucket is the keys of one counter (of the counters at or past an
// end, 0 or 255): their names back to back, and an entry each.
type lfuBucket struct {
	names []byte
	ents  []lfuEnt
}

// lfuEnt is a held key: its counter, database and node (an index in
// lfuTop.nodes), and its name, n bytes at off in its bucket's names.
type lfuEnt struct {
	freq int64
	off  uint32
	n    uint32
	db   int32
	node int32
}

func (t *lfuTop) offer(f LFUKey) {
	i := min(max(f.Freq, 0), 255) // OBJECT FREQ gives 0-255; other counters bunch at the ends, ordered by lfuCmp there
	if i < t.low || t.k <= 0 {
		return
	}
	b := &t.byFreq[i]
	b.ents = append(b.ents, lfuEnt{freq: int64(f.Freq), off: uint32(len(b.names)), n: uint32(len(f.Key)), db: int32(f.DB), node: t.nodeIndex(f.Node)})
	b.names = append(b.names, f.Key...)
	t.n++
	// Drop the lowest counters while the rest are k keys.
	for t.low < 255 && t.n-len(t.byFreq[t.low].ents) >= t.k {
		t.n -= len(t.byFreq[t.low].ents)
		t.byFreq[t.low] = lfuBucket{}
		t.low++
	}
	// The lowest counter kept needs only its first keys by name.
	b = &t.byFreq[t.low]
	if need := t.k - (t.n - len(b.ents)); len(b.ents) >= 2*need+64 {
		t.sort(b)
		t.n -= len(b.ents) - need
		b.ents = b.ents[:need]
		// Its names again, only the kept ones, in a buffer of their size.
		size := 0
		for _, e := range b.ents {
			size += int(e.n)
		}
		names := make([]byte, 0, size)
		for j := range b.ents {
			e := &b.ents[j]
			at := len(names)
			names = append(names, b.names[e.off:e.off+e.n]...)
			e.off = uint32(at)
		}
		b.names = names
	}
}

// nodeIndex is node's index in t.nodes, added if new: the keys of a walk
// come from a node or a few.
func (t *lfuTop) nodeIndex(node string) int32 {
	for i := len(t.nodes) - 1; i >= 0; i-- {
		if t.nodes[i] == node {
			return int32(i)
		}
	}
	t.nodes = append(t.nodes, strings.Clone(node))
	return int32(len(t.nodes) - 1)
}

// sort orders b's entries as lfuCmp orders their keys.
func (t *lfuTop) sort(b *lfuBucket) {
	name := func(e *lfuEnt) string {
		return unsafe.String(unsafe.SliceData(b.names[e.off:]), int(e.n))
	}
	slices.SortFunc(b.ents, func(x, y lfuEnt) int {
		if x.freq != y.freq {
			return cmp.Compare(y.freq, x.freq)
		}
		return cmp.Or(strings.Compare(name(&x), name(&y)), cmp.Compare(x.db, y.db), strings.Compare(t.nodes[x.node], t.nodes[y.node]))
	})
}

// kept is the keys held, a superset of the k best (topLFU cuts them), in
// lfuCmp's order. Their names lie in one buffer. The counters are sorted
// on every core (after the walk, which has them to itself): a list of
// 100,000 sorted on one took 50 ms.
func (t *lfuTop) kept() []LFUKey {
	type place struct{ key, name int } // where a counter's keys and names go
	at := make([]place, 256)
	var p place
	for i := 255; i >= t.low; i-- {
		at[i] = p
		p.key += len(t.byFreq[i].ents)
		p.name += len(t.byFreq[i].names)
	}
	keys := make([]LFUKey, p.key)
	names := make([]byte, p.name)
	fill := func(i int) {
		b := &t.byFreq[i]
		t.sort(b)
		k, w := at[i].key, at[i].name
		for _, e := range b.ents {
			f := &keys[k]
			k++
			if e.n > 0 {
				copy(names[w:], b.names[e.off:e.off+e.n])
				f.Key = unsafe.String(&names[w], int(e.n))
				w += int(e.n)
			}
			f.DB, f.Freq, f.Node = int(e.db), int(e.freq), t.nodes[e.node]
		}
	}
	workers := min(runtime.GOMAXPROCS(0), 256-t.low)
	if p.key < 4096 {
		workers = 1
	}
	var next atomic.Int32
	next.Store(255)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(-1)) + 1; i >= t.low; i = int(next.Add(-1)) + 1 {
				fill(i)
			}
		})
	}
	wg.Wait()
	return keys
}

// MasterAddrs returns the address of every master of rdb: the client's
// own for a *redis.Client, each master's for a *redis.ClusterClient.
func MasterAddrs(ctx context.Context, rdb redis.UniversalClient) ([]string, error) {
	switch c := rdb.(type) {
	case *redis.Client:
		return []string{c.Options().Addr}, nil
	case *redis.ClusterClient:
		var mu sync.Mutex
		var addrs []string
		err := c.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
			mu.Lock()
			addrs = append(addrs, m.Options().Addr)
			mu.Unlock()
			return nil
		})
		slices.Sort(addrs)
		return addrs, err
	}
	return nil, fmt.Errorf("hotkey: need a *redis.Client or *redis.ClusterClient, not %T", rdb)
}
