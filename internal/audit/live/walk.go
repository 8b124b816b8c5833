package live

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/pace"
	"github.com/keyguard/keyguard/internal/resp"
)

// Walk is the audit's walk of every key for the other tools (investigate,
// migrate, hotkeys): every database of a standalone server with SCAN, or
// every slot of every master of a Cluster with CLUSTER GETKEYSINSLOT, with
// the same re-planning of slots a failover or a migration takes away, the
// same run_id checks, and the same coverage block. It hands the caller
// batches of keys (Visit), each with a connection to the node that holds
// them, for the caller's own per-key commands.

// DefaultRestarts is how many times WalkOptions.Restarts lets a server's
// walk start again after the server restarted under it.
const DefaultRestarts = 2

// WalkOptions tune a Walk. Visit is required.
type WalkOptions struct {
	Match string // SCAN MATCH glob; on a Cluster the listed keys are matched by the client
	// Type is SCAN's TYPE filter on a standalone server. A Cluster's slot
	// listing cannot filter by type: Visit sees keys of every type there.
	Type  string
	Count int // keys per batch (SCAN COUNT); default DefaultCount

	// Limiter, shared by every node, paces the walk: one unit per listing
	// round trip, PerListed per key it listed, and PerKey per key handed
	// to Visit (the commands Visit sends for it). nil: no limit.
	Limiter   *pace.Limiter
	PerKey    int
	PerListed int

	Replicas       bool // walk a replica of each master instead
	ReplicasPrefer bool // with Replicas, walk the master where there is no replica

	// Restarts is how many times a server's walk starts again from its
	// first key after the server restarted during it (a new run_id);
	// after that it is not covered. 0: DefaultRestarts; negative: never.
	Restarts int

	RetryFor  time.Duration // how long a node may fail before it is given up (default DefaultRetryFor)
	IOTimeout time.Duration // bound on one round trip (default DefaultIOTimeout)
	Name      string        // CLIENT SETNAME of the walk's connections (default keyguard-walk)
	NoTouch   bool          // CLIENT NO-TOUCH ON (Redis 7.2+) on Batch.Conn: reads leave LRU/LFU clocks alone

	// Cursor starts the walk of a server (one database: Target.Conn.DB is
	// not AllDBs) at a SCAN cursor an earlier walk handed over in
	// Batch.Next, instead of 0. Skip are Cluster slots an earlier walk
	// counted (Batch.Whole): they are not walked again. A walk resumed
	// this way covers what is left; its coverage says nothing of the rest.
	Cursor string
	Skip   []int

	// Visit is called with each batch of keys, from one goroutine per
	// node walked (at once on several nodes: guard what it shares). It may
	// send its own commands on Batch.Conn. An error it returns stops that
	// node's walk: on a server, a lost connection is redialed and Visit
	// called again with the same batch, so it must keep nothing of a call
	// that failed; on a Cluster the batch's slots are walked again on
	// their owner of the moment, in a new batch.
	Visit func(ctx context.Context, b *Batch) error
	// Restarted is called when a server restarted during its walk and the
	// walk of node's database db starts again from its first key: the
	// caller drops what it kept of that node and database, so no result
	// mixes two lives of the server. It is called from the node's
	// goroutine, between two Visits.
	Restarted func(node string, db int)
}

// Batch is one batch of keys of one node and database.
type Batch struct {
	Node string
	DB   int
	Role string // master or replica
	Keys []string
	// Slots is the Cluster slot of each key (nil on a server). A Cluster
	// batch holds whole slots: every key of each.
	Slots []int
	// Conn is a connection to Node, at DB (READONLY on a replica), for
	// the caller's commands; it is the walk's, and must not be closed.
	Conn *resp.Conn
	// Next is, on a server, the SCAN cursor after this batch ("0" after
	// the last): where WalkOptions.Cursor resumes once the batch is done.
	Next string
	// Whole is, on a Cluster, the slots this batch lists whole (with or
	// without keys): those not given back (Redone) are counted once Visit
	// returns nil, and an earlier walk's WalkOptions.Skip.
	Whole []int

	redo map[int]bool // Cluster slots given back
	gone []bool       // server: keys given back
}

// Redo gives back key i, whose command answered MOVED or ASK: on a
// Cluster its whole slot is walked again on its owner, in a later batch,
// so the caller must drop what it kept of every key of that slot in this
// batch (Dropped says which); on a server the key alone is skipped.
func (b *Batch) Redo(i int) {
	if b.Slots != nil {
		if b.redo == nil {
			b.redo = map[int]bool{}
		}
		b.redo[b.Slots[i]] = true
		return
	}
	if b.gone == nil {
		b.gone = make([]bool, len(b.Keys))
	}
	b.gone[i] = true
}

// Dropped reports whether key i was given back (Redo on it, or on a key of
// its slot): the caller keeps nothing of it.
func (b *Batch) Dropped(i int) bool {
	if b.Slots != nil {
		return b.redo[b.Slots[i]]
	}
	return b.gone != nil && b.gone[i]
}

// Redone reports whether a Cluster slot of the batch was given back.
func (b *Batch) Redone(slot int) bool { return b.redo[slot] }

// IsRedirect reports a MOVED or ASK reply (from this package's
// connections or another client's): the key's slot is served elsewhere.
func IsRedirect(err error) bool {
	if err == nil {
		return false
	}
	s := err.Error()
	return strings.HasPrefix(s, "MOVED ") || strings.HasPrefix(s, "ASK ")
}

// WalkResult is what a Walk covered.
type WalkResult struct {
	// Coverage is the nodes walked, and what was not covered and why,
	// as an audit report's coverage block.
	Coverage *report.Coverage
	// Complete is true when every key of every database (every slot) that
	// existed for the whole walk was handed to Visit exactly once, in one
	// life of its server.
	Complete bool
	Listed   int64    // keys listed in the parts covered (with Match: before the client's match on a Cluster)
	Notes    []string // what happened: restarts, slots walked again, keys given back
}

// Walk walks every key of t (Target.Conn.DB: one database, or AllDBs) and
// hands them to o.Visit in batches. It returns an error only when the walk
// could not start; a walk that stops early returns a result that is not
// Complete and says which part was not covered.
func Walk(ctx context.Context, t Target, o WalkOptions) (*WalkResult, error) {
	if o.Visit == nil {
		return nil, errors.New("walk: WalkOptions.Visit is nil")
	}
	if t.Conn.Addr == "" {
		return nil, errors.New("walk: Target.Conn.Addr is empty")
	}
	if t.Cluster && t.Conn.DB > 0 {
		return nil, fmt.Errorf("database %d: a Redis Cluster has only database 0", t.Conn.DB)
	}
	o.PerKey, o.PerListed = max(o.PerKey, 0), max(o.PerListed, 0)
	if o.Restarts == 0 {
		o.Restarts = DefaultRestarts
	}
	opts := Options{Count: o.Count, Match: o.Match, Replicas: o.Replicas, ReplicasPrefer: o.ReplicasPrefer, RetryFor: o.RetryFor, IOTimeout: o.IOTimeout}.withDefaults()
	if b := o.Limiter.Burst(); b > 0 {
		// One batch's commands fit one burst, so the pace stays even.
		opts.Count = max(1, min(opts.Count, b/max(o.PerKey+o.PerListed, 1)))
	}
	r := &run{t: t, opts: opts, name: cmp.Or(o.Name, "keyguard-walk"), runIDs: map[string]string{}}
	plans, err := r.plan(ctx)
	if err != nil {
		return nil, err
	}
	r.catchUp(ctx, plans)
	if o.Cursor != "" {
		if _, ok := resp.ParseInt([]byte(o.Cursor)); !ok || len(plans) != 1 || t.Cluster {
			return nil, fmt.Errorf("walk: cursor %q: a SCAN cursor resumes the walk of one database of one server", o.Cursor)
		}
		plans[0].cursor = o.Cursor
	}
	if len(o.Skip) > 0 {
		skip := map[int]bool{}
		for _, s := range o.Skip {
			skip[s] = true
		}
		keep := func(ss []int) []int { return slices.DeleteFunc(slices.Clone(ss), func(s int) bool { return skip[s] }) }
		plans = slices.DeleteFunc(plans, func(p nodePlan) bool { return len(keep(p.slotList)) == 0 })
		for i := range plans {
			plans[i].slotList = keep(plans[i].slotList)
		}
		r.startLeft = slices.DeleteFunc(r.startLeft, func(p pending) bool { return len(keep(p.slots)) == 0 })
		for i := range r.startLeft {
			r.startLeft[i].slots = keep(r.startLeft[i].slots)
		}
	}
	k := &keyWalk{r: r, o: o}
	if t.Cluster {
		if err := k.cluster(ctx, plans, r.startLeft); err != nil {
			return nil, err
		}
	} else {
		ws, err := k.start(ctx, plans)
		if err != nil {
			return nil, err
		}
		k.round(ctx, ws)
	}
	return k.result(), nil
}

// keyWalk is the state of one Walk.
type keyWalk struct {
	r *run
	o WalkOptions

	mu       sync.Mutex
	nodes    []*nodeWalk
	left     []pending // Cluster slots not counted in the end
	rewalked int
}

// nodeWalk walks one database of one node (on a Cluster, a list of
// slots): a lister goroutine lists keys ahead on its connection, the
// visitor hands them to Visit on another.
type nodeWalk struct {
	k    *keyWalk
	plan nodePlan
	sess resp.Session

	runID     string
	keysStart int64
	keysEnd   int64 // -1 unknown

	// Written by the node's goroutines, read after it ends.
	listed   int64 // keys listed in the parts counted (this life of the server)
	complete bool
	stop     string // a server's database not covered: why
	lives    int    // restarts walked again
	moved    int64  // keys given back on a server
	shrunk   bool
	notes    []string

	// A Cluster walk's slots: next to list, statistics to size chunks,
	// and what the visitor counted (done) or gave back (redo), up to
	// consumed.
	next                    int
	nodes                   nodesSeen // the lister's last CLUSTER NODES
	listedSlots, listedKeys int64
	consumed                int
	done, redo              []int
	why                     string
}

// keyBatch is a listed batch on its way to Visit.
type keyBatch struct {
	Batch
	listed   int64   // keys the listing returned (before the client's match)
	next     string  // SCAN: the cursor after it
	slots    []int   // Cluster: the slots listed
	slotKeys []int64 // keys in each, as listed
	bad      []int   // slots not served whole: walked again elsewhere
}

// errRestart ends a server's life in the walk: it restarted.
type errRestart struct{ was, now string }

func (e *errRestart) Error() string {
	return fmt.Sprintf("restarted during the walk (run_id %s, now %s)", short(e.was), short(e.now))
}

// start connects to every planned node. A server that cannot be reached
// is an error; a Cluster node's slots are left for the re-plan.
func (k *keyWalk) start(ctx context.Context, plans []nodePlan) ([]*nodeWalk, error) {
	ws := make([]*nodeWalk, len(plans))
	errs := make([]error, len(plans))
	var wg sync.WaitGroup
	for i, p := range plans {
		wg.Go(func() { ws[i], errs[i] = k.newNode(ctx, p) })
	}
	wg.Wait()
	var out []*nodeWalk
	for i, err := range errs {
		if err != nil {
			var ce *ConnectError
			if !k.r.t.Cluster || errors.As(err, &ce) && ce.Auth || ctx.Err() != nil {
				return nil, err
			}
			k.left = append(k.left, pending{slots: plans[i].slotList, node: plans[i].addr, reason: "node down: " + err.Error()})
			continue
		}
		out = append(out, ws[i])
	}
	k.mu.Lock()
	k.nodes = append(k.nodes, out...)
	k.mu.Unlock()
	return out, nil
}

func (k *keyWalk) newNode(ctx context.Context, p nodePlan) (*nodeWalk, error) {
	n := &nodeWalk{k: k, plan: p, keysEnd: -1,
		sess: resp.Session{DB: p.db, ReadOnly: p.readonly, Timeout: k.r.opts.IOTimeout}}
	c, err := k.r.dial(ctx, p.addr, n.sess)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	in, err := nodeInfo(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("%s: INFO: %w", p.addr, err)
	}
	if in, err = loadedInfo(ctx, c, in, k.r.opts.RetryFor, nil); err != nil {
		return nil, fmt.Errorf("%s: %w", p.addr, err)
	}
	n.runID, n.keysStart = in["run_id"], in.keys(p.db)
	if p.readonly {
		if why := in.stale(p.addr); why != "" {
			n.notes = append(n.notes, why)
		}
	}
	return n, nil
}

// round walks ws at once.
func (k *keyWalk) round(ctx context.Context, ws []*nodeWalk) {
	var wg sync.WaitGroup
	for _, n := range ws {
		wg.Go(func() {
			if n.plan.slotList != nil {
				n.walkSlots(ctx)
			} else {
				n.walkServer(ctx)
			}
		})
	}
	wg.Wait()
}

// cluster walks the planned masters, then walks again, on their owner of
// the moment, the slots that could not be counted, as the audit does
// (walkCluster), until none is left or none was counted for RetryFor.
func (k *keyWalk) cluster(ctx context.Context, plans []nodePlan, left []pending) error {
	r := k.r
	ws, err := k.start(ctx, plans)
	if err != nil {
		return err
	}
	if len(ws) == 0 && len(plans) > 0 {
		return fmt.Errorf("no node of the cluster could be reached: %s", k.left[0].reason)
	}
	left = append(left, k.left...)
	k.left = nil
	k.round(ctx, ws)
	left = append(left, leftOfNodes(ws)...)
	first := slotsIn(left)
	seeds := func() {
		for _, n := range ws {
			r.t.Seeds = append(r.t.Seeds, n.plan.addr)
		}
		r.t.Seeds = dedupe(r.t.Seeds)
	}
	left = r.replan(ctx, left, seeds, func(plans []nodePlan, still []pending) []pending {
		var err error
		if ws, err = k.start(ctx, plans); err != nil {
			for _, p := range plans {
				still = append(still, pending{slots: p.slotList, node: p.addr, reason: err.Error()})
			}
		}
		still = append(still, k.left...)
		k.left = nil
		k.round(ctx, ws)
		return append(still, leftOfNodes(ws)...)
	})
	k.rewalked = first - slotsIn(left) // each counted once, on a later round
	for i := range left {
		if left[i].reason == "" {
			left[i].reason = "interrupted"
		}
	}
	k.left = left
	return nil
}

// leftOfNodes are the slots the walks did not count.
func leftOfNodes(ws []*nodeWalk) []pending {
	var out []pending
	for _, n := range ws {
		ss := append(slices.Clone(n.redo), n.plan.slotList[n.consumed:]...)
		if len(ss) > 0 {
			out = append(out, pending{slots: ss, node: n.plan.addr, reason: n.why})
		}
	}
	return out
}

// walkServer walks one database of a server, and walks it again from the
// first key (up to Restarts times) when the server restarts under it.
func (n *nodeWalk) walkServer(ctx context.Context) {
	for {
		err := n.life(ctx)
		if err == nil {
			err = n.end(ctx)
		}
		if err == nil {
			n.complete = true
			return
		}
		var re *errRestart
		if errors.As(err, &re) && n.lives < n.k.o.Restarts {
			n.lives++
			n.notes = append(n.notes, fmt.Sprintf("%s restarted during the walk (run_id %s, now %s): database %d was walked again from its first key, and nothing of the earlier life was kept", n.plan.addr, short(re.was), short(re.now), n.plan.db))
			if f := n.k.o.Restarted; f != nil {
				f(n.plan.addr, n.plan.db)
			}
			n.runID, n.listed, n.moved, n.shrunk, n.keysEnd = re.now, 0, 0, false, -1
			n.plan.cursor = "0"
			n.keysStart = -1 // unknown, unless read below
			if k, err := n.keysNow(ctx); err == nil {
				n.keysStart = k
			}
			continue
		}
		switch {
		case errors.As(err, &re):
			n.stop = fmt.Sprintf("%s, and it had restarted %d times before: database %d was not covered", re.Error(), n.lives, n.plan.db)
		case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
			n.stop = "timed out"
		case ctx.Err() != nil:
			n.stop = "interrupted"
		default:
			n.stop = err.Error()
		}
		return
	}
}

// keysNow reads the database's key count.
//
// A server that is loading its dataset (just restarted, or a replica in a
// full sync) counts in INFO keyspace the keys loaded so far: keysNow waits
// until it has loaded them, as the walk's own commands do (n.retry, up to
// Options.RetryFor).
func (n *nodeWalk) keysNow(ctx context.Context) (int64, error) {
	var c *resp.Conn
	defer func() {
		if c != nil {
			c.Close()
		}
	}()
	var keys int64
	err := n.retry(ctx, &c, func(c *resp.Conn) error {
		in, err := nodeInfo(ctx, c)
		if err != nil {
			return err
		}
		if in["loading"] == "1" {
			return errLoading
		}
		keys = in.keys(n.plan.db)
		return nil
	})
	return keys, err
}

// errLoading is a server still loading its dataset: retried.
var errLoading = errors.New("LOADING: the server is loading its dataset")

// end checks, after a server's database was walked, that it is still the
// life the walk began in, and reads its key count.
func (n *nodeWalk) end(ctx context.Context) error {
	var c *resp.Conn
	defer func() {
		if c != nil {
			c.Close()
		}
	}()
	return n.retry(ctx, &c, func(c *resp.Conn) error {
		in, err := nodeInfo(ctx, c)
		if err != nil {
			return err
		}
		n.keysEnd = in.keys(n.plan.db)
		return nil
	})
}

// life walks a server's database once: SCAN from cursor 0 to 0.
func (n *nodeWalk) life(ctx context.Context) error {
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := make(chan *keyBatch, 2)
	var lerr error
	go func() {
		lerr = n.listServer(lctx, ch)
		close(ch)
	}()
	verr := n.visitServer(lctx, ch)
	cancel()
	for range ch {
	}
	var re *errRestart
	switch {
	case errors.As(lerr, &re):
		return lerr
	case errors.As(verr, &re):
		return verr
	case ctx.Err() != nil:
		return ctx.Err()
	case verr != nil:
		return verr
	case lerr != nil:
		return lerr
	}
	return nil
}

// listServer SCANs the database and sends the batches.
func (n *nodeWalk) listServer(ctx context.Context, out chan<- *keyBatch) error {
	var c *resp.Conn
	defer func() {
		if c != nil {
			c.Close()
		}
	}()
	o, count := &n.k.o, strconv.Itoa(n.k.r.opts.Count)
	var shrink shrinkWatch
	for cursor := n.plan.cursor; ; {
		var b *keyBatch
		err := n.retry(ctx, &c, func(c *resp.Conn) error {
			if err := o.Limiter.Wait(ctx, 1); err != nil {
				return err
			}
			args := []string{"SCAN", cursor}
			if o.Match != "" {
				args = append(args, "MATCH", o.Match)
			}
			args = append(args, "COUNT", count)
			if o.Type != "" {
				args = append(args, "TYPE", o.Type)
			}
			if err := c.Begin(ctx); err != nil {
				return err
			}
			c.Cmd(args...)
			c.Take()
			if err := c.Flush(); err != nil {
				return err
			}
			var err error
			b, err = n.readScan(c, cursor)
			return err
		})
		if err != nil {
			return err
		}
		cursor = b.next
		// SCAN reads about COUNT keys, whatever MATCH and TYPE return.
		if err := o.Limiter.Wait(ctx, max(int(b.listed), n.k.r.opts.Count)*o.PerListed); err != nil {
			return err
		}
		select {
		case out <- b:
		case <-ctx.Done():
			return ctx.Err()
		}
		if cursor == "0" {
			return nil
		}
		if shrink.see(cursor) {
			n.shrunk = true
		}
	}
}

func (n *nodeWalk) readScan(c *resp.Conn, cursor string) (*keyBatch, error) {
	rp, err := c.Read()
	if err != nil {
		return nil, err
	}
	if rp.Kind == '-' {
		se := resp.ServerError(rp.Str)
		switch se.Code() {
		case "LOADING", "BUSY", "TRYAGAIN", "MASTERDOWN":
			return nil, se
		}
		return nil, &stopError{scanRefused(cursor, se)}
	}
	if rp.Kind != '*' || rp.N != 2 {
		return nil, unexpected("SCAN", rp)
	}
	cr, err := c.Read()
	if err != nil {
		return nil, err
	}
	if _, ok := resp.ParseInt(cr.Str); cr.Kind != '$' || !ok {
		return nil, unexpected("SCAN cursor", cr)
	}
	b := &keyBatch{next: string(cr.Str)}
	kr, err := c.Read()
	if err != nil {
		return nil, err
	}
	if kr.Kind != '*' {
		return nil, unexpected("SCAN keys", kr)
	}
	b.listed = kr.N
	b.Keys = make([]string, 0, kr.N)
	for range kr.N {
		k, err := c.Read()
		if err != nil {
			return nil, err
		}
		if k.Kind != '$' {
			return nil, unexpected("SCAN key", k)
		}
		b.Keys = append(b.Keys, string(k.Str))
	}
	return b, nil
}

// visitServer hands the batches to Visit, in SCAN order, redialing (and
// calling Visit again with the batch) when the connection is lost.
func (n *nodeWalk) visitServer(ctx context.Context, in <-chan *keyBatch) error {
	var c *resp.Conn
	defer func() {
		if c != nil {
			c.Close()
		}
	}()
	for b := range in {
		err := n.retry(ctx, &c, func(c *resp.Conn) error { return n.visit(ctx, c, b) })
		if err != nil {
			return err
		}
		n.listed += b.listed
		for i := range b.Keys {
			if b.Dropped(i) {
				n.moved++
			}
		}
	}
	return nil
}

// visit calls Visit with one batch on c.
func (n *nodeWalk) visit(ctx context.Context, c *resp.Conn, b *keyBatch) error {
	b.redo, b.gone = nil, nil
	if len(b.Keys) == 0 {
		return nil
	}
	o := &n.k.o
	if err := o.Limiter.Wait(ctx, len(b.Keys)*o.PerKey); err != nil {
		return err
	}
	b.Node, b.DB, b.Role, b.Conn, b.Next = n.plan.addr, n.plan.db, n.plan.role, c, b.next
	if b.slots != nil {
		b.Next, b.Whole = "", slices.DeleteFunc(slices.Clone(b.slots), func(s int) bool { return slices.Contains(b.bad, s) })
	}
	err := o.Visit(ctx, &b.Batch)
	b.Conn = nil
	if err != nil && !lostConn(err) {
		return &stopError{err}
	}
	return err
}

// lostConn reports an error of the connection rather than of a command:
// worth a redial.
func lostConn(err error) bool {
	var ne net.Error
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, resp.ErrProtocol) || errors.As(err, &ne)
}

// retry runs fn on *c, dialing when there is none, until it succeeds,
// fails for good, or the node has failed for longer than RetryFor. A
// redial checks the run_id: a server that restarted ends its life in the
// walk (errRestart); a Cluster node goes on, as a slot is counted whole
// in one life.
func (n *nodeWalk) retry(ctx context.Context, c **resp.Conn, fn func(*resp.Conn) error) error {
	var since time.Time
	backoff := 50 * time.Millisecond
	for {
		var err error
		if *c == nil {
			*c, err = n.k.r.dial(ctx, n.plan.addr, n.connSession())
			if err == nil {
				err = n.checkRestart(ctx, *c)
			}
		}
		if err == nil {
			if err = fn(*c); err == nil {
				return nil
			}
		}
		if *c != nil {
			(*c).Close()
			*c = nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var se *stopError
		var ce *ConnectError
		var re *errRestart
		switch {
		case errors.As(err, &re):
			return err
		case errors.As(err, &se):
			return se.err
		case errors.As(err, &ce) && ce.Auth:
			return err
		}
		if since.IsZero() {
			since = time.Now()
		} else if time.Since(since) > n.k.r.opts.RetryFor {
			return fmt.Errorf("node down, gave up after %v: %w", n.k.r.opts.RetryFor, err)
		}
		if err := sleepCtx(ctx, backoff); err != nil {
			return err
		}
		backoff = min(backoff*2, time.Second)
	}
}

func (n *nodeWalk) connSession() resp.Session {
	s := n.sess
	s.NoTouch = n.k.o.NoTouch
	return s
}

func (n *nodeWalk) checkRestart(ctx context.Context, c *resp.Conn) error {
	in, err := nodeInfo(ctx, c)
	if err != nil {
		return err
	}
	id := in["run_id"]
	if id == "" || id == n.runID {
		return nil
	}
	if n.plan.slotList == nil {
		return &errRestart{was: n.runID, now: id}
	}
	n.k.mu.Lock()
	defer n.k.mu.Unlock()
	if !slices.ContainsFunc(n.notes, func(s string) bool { return strings.Contains(s, "restarted") }) {
		n.notes = append(n.notes, fmt.Sprintf("%s restarted during the walk (run_id %s, now %s); each slot was counted whole, in one life of the server", n.plan.addr, short(n.runID), short(id)))
	}
	return nil
}

// walkSlots walks a Cluster node's slots: the lister lists a chunk of
// slots and checks the node still serves them whole, the visitor hands
// them to Visit; slots not counted are left for the re-plan.
func (n *nodeWalk) walkSlots(ctx context.Context) {
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := make(chan *keyBatch, 2)
	var lerr error
	go func() {
		lerr = n.listSlots(lctx, ch)
		close(ch)
	}()
	verr := n.visitSlots(lctx, ch)
	cancel()
	for range ch {
	}
	if k, err := n.keysNow(ctx); err == nil {
		n.keysEnd = k
	}
	if n.consumed == len(n.plan.slotList) && len(n.redo) == 0 {
		n.complete = true
		return
	}
	switch {
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		n.why = "timed out"
	case ctx.Err() != nil:
		n.why = "interrupted"
	case errors.Is(lerr, errNotOwner):
		n.why = "the node stopped serving these slots during the walk (failover or slot migration), and they could not be walked on their new owner"
	case lerr != nil && !errors.Is(lerr, context.Canceled):
		n.why = lerr.Error()
	case verr != nil && !errors.Is(verr, context.Canceled):
		n.why = verr.Error()
	default:
		n.why = "slots moved during the walk (MOVED or ASK, or a migration in progress) and could not be walked again on their owner"
	}
}

// listSlots lists chunks of slots with GETKEYSINSLOT, then CLUSTER NODES
// to drop the slots the node no longer serves whole.
func (n *nodeWalk) listSlots(ctx context.Context, out chan<- *keyBatch) error {
	var c *resp.Conn
	defer func() {
		if c != nil {
			c.Close()
		}
	}()
	o := &n.k.o
	for n.next < len(n.plan.slotList) {
		chunk := n.nextChunk(n.k.r.opts.Count)
		var b *keyBatch
		err := n.retry(ctx, &c, func(c *resp.Conn) error {
			if err := o.Limiter.Wait(ctx, 1); err != nil {
				return err
			}
			if err := c.Begin(ctx); err != nil {
				return err
			}
			writeSlots(c, chunk)
			c.Take()
			if err := c.Flush(); err != nil {
				return err
			}
			var err error
			b, err = n.readSlots(c, chunk)
			return err
		})
		if err != nil {
			return err
		}
		n.next += len(chunk)
		n.listedSlots += int64(len(chunk))
		n.listedKeys += b.listed
		if err := o.Limiter.Wait(ctx, int(b.listed)*o.PerListed); err != nil {
			return err
		}
		lost := b.next == "lost"
		for _, part := range b.split(n.k.r.opts.Count) {
			select {
			case out <- part:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if lost {
			return errNotOwner
		}
	}
	return nil
}

// nextChunk is the slots of the next listing: about keys keys, from the
// keys per slot seen so far.
func (n *nodeWalk) nextChunk(keys int) []int {
	rest := n.plan.slotList[n.next:]
	per := float64(n.keysStart) / float64(max(len(n.plan.slotList), 1))
	if n.listedSlots > 0 {
		per = float64(n.listedKeys) / float64(n.listedSlots)
	}
	c := maxChunkSlots
	if per > 0 {
		c = int(float64(keys)/per) + 1
	}
	return rest[:min(max(c, 1), maxChunkSlots, len(rest))]
}

func (n *nodeWalk) readSlots(c *resp.Conn, chunk []int) (*keyBatch, error) {
	b := &keyBatch{slots: chunk}
	for _, s := range chunk {
		listed, err := readSlotListing(c, s, n.k.o.Match, "+cluster|getkeysinslot (docs/audit-acl.md)", "walked", func(k []byte) {
			b.Keys = append(b.Keys, string(k))
			b.Slots = append(b.Slots, s)
		})
		if err != nil {
			return nil, err
		}
		b.slotKeys = append(b.slotKeys, listed)
		b.listed += listed
	}
	rp, err := c.Read()
	if err != nil {
		return nil, err
	}
	if rp.Kind != '$' {
		if rp.Kind == '-' {
			return nil, resp.ServerError(rp.Str)
		}
		return nil, unexpected("CLUSTER NODES", rp)
	}
	bad, lost := n.nodes.notServed(rp.Str, chunk, &n.plan)
	if lost {
		b.next = "lost"
	}
	if len(bad) > 0 {
		b.bad = bad
		isBad := map[int]bool{}
		for _, s := range bad {
			isBad[s] = true
		}
		j := 0
		for i, s := range b.Slots {
			if !isBad[s] {
				b.Keys[j], b.Slots[j] = b.Keys[i], s
				j++
			}
		}
		b.Keys, b.Slots = b.Keys[:j], b.Slots[:j]
	}
	if b.Slots == nil {
		b.Slots = []int{} // a Cluster batch, though without keys
	}
	return b, nil
}

// split cuts a Cluster batch at slot boundaries into batches of at most
// count keys (a slot that holds more stays whole), so that Visit gets
// batches of the size asked for.
func (b *keyBatch) split(count int) []*keyBatch {
	if len(b.Keys) <= count {
		return []*keyBatch{b}
	}
	bad := map[int]bool{}
	for _, s := range b.bad {
		bad[s] = true
	}
	var out []*keyBatch
	cur := &keyBatch{}
	k := 0 // next key of b
	for i, s := range b.slots {
		from := k
		for k < len(b.Keys) && b.Slots[k] == s {
			k++
		}
		if len(cur.Keys) > 0 && len(cur.Keys)+k-from > count {
			out = append(out, cur)
			cur = &keyBatch{}
		}
		cur.slots = append(cur.slots, s)
		cur.slotKeys = append(cur.slotKeys, b.slotKeys[i])
		cur.listed += b.slotKeys[i]
		if bad[s] {
			cur.bad = append(cur.bad, s)
		}
		cur.Keys = append(cur.Keys, b.Keys[from:k]...)
		cur.Slots = append(cur.Slots, b.Slots[from:k]...)
	}
	cur.next = b.next
	out = append(out, cur)
	for _, p := range out {
		if p.Slots == nil {
			p.Slots = []int{}
		}
	}
	return out
}

// visitSlots hands the listed slots to Visit. A batch Visit fails on is
// given back whole, with the slots after it, for the re-plan.
func (n *nodeWalk) visitSlots(ctx context.Context, in <-chan *keyBatch) error {
	var c *resp.Conn
	defer func() {
		if c != nil {
			c.Close()
		}
	}()
	for b := range in {
		if len(b.Keys) > 0 {
			err := n.retryOnce(ctx, &c, func(c *resp.Conn) error { return n.visit(ctx, c, b) })
			if err != nil {
				return err
			}
		}
		bad := map[int]bool{}
		for _, s := range b.bad {
			bad[s] = true
		}
		for i, s := range b.slots {
			if bad[s] || b.redo[s] {
				n.redo = append(n.redo, s)
				continue
			}
			n.done = append(n.done, s)
			n.listed += b.slotKeys[i]
		}
		n.consumed += len(b.slots)
		if b.next == "lost" {
			return errNotOwner
		}
	}
	return nil
}

// retryOnce runs fn on *c, dialing when there is none; a Cluster node's
// failure is not retried here: its slots are walked again after the
// topology is read again.
func (n *nodeWalk) retryOnce(ctx context.Context, c **resp.Conn, fn func(*resp.Conn) error) error {
	var err error
	if *c == nil {
		if *c, err = n.k.r.dial(ctx, n.plan.addr, n.connSession()); err != nil {
			*c = nil
			return err
		}
	}
	if err = fn(*c); err != nil {
		(*c).Close()
		*c = nil
		var se *stopError
		if errors.As(err, &se) {
			return se.err
		}
	}
	return err
}

// result is the coverage of the walk.
func (k *keyWalk) result() *WalkResult {
	r := k.r
	res := &WalkResult{}
	c := &report.Coverage{}
	byAddr := map[string]int{}
	counted := map[string]bool{}
	var moved int64
	shrunk := 0
	for _, n := range k.nodes {
		i, ok := byAddr[n.plan.addr]
		if !ok {
			i = len(c.Nodes)
			byAddr[n.plan.addr] = i
			c.Nodes = append(c.Nodes, report.CoverageNode{Addr: n.plan.addr, Role: n.plan.role, RunID: n.runID})
		}
		cn := &c.Nodes[i]
		d := report.CoverageDB{DB: n.plan.db, KeysStart: n.keysStart, KeysEnd: n.keysEnd, Counted: n.listed, Complete: n.complete}
		if j := slices.IndexFunc(cn.DBs, func(e report.CoverageDB) bool { return e.DB == d.DB }); j >= 0 {
			e := &cn.DBs[j]
			e.Counted += d.Counted
			e.Complete = e.Complete && d.Complete
			if d.KeysEnd >= 0 {
				e.KeysEnd = d.KeysEnd
			}
		} else {
			cn.DBs = append(cn.DBs, d)
		}
		switch {
		case n.plan.slotList != nil && len(n.done) > 0:
			cn.Slots = report.JoinSlotRanges(cn.Slots, report.SlotRanges(n.done))
			counted[n.plan.addr] = true
		case n.complete && n.plan.slots != "":
			cn.Slots = report.JoinSlotRanges(cn.Slots, n.plan.slots)
			counted[n.plan.addr] = true
		}
		if n.stop != "" {
			db := n.plan.db
			c.NotCovered = append(c.NotCovered, report.Gap{Node: n.plan.addr, DB: &db, Reason: n.stop})
		}
		res.Listed += n.listed
		moved += n.moved
		if n.shrunk {
			shrunk++
		}
		res.Notes = append(res.Notes, n.notes...)
	}
	for _, p := range k.left {
		c.NotCovered = append(c.NotCovered, report.Gap{Node: p.node, Slots: report.SlotRanges(p.slots), Reason: p.reason})
	}
	if r.t.Cluster || r.alone {
		c.Cluster = r.clusterCoverage(c.Nodes, len(counted))
	}
	c.Finish()
	res.Coverage = c
	res.Complete = len(c.NotCovered) == 0
	res.Notes = append(r.notes, res.Notes...)
	if k.rewalked > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("the Cluster changed during the walk (a failover or slot migration): %d slots were walked again on their owner of the moment; each slot was counted once, whole", k.rewalked))
	}
	if moved > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d keys answered MOVED or ASK (slots migrating during the walk) and were skipped on the old node", moved))
	}
	if shrunk > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("the key table of %d node(s) shrank during the walk: SCAN may return a key twice after a shrink", shrunk))
	}
	res.Notes = dedupe(res.Notes)
	return res
}

// TargetOf is the target of a walk from a connection config (see
// redisopt.Reach for a go-redis client's): its first address, the others
// as Cluster seeds.
func TargetOf(cfg resp.Config, addrs []string, db int, cluster bool) Target {
	t := Target{Conn: Conn{Network: cfg.Network, Username: cfg.Username, Password: cfg.Password, TLS: cfg.TLS,
		DialTimeout: cfg.DialTimeout, Dialer: cfg.Dialer, DB: db}, Cluster: cluster}
	if len(addrs) > 0 {
		t.Conn.Addr, t.Seeds = addrs[0], addrs[1:]
		t.Display = "redis://" + addrs[0]
	}
	return t
}
