package live

import (
	"context"
	"errors"
	"fmt"
	"github.com/keyguard/keyguard/internal/human"
	"math/bits"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/keyguard/keyguard/internal/audit/inventory"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/resp"
)

// walker walks one node: a prober goroutine (SCAN and the probes, one
// pipeline per batch on conn) and a consumer goroutine that hands the
// batches, in SCAN order, to the run's aggregation pipeline.
type walker struct {
	r    *run
	plan nodePlan
	addr string
	sess resp.Session // for redials

	conn *resp.Conn            // the prober's
	cls  *inventory.Classifier // the prober's: one lookup per key
	// ahead holds the keys classAhead hands the classifier; aheadSink
	// what it read of their families, kept so that its loads stay.
	ahead     []string
	aheadSink int

	runID   string
	version int
	policy  string
	lfu     bool
	canFreq bool
	canMem  bool // MEMORY USAGE exists (a server may rename it away)
	canNS   bool
	canFlds bool
	total   int64 // keys at the start
	keysEnd int64 // keys at the end; -1 unknown
	rng     *rand.Rand
	enc     encodings

	scanned  atomic.Int64 // progress: keys SCAN returned
	finished atomic.Bool
	vanished atomic.Int64 // keys gone between SCAN and a probe
	moved    atomic.Int64 // keys that answered MOVED or ASK
	denied   atomic.Int64 // keys the ACL user may not read

	// Written by newWalker, then by the prober (restarted, shrunk,
	// notes) or the consumer (scannedDone, resume, probed); read after
	// walk returns.
	scannedDone int64  // keys SCAN (or GETKEYSINSLOT, of the slots counted) returned up to resume
	resume      string // cursor after the last batch added
	probed      int64
	restarted   bool
	touches     bool // no CLIENT NO-TOUCH: counts refresh LRU/LFU clocks
	shrunk      bool
	stop        *report.NodeStop
	notes       []string

	// A Cluster walk's slots (plan.slotList): the prober lists them from
	// next on; the consumer counts them (done) or gives them back (redo)
	// in batches, up to consumed.
	next                    int
	nodes                   nodesSeen // the prober's last CLUSTER NODES
	listedSlots, listedKeys int64
	consumed                int
	done, redo              []int
	why                     string // why the slots left were not counted
}

// stopError is a condition that retrying will not fix.
type stopError struct{ err error }

func (e *stopError) Error() string { return e.err.Error() }

func (e *stopError) Unwrap() error { return e.err }

// Commands the walker cannot do without, with their ACL names, in the
// order of the permission probe.
var essential = []struct{ acl, cmd string }{
	{"scan", "SCAN"}, {"type", "TYPE"}, {"pttl", "PTTL"}, {"memory|usage", "MEMORY"},
	{"strlen", "STRLEN"}, {"hlen", "HLEN"}, {"llen", "LLEN"}, {"scard", "SCARD"}, {"zcard", "ZCARD"}, {"xlen", "XLEN"},
}

// probeKey is the key the permission probe reads; it need not exist.
const probeKey = "keyguard:audit:permission-probe"

// newWalker connects to a node, reads INFO and checks the ACL user's
// permissions.
func (r *run) newWalker(ctx context.Context, p nodePlan) (*walker, error) {
	w := &walker{r: r, plan: p, addr: p.addr, resume: p.cursor, keysEnd: -1,
		sess: resp.Session{DB: p.db, ReadOnly: p.readonly, Timeout: r.opts.IOTimeout}}
	seed := r.opts.Seed
	if seed == 0 {
		seed = rand.Uint64()
	}
	w.rng = rand.New(rand.NewPCG(seed, keyHashString(p.addr)))
	w.enc = newEncodings(r.opts.MemorySamples)
	c, err := r.dial(ctx, p.addr, w.sess)
	if err != nil {
		return nil, err
	}
	w.conn = c
	in, err := nodeInfo(ctx, c)
	if err != nil {
		c.Close()
		var se resp.ServerError
		if errors.As(err, &se) && se.Code() == "NOPERM" {
			return nil, &PermissionError{Addr: p.addr, Commands: []string{"info"}, Reply: string(se)}
		}
		return nil, fmt.Errorf("%s: INFO: %w", p.addr, err)
	}
	if in, err = loadedInfo(ctx, c, in, r.opts.RetryFor, nil); err != nil {
		c.Close()
		return nil, fmt.Errorf("%s: %w", p.addr, err)
	}
	w.runID = in["run_id"]
	if p.readonly {
		// A Cluster replica walked for its master (a server's own is
		// named by serverPlan).
		if why := in.stale(p.addr); why != "" {
			w.notes = append(w.notes, why)
		}
	}
	w.version = in.version()
	w.policy = in["maxmemory_policy"]
	w.lfu = in.lfu()
	w.total = in.keys(p.db)
	if err := w.permissions(ctx); err != nil {
		c.Close()
		return nil, err
	}
	// The first probe reads hashes and strings whole (probe.go), but not
	// when asked to read no values.
	w.enc.values = w.canFlds && !r.opts.Inventory.SkipFields
	return w, nil
}

// permissions runs every command the walk uses once on probeKey and
// turns NOPERM replies into a PermissionError (essential commands) or a
// disabled probe and a note (optional ones).
func (w *walker) permissions(ctx context.Context) error {
	c := w.conn
	if err := c.Begin(ctx); err != nil {
		return err
	}
	c.Cmd("SCAN", "0", "COUNT", "1")
	c.Cmd("TYPE", probeKey)
	c.Cmd("PTTL", probeKey)
	c.Cmd("MEMORY", "USAGE", probeKey, "SAMPLES", "1")
	for _, cmd := range countCmds {
		c.Cmd(cmd, probeKey)
	}
	c.Cmd("HGET", probeKey, "__ns__")
	c.Cmd("HRANDFIELD", probeKey, "1")
	c.Cmd("GETRANGE", probeKey, "0", "0")
	if w.lfu {
		c.Cmd("OBJECT", "FREQ", probeKey)
	}
	noTouch := w.version >= 702
	if noTouch {
		c.Cmd("CLIENT", "NO-TOUCH", "ON")
	}
	slots := w.plan.slotList != nil
	if slots {
		c.Cmd("CLUSTER", "GETKEYSINSLOT", "0", "0")
	}
	n := c.Take()
	if err := c.Flush(); err != nil {
		return &ConnectError{Addr: w.addr, Err: err}
	}
	errs := make([]string, n) // the error reply of each command, "" when fine
	for i := range n {
		rp, err := c.Read()
		if err == nil {
			err = c.Skip(rp)
		}
		if err != nil {
			return &ConnectError{Addr: w.addr, Err: err}
		}
		if rp.Kind == '-' {
			errs[i] = string(rp.Str)
		}
	}
	denied := func(e string) bool { return strings.HasPrefix(e, "NOPERM") && !strings.Contains(e, "key") }
	var missing []string
	var reply string
	for i, e := range essential {
		if denied(errs[i]) {
			missing = append(missing, e.acl)
			reply = errs[i]
		}
	}
	if missing != nil {
		return &PermissionError{Addr: w.addr, Commands: missing, Reply: reply}
	}
	w.canMem = !unknownCommand(errs[3])
	if !w.canMem {
		w.notes = append(w.notes, fmt.Sprintf("memory was not measured on %s: MEMORY USAGE: %s (the server renamed or disabled it; keyguard rdb measures memory from a snapshot of it)", w.addr, human.OneLine(strings.SplitN(errs[3], ", with args", 2)[0])))
	}
	i := len(essential)
	w.canNS = errs[i] == "" || !denied(errs[i]) && !unknownCommand(errs[i])
	if !w.canNS {
		w.notes = append(w.notes, fmt.Sprintf("guard rules (guard/ownerless, guard/foreign-owner) were not checked on %s: HGET %s", w.addr, errs[i]))
	}
	hr, gr := errs[i+1], errs[i+2]
	w.canFlds = !denied(hr) && !unknownCommand(hr) && !denied(gr) && !unknownCommand(gr)
	if !w.canFlds {
		why := hr
		if why == "" || !denied(why) && !unknownCommand(why) {
			why = gr
		}
		w.notes = append(w.notes, fmt.Sprintf("mixed-schema and value-format were not checked on %s: HRANDFIELD/GETRANGE: %s", w.addr, why))
	}
	i += 3
	if w.lfu {
		w.canFreq = !denied(errs[i]) && !unknownCommand(errs[i])
		if !w.canFreq {
			w.notes = append(w.notes, fmt.Sprintf("hot-key data unavailable on %s: OBJECT FREQ: %s", w.addr, errs[i]))
		}
		i++
	}
	if noTouch {
		if errs[i] == "" {
			w.sess.NoTouch = true
		} else {
			noTouch = false
		}
		i++
	}
	w.touches = !noTouch
	if slots && denied(errs[i]) {
		return &PermissionError{Addr: w.addr, Commands: []string{"cluster|getkeysinslot"}, Reply: errs[i]}
	}
	return nil
}

func unknownCommand(e string) bool { return strings.HasPrefix(e, "ERR unknown command") }

// scanRefused is why a SCAN the server refused stops a walk, with what
// to do where the server has renamed or disabled SCAN (rename-command).
func scanRefused(cursor string, se resp.ServerError) error {
	if unknownCommand(string(se)) {
		return fmt.Errorf("SCAN %s: %s: the server has no SCAN (renamed or disabled with rename-command), which a walk needs to list the keys; give the walk SCAN back, or read the keys from the server's snapshot instead (--snapshot, or keyguard rdb of its RDB file)", cursor, strings.TrimSpace(string(se)))
	}
	return fmt.Errorf("SCAN %s: %v", cursor, se)
}

// walk runs the prober and the consumer until the node is done, fails
// or ctx ends, and records where it stopped.
func (w *walker) walk(ctx context.Context) {
	w.cls = w.r.pipe.Classifier()
	nctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := make(chan *batch, 2)
	free := make(chan *batch, 4)
	var perr error
	go func() {
		perr = w.produce(nctx, ch, free)
		close(ch)
	}()
	cerr := w.consume(nctx, ch, free)
	cancel()
	for range ch {
	}
	if w.finished.Load() {
		w.end(ctx)
	}
	w.closeConn()
	if w.finished.Load() || w.stop != nil {
		return
	}
	if w.plan.slotList != nil {
		w.why = w.slotReason(ctx, perr, cerr)
		return
	}
	var reason string
	switch {
	case ctx.Err() != nil:
		reason = "interrupted"
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			reason = "timed out"
		}
	case perr != nil && !errors.Is(perr, context.Canceled):
		reason = perr.Error()
	case cerr != nil:
		reason = cerr.Error()
	default:
		reason = "stopped"
	}
	w.stop = &report.NodeStop{Node: w.addr, DB: w.plan.db, Reason: reason, Cursor: w.resume, Keys: w.scannedDone, RunID: w.runID}
}

// end reads the node's key count after the walk, and checks that the
// server did not restart since the walk began.
func (w *walker) end(ctx context.Context) {
	if w.conn == nil {
		if w.retry(ctx, func(*resp.Conn) error { return nil }) != nil {
			return
		}
	}
	in, err := nodeInfo(ctx, w.conn)
	if err != nil {
		return
	}
	w.keysEnd = in.keys(w.plan.db)
	if why := w.roleChanged(in); why != "" {
		w.notes = append(w.notes, why)
	}
	if id := in["run_id"]; id != "" && id != w.runID && w.plan.slotList == nil {
		w.restarted = true
		w.finished.Store(false)
		w.stop = &report.NodeStop{Node: w.addr, DB: w.plan.db, Cursor: w.resume, Keys: w.scannedDone, RunID: w.runID,
			Reason: fmt.Sprintf("restarted during the walk (run_id %s, now %s): the keys counted may mix two lives of the server: audit again", short(w.runID), short(id))}
	}
}

// roleChanged says when a server walked alone (not a Cluster's, whose
// walk follows its slots) changed role during the walk: a master demoted
// to a replica (a Sentinel's failover that leaves it up) or a replica
// promoted. Its walk went on to the end on the same dataset; "" when the
// role is the one planned.
func (w *walker) roleChanged(in info) string {
	if w.plan.slotList != nil || w.plan.db != w.firstDB() {
		return ""
	}
	role := in["role"]
	switch {
	case w.plan.role == "master" && role == "slave":
		return fmt.Sprintf("%s became a replica of %s during the walk (a failover): it was walked to the end, holding its new master's keys; writes made to the new master meanwhile reached it a moment later", w.addr, net.JoinHostPort(in["master_host"], in["master_port"]))
	case w.plan.role == "replica" && role == "master":
		return fmt.Sprintf("%s was promoted to master during the walk (a failover): it was walked to the end", w.addr)
	}
	return ""
}

// firstDB is the first database walked on the node, so that a role change
// is noted once per node, not once per database.
func (w *walker) firstDB() int {
	w.r.mu.Lock()
	defer w.r.mu.Unlock()
	first := w.plan.db
	for _, o := range w.r.walkers {
		if o.addr == w.addr && o.plan.slotList == nil && o.plan.db < first {
			first = o.plan.db
		}
	}
	return first
}

// slotReason says why a Cluster walker left slots uncounted.
func (w *walker) slotReason(ctx context.Context, perr, cerr error) string {
	switch {
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return "timed out"
	case ctx.Err() != nil:
		return "interrupted"
	case errors.Is(perr, errNotOwner):
		return "the node stopped serving these slots during the walk (failover or slot migration), and they could not be walked on their new owner"
	case perr != nil && !errors.Is(perr, context.Canceled):
		return perr.Error()
	case cerr != nil:
		return cerr.Error()
	}
	return "slots moved during the walk (MOVED or ASK, or a migration in progress) and could not be walked again on their owner"
}

func (w *walker) closeConn() {
	if w.conn != nil {
		w.conn.Close()
		w.conn = nil
	}
}

func (w *walker) countDrop(d uint8) {
	switch d {
	case dropVanished:
		w.vanished.Add(1)
	case dropMoved:
		w.moved.Add(1)
	case dropDenied:
		w.denied.Add(1)
	}
}

// keyError handles an error reply to a per-key command: the key moved
// (Cluster resharding) or may not be read (ACL key patterns) and is
// dropped; the whole pipeline is retried when the node is loading or the
// cluster is down; a missing command permission stops the node; anything
// else (WRONGTYPE after the key was replaced) leaves the value unknown.
func (w *walker) keyError(rp resp.Reply, d *uint8) error {
	se := resp.ServerError(rp.Str)
	switch se.Code() {
	case "MOVED", "ASK":
		*d = max(*d, dropMoved)
	case "NOPERM":
		if strings.Contains(string(se), "key") {
			*d = max(*d, dropDenied)
			return nil
		}
		return &stopError{fmt.Errorf("%v: grant the rules in docs/audit-acl.md", se)}
	case "CLUSTERDOWN", "LOADING", "TRYAGAIN", "MASTERDOWN", "BUSY":
		return se
	}
	return nil
}

// consume reads the field names the classes ask for, hands the batch to
// the pipeline, and moves the resume cursor one whole batch at a time
// (every batch handed over is added before the report is made).
func (w *walker) consume(ctx context.Context, in <-chan *batch, free chan *batch) error {
	for b := range in {
		if err := ctx.Err(); err != nil {
			return err
		}
		if w.plan.slotList != nil {
			w.consumeSlots(b, free)
			continue
		}
		j := 0
		for i := range b.recs {
			if b.drop[i] != dropNone {
				w.countDrop(b.drop[i])
				continue
			}
			if j < i {
				b.recs[j], b.class[j] = b.recs[i], b.class[i]
			}
			b.class[j].Fields = b.fldRead[i] // asked and read: a value without names counts as one
			j++
		}
		w.probed += int64(j)
		w.observeSizes(b.recs[:j], b.class[:j])
		// Read what the batch says before handing it over: once added,
		// it goes back to the prober.
		w.scannedDone += b.scanned
		w.resume = b.next
		done := b.next == "0"
		w.r.pipe.Add(b.recs[:j], b.class[:j], func() { b.reuse(free) })
		if done {
			w.finished.Store(true)
		}
	}
	return nil
}

// consumeSlots hands over the records of the slots of b counted whole,
// and keeps the others to be walked again: slots the node did not serve
// whole, or with a key that answered MOVED or ASK.
func (w *walker) consumeSlots(b *batch, free chan *batch) {
	bad := map[int32]bool{}
	for _, s := range b.badSlots {
		bad[int32(s)] = true
	}
	for i := range b.recs {
		if b.drop[i] == dropMoved {
			bad[b.slot[i]] = true
		}
	}
	j := 0
	for i := range b.recs {
		if bad[b.slot[i]] {
			continue
		}
		if b.drop[i] != dropNone {
			w.countDrop(b.drop[i])
			continue
		}
		if j < i {
			b.recs[j], b.class[j] = b.recs[i], b.class[i]
		}
		b.class[j].Fields = b.fldRead[i]
		j++
	}
	w.probed += int64(j)
	w.observeSizes(b.recs[:j], b.class[:j])
	for i, s := range b.slots {
		if bad[int32(s)] {
			w.redo = append(w.redo, s)
			continue
		}
		w.done = append(w.done, s)
		w.scannedDone += b.slotKeys[i]
	}
	w.consumed += len(b.slots)
	done := w.consumed == len(w.plan.slotList)
	w.r.pipe.Add(b.recs[:j], b.class[:j], func() { b.reuse(free) })
	if done {
		w.finished.Store(true)
	}
}

// retry runs fn on the prober's connection, dialing when there is none,
// until it succeeds, fails for good, or the node has failed for longer
// than RetryFor. Any failure closes the connection (its replies may be out
// of step). A redial checks whether the server restarted.
func (w *walker) retry(ctx context.Context, fn func(*resp.Conn) error) error {
	var since time.Time
	backoff := 50 * time.Millisecond
	for {
		var err error
		if w.conn == nil {
			w.conn, err = w.r.dial(ctx, w.addr, w.sess)
			if err == nil {
				err = w.checkRestart(ctx, w.conn)
			}
		}
		if err == nil {
			if err = fn(w.conn); err == nil {
				return nil
			}
		}
		w.closeConn()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var se *stopError
		var ce *ConnectError
		if errors.As(err, &se) || errors.As(err, &ce) && ce.Auth {
			return err
		}
		if since.IsZero() {
			since = time.Now()
		} else if time.Since(since) > w.r.opts.RetryFor {
			return fmt.Errorf("node down, gave up after %v: %w", w.r.opts.RetryFor, err)
		}
		if to := w.failedOver(ctx); to != "" {
			return &stopError{fmt.Errorf("went down during the walk (%v), and the Sentinels now name %s the master (a failover): SCAN cursors do not hold from one server to another, so the keys after the cursor were not counted; audit again (the URL's Sentinels lead to the new master)", err, to)}
		}
		if err := sleepCtx(ctx, backoff); err != nil {
			return err
		}
		backoff = min(backoff*2, time.Second)
	}
}

// failedOver is the master the Sentinels name now when it is not this
// server (a failover while the walk waits for it), or "". Only a server
// named through Sentinels (Target.Master) is asked.
func (w *walker) failedOver(ctx context.Context) string {
	if w.r.t.Master == nil || w.plan.slotList != nil {
		return ""
	}
	addr, err := w.r.t.Master(ctx)
	if err != nil || addr == "" || addr == w.addr {
		return ""
	}
	return addr
}

// checkRestart compares the run_id of a redialed server with the first.
func (w *walker) checkRestart(ctx context.Context, c *resp.Conn) error {
	in, err := nodeInfo(ctx, c)
	if err != nil {
		return err
	}
	if id := in["run_id"]; id != "" && id != w.runID && w.plan.slotList != nil {
		// A slot is counted whole in one life of the server.
		if !w.restarted {
			w.notes = append(w.notes, fmt.Sprintf("%s restarted during the audit (run_id %s, now %s); each slot was counted whole, in one life of the server", w.addr, short(w.runID), short(id)))
		}
		w.restarted = true
		return nil
	}
	if id := in["run_id"]; id != "" && id != w.runID {
		// SCAN's cursor means nothing to the new life of the server, and
		// a count that mixed both lives would be no count at all.
		w.restarted = true
		return &stopError{fmt.Errorf("restarted during the walk (run_id %s, now %s); SCAN cursors do not hold across a restart, so the keys after them were not counted: audit again", short(w.runID), short(id))}
	}
	return nil
}

// shrinkWatch tells from SCAN cursors whether the key table shrank: a
// cursor is below the table size, and its top bit flips with every bucket
// visited, so the longest of 32 cursors has the table's bit length (all 32
// missing it by chance: 2^-32). When the longest falls below the longest
// seen before, the table shrank, and SCAN may return keys twice.
type shrinkWatch struct {
	ring [32]uint8
	n    int
	high uint8
}

func (s *shrinkWatch) see(cursor string) bool {
	v, _ := strconv.ParseUint(cursor, 10, 64)
	s.ring[s.n%len(s.ring)] = uint8(bits.Len64(v))
	s.n++
	if s.n < len(s.ring) {
		return false
	}
	var m uint8
	for _, b := range s.ring {
		m = max(m, b)
	}
	switch {
	case m > s.high:
		s.high = m
	case m < s.high:
		s.high = m
		return true
	}
	return false
}

func keyHashString(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}
