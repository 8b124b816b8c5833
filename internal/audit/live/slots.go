package live

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/keyguard/keyguard/internal/audit/inventory"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/glob"
	"github.com/keyguard/keyguard/internal/resp"
	"github.com/keyguard/keyguard/internal/topology"
)

// A Cluster is walked slot by slot (CLUSTER GETKEYSINSLOT), not with
// SCAN: a slot is counted whole, once, on the node that served it when
// its keys were listed, so a failover or a slot migration during the walk
// neither skips a key nor counts one twice. After listing a chunk of
// slots, the walker asks the node (CLUSTER NODES, same connection) whether
// it still serves them and is not migrating one; a slot whose key then
// answers MOVED or ASK is dropped whole. Slots not counted are walked
// again, after the topology is read again, on their owner of the moment.

// maxSlotKeys bounds the keys GETKEYSINSLOT returns for one slot; a slot
// that holds more is not covered rather than counted in part.
const maxSlotKeys = 1 << 24

// maxChunkSlots bounds the slots listed in one round trip.
const maxChunkSlots = 512

// errNotOwner ends a walker whose node no longer serves its slots as a
// master (a failover demoted it) or as the expected replica.
var errNotOwner = errors.New("the node no longer serves its slots")

// pending are slots not counted yet, with why and where they were last
// tried.
type pending struct {
	slots  []int
	node   string
	reason string
}

// topology reads CLUSTER NODES from the seeds, then from the nodes the
// run has walked.
func (r *run) topology(ctx context.Context) ([]clusterNode, error) {
	seeds := append([]string{r.t.Conn.Addr}, r.t.Seeds...)
	for _, w := range r.walkers {
		seeds = append(seeds, w.addr)
	}
	var firstErr error
	for _, seed := range dedupe(seeds) {
		c, err := r.dial(ctx, seed, resp.Session{Timeout: r.opts.IOTimeout})
		if err != nil {
			var ce *ConnectError
			if errors.As(err, &ce) && ce.Auth {
				return nil, err
			}
			firstErr = cmpErr(firstErr, err)
			continue
		}
		text, err := c.Simple(ctx, "CLUSTER", "NODES")
		c.Close()
		if err != nil {
			var se resp.ServerError
			if errors.As(err, &se) {
				if se.Code() == "NOPERM" {
					return nil, &PermissionError{Addr: seed, Commands: []string{"cluster|nodes"}, Reply: string(se)}
				}
				if strings.Contains(string(se), "cluster support disabled") {
					return nil, fmt.Errorf("%s is not a Redis Cluster node (%v): drop --cluster to audit it as a standalone server", seed, se)
				}
			}
			firstErr = cmpErr(firstErr, fmt.Errorf("%s: CLUSTER NODES: %w", seed, err))
			continue
		}
		host, _, _ := net.SplitHostPort(seed)
		return parseClusterNodes(text, host), nil
	}
	return nil, firstErr
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// assign plans the slots on their owners in nodes: each usable master,
// or with Replicas one healthy replica of it. Slots without a usable
// owner are returned, with why.
func (r *run) assign(slots []int, nodes []clusterNode) (plans []nodePlan, left []pending) {
	slots = slices.Compact(slices.Sorted(slices.Values(slots)))
	owner := make(map[int]*clusterNode, len(slots))
	for i := range nodes {
		n := &nodes[i]
		if !n.Has("master") {
			continue
		}
		for _, s := range n.Owned {
			owner[s] = n
		}
	}
	by := map[string][]int{}
	var order []string
	unowned := map[[2]string][]int{} // node, reason → slots
	for _, s := range slots {
		n := owner[s]
		switch {
		case n == nil:
			k := [2]string{"", "no master serves them"}
			unowned[k] = append(unowned[k], s)
			continue
		case !n.Usable():
			k := [2]string{n.Addr, n.Addr + ": the cluster marks this master failed (" + strings.Join(n.Flags, ",") + ")"}
			unowned[k] = append(unowned[k], s)
			continue
		}
		if _, ok := by[n.ID]; !ok {
			order = append(order, n.ID)
		}
		by[n.ID] = append(by[n.ID], s)
	}
	byID := map[string]*clusterNode{}
	for i := range nodes {
		byID[nodes[i].ID] = &nodes[i]
	}
	for _, id := range order {
		n := byID[id]
		p := nodePlan{addr: n.Addr, role: "master", slotList: by[id], cursor: "0"}
		if r.opts.Replicas {
			rep := ""
			var why []string // replicas passed over: they could not be read
			for _, s := range nodes {
				if s.Master == n.ID && s.Usable() && s.Linked && (s.Has("slave") || s.Has("replica")) {
					if w := r.seen(s.Addr).why; w != "" {
						why = append(why, s.Addr+": "+w)
						continue
					}
					rep = s.Addr
					break
				}
			}
			switch {
			case rep != "":
				p = nodePlan{addr: rep, role: "replica", readonly: true, slotList: by[id], masterID: n.ID, of: n.Addr, cursor: "0"}
			case len(why) > 0 && r.opts.ReplicasPrefer:
				r.noteOnce(fmt.Sprintf("--replicas=prefer: no replica of master %s could be read (%s); the master was walked", n.Addr, strings.Join(why, "; ")))
			case len(why) > 0:
				k := [2]string{n.Addr, fmt.Sprintf("--replicas: no replica of master %s could be read: %s. %s; or pass --replicas=prefer to walk the master when no replica can be read", n.Addr, strings.Join(why, "; "), ClusterAddressHint)}
				unowned[k] = append(unowned[k], by[id]...)
				continue
			case !r.opts.ReplicasPrefer:
				k := [2]string{n.Addr, "--replicas: master " + n.Addr + " has no healthy replica to read (--replicas=prefer walks the master)"}
				unowned[k] = append(unowned[k], by[id]...)
				continue
			}
		}
		plans = append(plans, p)
	}
	for k, ss := range unowned {
		left = append(left, pending{slots: ss, node: k[0], reason: k[1]})
	}
	slices.SortFunc(left, func(a, b pending) int { return strings.Compare(a.reason, b.reason) })
	return plans, left
}

// ClusterAddressHint is what to do when a Cluster replica cannot be
// reached at the address the Cluster lists.
const ClusterAddressHint = "A Cluster lists each node at the address it announces: where that address does not lead to the node from here (NAT, containers, another network), set cluster-announce-ip and cluster-announce-port on it"

// probeReplicas asks, master by master, its healthy replicas in the
// Cluster's order for their node ID until one answers with the ID the
// Cluster lists for it; those that do not are unreadable, with why
// (assign then passes them over). A replica that answered before is not
// asked again, nor one already unreadable: each round of the walk calls
// it, so that a replica first listed after the walk began (its master's
// walked replica went down, a failover) is asked before it is walked.
func (r *run) probeReplicas(ctx context.Context, nodes []clusterNode) {
	for _, m := range nodes {
		if !m.Has("master") || len(m.Owned) == 0 || !m.Usable() {
			continue
		}
		for _, s := range nodes {
			if s.Master != m.ID || !s.Usable() || !s.Linked || !(s.Has("slave") || s.Has("replica")) {
				continue
			}
			seen := r.seen(s.Addr)
			if seen.why != "" {
				continue
			}
			if seen.id != s.ID {
				if why := r.replicaAnswers(ctx, s); why != "" {
					r.saw(s.Addr, replicaSeen{why: why})
					continue
				}
				r.saw(s.Addr, replicaSeen{id: s.ID})
			}
			break
		}
	}
}

// replicaAnswers says why the Cluster node n cannot be read at its
// listed address, or "".
func (r *run) replicaAnswers(ctx context.Context, n clusterNode) string {
	c, err := r.dial(ctx, n.Addr, resp.Session{Timeout: r.opts.IOTimeout})
	if err != nil {
		return err.Error()
	}
	defer c.Close()
	return NotTheNode(ctx, c, n.ID)
}

// NotTheNode says why the server c is connected to is not the Cluster
// node id (the myself line of its CLUSTER NODES names another), or ""
// when it is, or when the ACL user may not ask (NOPERM: not checked).
func NotTheNode(ctx context.Context, c *resp.Conn, id string) string {
	text, err := c.Simple(ctx, "CLUSTER", "NODES")
	if err != nil {
		var se resp.ServerError
		if errors.As(err, &se) && se.Code() == "NOPERM" {
			return ""
		}
		return "CLUSTER NODES: " + err.Error()
	}
	switch me, _ := topology.Mine(text); {
	case me == nil:
		return "its CLUSTER NODES names no node as itself"
	case me.ID != id:
		return "it answers as node " + short(me.ID) + ", not as " + short(id) + ", the node the Cluster lists there"
	}
	return ""
}

// saw records what --replicas learnt of the replica at addr.
func (r *run) saw(addr string, s replicaSeen) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.replicas == nil {
		r.replicas = map[string]replicaSeen{}
	}
	r.replicas[addr] = s
}

// seen is what --replicas learnt of the replica at addr so far.
func (r *run) seen(addr string) replicaSeen {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.replicas[addr]
}

// noteOnce adds a note unless the run has it already.
func (r *run) noteOnce(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !slices.Contains(r.notes, s) {
		r.notes = append(r.notes, s)
	}
}

// walkCluster walks the planned masters, then walks again, on their
// owner of the moment, the slots that could not be counted, until none is
// left or no slot has been counted for RetryFor. What is left becomes the
// report's stopped nodes.
func (r *run) walkCluster(ctx context.Context, left []pending) {
	r.walkRound(ctx, r.walkers)
	left = append(left, r.leftOf(r.walkers)...)
	first := slotsIn(left)
	left = r.replan(ctx, left, nil, func(plans []nodePlan, still []pending) []pending {
		var ws []*walker
		for _, p := range plans {
			w, err := r.newWalker(ctx, p)
			if err != nil {
				var pe *PermissionError
				if errors.As(err, &pe) {
					still = append(still, pending{slots: p.slotList, node: p.addr, reason: err.Error()})
					continue
				}
				if p.role == "replica" {
					// Asked again, assign passes it over: another replica
					// of its master, or with prefer the master.
					r.saw(p.addr, replicaSeen{why: err.Error()})
				}
				still = append(still, pending{slots: p.slotList, node: p.addr, reason: "node down: " + err.Error()})
				continue
			}
			ws = append(ws, w)
		}
		r.mu.Lock()
		r.walkers = append(r.walkers, ws...)
		r.mu.Unlock()
		r.walkRound(ctx, ws)
		return append(still, r.leftOf(ws)...)
	})
	r.mu.Lock()
	r.rewalked = first - slotsIn(left) // each counted once, on a later round
	r.mu.Unlock()
	for _, p := range left {
		reason := p.reason
		if ctx.Err() != nil && reason == "" {
			reason = "interrupted"
		}
		var keys int64
		for _, w := range r.walkers {
			if w.addr == p.node {
				keys += w.scannedDone
			}
		}
		r.stopped = append(r.stopped, report.NodeStop{Node: p.node, Slots: report.SlotRanges(p.slots), Reason: reason, Keys: keys})
	}
}

// replan walks again, on their owner of the moment, the slots of left,
// until none is left, ctx ends, or no slot has been counted for RetryFor,
// and returns the slots still left. Each round reads the topology (after
// before, when given), assigns the slots to their owners, and hands the
// plans and the slots without an owner to walk, which returns the slots
// left after its walks; a round that counts no slot is followed by a
// pause of 200 ms.
func (r *run) replan(ctx context.Context, left []pending, before func(), walk func(plans []nodePlan, still []pending) []pending) []pending {
	deadline := time.Now().Add(r.opts.RetryFor)
	for len(left) > 0 && ctx.Err() == nil && time.Now().Before(deadline) {
		var slots []int
		for _, p := range left {
			slots = append(slots, p.slots...)
		}
		if before != nil {
			before()
		}
		nodes, err := r.topology(ctx)
		if err != nil {
			if sleepCtx(ctx, 200*time.Millisecond) != nil {
				break
			}
			continue
		}
		if r.opts.Replicas {
			r.probeReplicas(ctx, nodes)
		}
		plans, still := r.assign(slots, nodes)
		// Keep the walker's reason for slots whose owner cannot be asked.
		still = r.keepReasons(still, left)
		if len(plans) == 0 {
			left = still
			if sleepCtx(ctx, 200*time.Millisecond) != nil {
				break
			}
			continue
		}
		left = walk(plans, still)
		after := 0
		for _, p := range left {
			after += len(p.slots)
		}
		if after < len(slots) {
			deadline = time.Now().Add(r.opts.RetryFor)
		} else if sleepCtx(ctx, 200*time.Millisecond) != nil {
			// No slot counted this round, walks started or not (a
			// Cluster that refuses every key, CLUSTERDOWN, fails each at
			// once): wait before the next, rather than ask again at once.
			break
		}
	}
	return left
}

// slotsIn is how many slots ps hold.
func slotsIn(ps []pending) int {
	n := 0
	for _, p := range ps {
		n += len(p.slots)
	}
	return n
}

// keepReasons gives slots still without an owner the reason a walker
// found for them, when it had one.
func (r *run) keepReasons(still, before []pending) []pending {
	why := map[int]pending{}
	for _, p := range before {
		if p.reason != "" {
			for _, s := range p.slots {
				why[s] = p
			}
		}
	}
	var out []pending
	for _, p := range still {
		byReason := map[string]*pending{}
		var order []string
		for _, s := range p.slots {
			q, ok := why[s]
			if !ok || !strings.Contains(q.reason, "node down") {
				q = p
			} else {
				first, _, _ := strings.Cut(q.reason, "; then ")
				q.reason = first + "; then " + p.reason
			}
			k := q.node + "\x00" + q.reason
			if byReason[k] == nil {
				byReason[k] = &pending{node: q.node, reason: q.reason}
				order = append(order, k)
			}
			byReason[k].slots = append(byReason[k].slots, s)
		}
		for _, k := range order {
			out = append(out, *byReason[k])
		}
	}
	return out
}

// walkRound walks ws at once.
func (r *run) walkRound(ctx context.Context, ws []*walker) {
	done := make(chan struct{}, len(ws))
	for _, w := range ws {
		go func() {
			w.walk(ctx)
			done <- struct{}{}
		}()
	}
	for range ws {
		<-done
	}
}

// leftOf are the slots the walkers did not count: those dropped (MOVED,
// ASK, not served any more) and those not reached.
func (r *run) leftOf(ws []*walker) []pending {
	var out []pending
	for _, w := range ws {
		var ss []int
		ss = append(ss, w.redo...)
		ss = append(ss, w.plan.slotList[w.consumed:]...)
		if len(ss) == 0 {
			continue
		}
		out = append(out, pending{slots: ss, node: w.addr, reason: w.why})
	}
	return out
}

// nextChunk is the slots the next GETKEYSINSLOT round trip lists: about
// keys keys, from the keys per slot seen so far.
func (w *walker) nextChunk(keys int) []int {
	rest := w.plan.slotList[w.next:]
	per := float64(w.total) / float64(max(len(w.plan.slotList), 1))
	if w.listedSlots > 0 {
		per = float64(w.listedKeys) / float64(w.listedSlots)
	}
	n := maxChunkSlots
	if per > 0 {
		n = int(float64(keys)/per) + 1
	}
	n = min(max(n, 1), maxChunkSlots, len(rest))
	return rest[:n]
}

// writeSlots sends GETKEYSINSLOT for each slot of the chunk, then CLUSTER
// NODES to see whether the node still serves them.
func writeSlots(c *resp.Conn, chunk []int) {
	maxKeys := strconv.Itoa(maxSlotKeys)
	for _, s := range chunk {
		c.Cmd("CLUSTER", "GETKEYSINSLOT", strconv.Itoa(s), maxKeys)
	}
	c.Cmd("CLUSTER", "NODES")
}

// readSlots reads the keys of a chunk of slots into a new batch and
// drops the slots the node no longer serves whole.
func (w *walker) readSlots(c *resp.Conn, chunk []int, free chan *batch) (*batch, error) {
	b := newBatch(free)
	b.slots = append(b.slots[:0], chunk...)
	b.slotKeys = b.slotKeys[:0]
	b.badSlots = b.badSlots[:0]
	b.lost = false
	ratio := w.r.ratio
	for _, s := range chunk {
		n, err := readSlotListing(c, s, w.r.opts.Match, "the rules in docs/audit-acl.md", "counted", func(k []byte) {
			if ratio > 0 {
				w.sampleKey(b, k, s)
				return
			}
			b.pend.add(k, s)
		})
		if err != nil {
			return nil, err
		}
		b.slotKeys = append(b.slotKeys, n)
		b.scanned += n
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
	bad, lost := w.nodes.notServed(rp.Str, chunk, &w.plan)
	b.lost = lost
	if len(bad) > 0 {
		b.badSlots = append(b.badSlots, bad...)
		b.dropSlots(bad)
	}
	return b, nil
}

// readSlotListing reads the reply to CLUSTER GETKEYSINSLOT for slot s
// and calls key for each key that matches match ("" matches every key):
// key's bytes are the connection's, valid until the next read. It returns
// how many keys the slot listed. A listing as long as maxSlotKeys may have
// left keys out, so the slot cannot be walked whole; grant says what to
// grant when the user may not list, and done what such a slot cannot be
// ("counted", "walked").
func readSlotListing(c *resp.Conn, s int, match, grant, done string, key func(k []byte)) (int64, error) {
	rp, err := c.Read()
	if err != nil {
		return 0, err
	}
	if rp.Kind == '-' {
		se := resp.ServerError(rp.Str)
		if se.Code() == "NOPERM" {
			return 0, &stopError{fmt.Errorf("CLUSTER GETKEYSINSLOT: %v: grant %s", se, grant)}
		}
		return 0, se
	}
	if rp.Kind != '*' {
		return 0, unexpected("CLUSTER GETKEYSINSLOT", rp)
	}
	if rp.N >= maxSlotKeys {
		return 0, &stopError{fmt.Errorf("slot %d holds %d keys or more, more than one listing returns: it cannot be %s whole", s, maxSlotKeys, done)}
	}
	n := rp.N
	for range n {
		k, err := c.Read()
		if err != nil {
			return 0, err
		}
		if k.Kind != '$' {
			return 0, unexpected("CLUSTER GETKEYSINSLOT key", k)
		}
		if match == "" || glob.Match([]byte(match), k.Str) {
			key(k.Str)
		}
	}
	return n, nil
}

// nodesSeen is the last CLUSTER NODES a walker parsed, and the lines it
// read of it. The reply comes after every chunk, the same but for the
// times of the last ping and pong (and the config epoch), which change
// with every gossip round and are not read: parsing it again (a master's
// line lists its thousands of slots) is left for when a field read
// changed.
type nodesSeen struct {
	text       []byte
	me, master *topology.Node
}

// notServed returns the slots of chunk that the node, by its own CLUSTER
// NODES (text), does not serve whole: not its own (or, for a replica, not
// its master's), or migrating away. lost is true when the node is no
// longer the master (or the replica of the master) p plans. It reads only
// the lines it needs, and those only when they changed: it runs after
// every chunk.
func (ns *nodesSeen) notServed(text []byte, chunk []int, p *nodePlan) (bad []int, lost bool) {
	if ns.text == nil || !sameNodes(ns.text, text) {
		ns.me, ns.master = topology.Mine(string(text))
		ns.text = append(ns.text[:0], text...)
	}
	return served(ns.me, ns.master, chunk, p)
}

// sameNodes reports whether two CLUSTER NODES replies are the same line
// by line, but for the fields topology.Mine does not read: the fifth to
// seventh of a line (ping sent, pong received, config epoch).
func sameNodes(a, b []byte) bool {
	for len(a) > 0 && len(b) > 0 {
		la, ra, _ := bytes.Cut(a, []byte{'\n'})
		lb, rb, _ := bytes.Cut(b, []byte{'\n'})
		if !sameLine(la, lb) {
			return false
		}
		a, b = ra, rb
	}
	return len(a) == 0 && len(b) == 0
}

// sameLine compares two lines of CLUSTER NODES field by field, split as
// strings.Fields splits them, fields 4 to 6 (from 0) left out. A byte
// past ASCII (which Fields may take for a space) makes them differ.
func sameLine(a, b []byte) bool {
	for f := 0; ; f++ {
		fa, ra, okA := nextField(a)
		fb, rb, okB := nextField(b)
		if !okA || !okB {
			return false
		}
		if fa == nil || fb == nil {
			return fa == nil && fb == nil
		}
		if (f < 4 || f > 6) && !bytes.Equal(fa, fb) {
			return false
		}
		a, b = ra, rb
	}
}

// nextField returns the first field of s and what follows it (a nil
// field at the end); ok is false for a byte past ASCII.
func nextField(s []byte) (field, rest []byte, ok bool) {
	i := 0
	for i < len(s) && asciiSpace(s[i]) {
		i++
	}
	if i == len(s) {
		return nil, nil, true
	}
	j := i
	for j < len(s) && !asciiSpace(s[j]) {
		if s[j] >= 0x80 {
			return nil, nil, false
		}
		j++
	}
	return s[i:j], s[j:], true
}

func asciiSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// served is notServed given the node's line (me) and its master's.
func served(me, master *topology.Node, chunk []int, p *nodePlan) (bad []int, lost bool) {
	switch {
	case me == nil:
		return chunk, true
	case !p.readonly && !me.IsMaster():
		return chunk, true
	case p.readonly && (me.Master == "" || me.Master != p.masterID || master == nil):
		return chunk, true
	}
	for _, s := range chunk {
		// A replica's own line lists no migrations; only a master's does.
		if !master.Serves(s) || (!p.readonly && slices.Contains(master.Migrating, s)) {
			bad = append(bad, s)
		}
	}
	return bad, len(master.Owned) == 0
}

// addKey appends a listed key to b as a record to probe.
func (w *walker) addKey(b *batch, key string, slot int) {
	cl := w.cls.Classify(key)
	guess, ns := "", false
	var fam *family
	if e := cl.Entry; e != nil && countIndex(e.Type) >= 0 {
		guess = e.Type
		ns = w.canNS && cl.NS && e.Type == "hash"
	} else if e == nil {
		fam = w.enc.fam.of(cl.Family)
		guess = w.enc.fam.guessFor(fam)
		if fam == nil && w.enc.readsValue(guess) {
			fam = w.enc.fam.add(cl.Family) // for the model's state of its values
		}
	}
	b.recs = append(b.recs, inventory.Record{Key: key, DB: w.plan.db, Node: w.addr, Bytes: -1, Elements: -1, Freq: -1})
	b.class = append(b.class, cl)
	b.fam = append(b.fam, fam)
	b.tpl = append(b.tpl, w.enc.mod.of(&cl, fam, w.enc.readsValue(guess)))
	b.drop = append(b.drop, dropNone)
	b.guess = append(b.guess, guess)
	b.ns = append(b.ns, ns)
	b.fld = append(b.fld, w.canFlds && cl.Fields && (guess == "hash" || guess == "string"))
	b.fldRead = append(b.fldRead, false)
	b.stage = append(b.stage, stageDone)
	b.slot = append(b.slot, int32(slot))
}

// dropSlots removes the records (and the keys not classified yet) of the
// slots bad from a batch that has not been probed yet.
func (b *batch) dropSlots(bad []int) {
	isBad := map[int32]bool{}
	for _, s := range bad {
		isBad[int32(s)] = true
	}
	b.pend.drop(func(slot int) bool { return isBad[int32(slot)] })
	j := 0
	for i := range b.recs {
		if isBad[b.slot[i]] {
			continue
		}
		b.recs[j], b.class[j], b.tpl[j], b.fam[j], b.drop[j], b.guess[j], b.ns[j] = b.recs[i], b.class[i], b.tpl[i], b.fam[i], b.drop[i], b.guess[i], b.ns[i]
		b.fld[j], b.fldRead[j], b.stage[j], b.slot[j] = b.fld[i], b.fldRead[i], b.stage[i], b.slot[i]
		j++
	}
	clear(b.recs[j:])
	clear(b.tpl[j:])
	clear(b.fam[j:])
	b.recs, b.class, b.tpl, b.fam, b.drop, b.guess, b.ns = b.recs[:j], b.class[:j], b.tpl[:j], b.fam[:j], b.drop[:j], b.guess[:j], b.ns[:j]
	b.fld, b.fldRead, b.stage, b.slot = b.fld[:j], b.fldRead[:j], b.stage[:j], b.slot[:j]
}
