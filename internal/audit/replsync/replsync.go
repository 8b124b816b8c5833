// Package replsync audits a live server or Cluster from the snapshots its
// nodes send over the replication link (keyguard audit --snapshot): each
// node is asked for the RDB a new replica's first sync gets, forks once,
// and its child writes the snapshot while the snapshot audit decodes it
// as it arrives. No command runs per key, so the server's main thread
// pays for a fork (and, diskless, for passing the bytes on), not for a
// walk.
//
//	f := replsync.New(replsync.Options{Target: t})
//	snapshot.Audit(ctx, e, snapshot.AuditOptions{Open: f.Open, Finish: f.Finish, …})
//
// A Cluster's masters (or a replica of each, with Replicas) are asked at
// once. Their snapshots are taken at slightly different times, so the
// slot map is read before and after: slots that moved, or were being
// migrated, are reported as not covered (their keys may be missing or
// counted twice).
package replsync

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/keyguard/keyguard/internal/audit/live"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/audit/snapshot"
	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/internal/keyslot"
	"github.com/keyguard/keyguard/internal/resp"
	"github.com/keyguard/keyguard/internal/topology"
	"github.com/keyguard/keyguard/registry"
)

// Options say which nodes to ask.
type Options struct {
	Target live.Target
	// Replicas asks a replica of each master (of the server) instead: the
	// fork then happens there.
	Replicas bool
	// ReplicasPrefer, with Replicas, asks the master where no replica of
	// it can be read (none online, or none that answers at its address).
	ReplicasPrefer bool
	// Timeout bounds a silence of the server while it makes or sends a
	// snapshot (it sends a newline a second while it makes one); 0 is
	// resp.DefaultTimeout.
	Timeout time.Duration
	// Scheduled: the audits run on a schedule (keyguard serve), where
	// repl-diskless-sync-delay costs nothing and a save to disk at each
	// one would: a node is never asked for its snapshot written to disk
	// first (diskFirst), the server sends what its configuration chooses.
	Scheduled bool
	// CatchUp bounds how long a replica (Replicas) is waited for to apply
	// the writes its master had when the audit asked, before its snapshot
	// is taken all the same and the report says how far behind it was;
	// 0 is 10 s.
	CatchUp time.Duration
	// Waiting, when set, is told when a node's snapshot must wait for
	// the child process the server already runs (a save, another
	// replica's sync, an AOF rewrite: it forks one at a time), or has not
	// begun after a while without one (repl-diskless-sync-delay). It may
	// be called from several goroutines at once.
	Waiting func(why string)
}

// Fetch is one run's snapshots: Open asks the nodes, Finish completes the
// report once they are decoded.
type Fetch struct {
	opts  Options
	nodes []node
	// slots is the Cluster's slot map when the snapshots were asked for:
	// the owner's ID of each slot ("" none).
	slots   []string
	shards  map[string]string // node ID → its master's ID then (itself for a master)
	moving  []int             // slots being migrated or imported then
	took    []taken           // of nodes[i]: how its snapshot was taken
	started time.Time         // when Open began: the run includes the wait for the snapshots
	// alone is the Cluster a node audited without Cluster belongs to:
	// its masters, and the slots the node's snapshot holds.
	alone *report.ClusterCoverage
	// down are a Cluster's masters whose snapshot could not be asked for
	// (marked failed, or unreachable at the start): their slots are not
	// covered, and the report of the others is partial.
	down []report.Gap
	// notes are what the plan has to say (a replica passed over).
	notes []string
}

// node is one node asked for its snapshot.
type node struct {
	addr  string
	role  string // master or replica
	of    string // a replica's master, for the notes
	owned []int  // Cluster: the slots of its master
}

// wait is how long a node took to start sending its snapshot, and what
// its server's child was doing when it was asked ("" nothing).
type wait struct {
	took  time.Duration
	child string
}

// New returns the fetch of opts.Target.
func New(opts Options) *Fetch { return &Fetch{opts: opts} }

func (f *Fetch) session() resp.Session {
	return resp.Session{Name: "keyguard-audit", Timeout: f.opts.Timeout}
}

// dial connects to addr; with db > 0 it selects that database, which
// fails on a server that does not have it. Its error says what
// live.ConnectFailure says, and unwraps to the connection's own
// (resp.Unreachable tells a server down from credentials refused).
func (f *Fetch) dial(ctx context.Context, addr string, db int) (*resp.Conn, error) {
	s := f.session()
	s.DB = max(db, 0)
	c, err := resp.Dial(ctx, f.opts.Target.Conn.Config(), addr, s)
	if err != nil {
		return nil, &dialError{shown: live.ConnectFailure(err, f.opts.Target.Conn.TLS != nil), err: err}
	}
	return c, nil
}

// taken is how one node's snapshot was taken.
type taken struct {
	diskless bool
	onDisk   string // why it was asked for written to its disk first ("" it was not)
	wait     wait
	behind   int64  // bytes of its master's writes a replica had not applied when asked (see caughtUp)
	runID    string // its run_id when asked (coverage: merge tells two reports of one server by it)
}

// dialError is dial's error: the text of shown, the cause err.
type dialError struct{ shown, err error }

func (e *dialError) Error() string { return e.shown.Error() }
func (e *dialError) Unwrap() error { return e.err }

// Open finds the nodes, asks each for its snapshot and returns the
// snapshots as inputs of the snapshot audit, each read as it arrives.
// It returns once every node has started sending (a diskless server
// first waits repl-diskless-sync-delay for more replicas).
func (f *Fetch) Open(ctx context.Context) ([]*snapshot.Input, error) {
	f.started = time.Now()
	var err error
	if f.opts.Target.Cluster {
		err = f.planCluster(ctx)
	} else {
		err = f.planServer(ctx)
	}
	if err != nil {
		return nil, err
	}
	ins := make([]*snapshot.Input, len(f.nodes))
	f.took = make([]taken, len(f.nodes))
	errs := make([]error, len(f.nodes))
	down := make([]*report.Gap, len(f.nodes))
	var wg sync.WaitGroup
	for i, n := range f.nodes {
		wg.Go(func() {
			c, err := f.dial(ctx, n.addr, 0)
			if err != nil {
				errs[i] = err
				var ce *resp.ConnectError
				if f.opts.Target.Cluster && resp.Unreachable(err) && errors.As(err, &ce) && ctx.Err() == nil {
					// A master the Cluster has not marked failed yet: the
					// others are audited, its slots are not covered.
					down[i] = &report.Gap{Node: n.addr, Slots: topology.Ranges(n.owned), Reason: fmt.Sprintf("node down: unreachable at the start (%v): its snapshot could not be taken", ce.Err)}
				}
				return
			}
			if err := f.loaded(ctx, c, n.addr); err != nil {
				c.Close()
				errs[i] = err
				return
			}
			if n.of != "" {
				f.took[i].behind = f.caughtUp(ctx, c, n)
			}
			w := &f.took[i].wait
			var info string
			w.child, info = f.childAtWork(ctx, c, n.addr)
			f.took[i].runID = live.InfoField(info, "run_id")
			onDisk := f.diskFirst(ctx, c, info)
			f.took[i].onDisk = onDisk
			asked := time.Now()
			begun := make(chan struct{})
			var told sync.WaitGroup
			if w.child == "" && f.opts.Waiting != nil {
				// No child to wait for, yet no snapshot: the diskless
				// delay, or the save to disk.
				told.Go(func() {
					select {
					case <-time.After(slowStart):
						verb := "begun"
						if onDisk != "" {
							verb = "sent"
						}
						f.opts.Waiting(fmt.Sprintf("waiting for the server's snapshot: %s has not %s it after %s (%s)", n.addr, verb, slowStart, waitsFor("", onDisk != "")))
					case <-begun:
					}
				})
			}
			p, err := c.Snapshot(ctx, onDisk != "")
			close(begun)
			told.Wait() // Waiting is not called once Open has returned
			if err != nil {
				c.Close()
				if ctx.Err() != nil {
					err = fmt.Errorf("%s: stopped (%w) before the snapshot started; %s", n.addr, context.Cause(ctx), waitsFor(w.child, onDisk != ""))
				}
				errs[i] = syncError(n.addr, err)
				if ctx.Err() == nil {
					if why := f.failedOver(ctx, n); why != "" {
						errs[i] = errors.New(why)
					}
				}
				return
			}
			w.took = time.Since(asked)
			f.took[i].diskless = p.Diskless
			ins[i] = snapshot.Stream(n.addr, p, p.Size, closer{c})
			if n.owned != nil {
				ins[i].OwnSlots(n.owned)
			}
		})
	}
	wg.Wait()
	if slices.Contains(down, nil) && slices.ContainsFunc(down, func(g *report.Gap) bool { return g != nil }) {
		// Some of a Cluster's masters answered: the unreachable ones
		// are gaps of the report, not the run's error.
		ins, errs = f.dropDown(ins, errs, down)
	}
	if err := errors.Join(errs...); err != nil {
		var opened []*snapshot.Input
		for _, in := range ins {
			if in != nil {
				opened = append(opened, in)
			}
		}
		snapshot.Close(opened)
		return nil, err
	}
	return ins, nil
}

// dropDown leaves out the nodes down marks (unreachable at the start),
// their slots a gap of the report each, and returns the inputs and
// errors of the others.
func (f *Fetch) dropDown(ins []*snapshot.Input, errs []error, down []*report.Gap) ([]*snapshot.Input, []error) {
	keep := 0
	for i := range f.nodes {
		if down[i] != nil {
			f.down = append(f.down, *down[i])
			continue
		}
		f.nodes[keep], ins[keep], errs[keep] = f.nodes[i], ins[i], errs[i]
		f.took[keep] = f.took[i]
		keep++
	}
	f.nodes, f.took = f.nodes[:keep], f.took[:keep]
	return ins[:keep], errs[:keep]
}

func (f *Fetch) catchUp() time.Duration { return cmp.Or(f.opts.CatchUp, live.DefaultCatchUp) }

// caughtUp waits until the replica n (on c) has applied every write its
// master had when asked (live.ReplicaBehind), so that its snapshot holds
// what the master did when the audit began: a replica behind its master
// sends a snapshot without the keys written last (a replica attached
// moments before sent none of its master's keys). It returns how many
// bytes of writes the replica still had to apply after Options.CatchUp
// (the report says so), or 0.
func (f *Fetch) caughtUp(ctx context.Context, c *resp.Conn, n node) int64 {
	m, err := f.dial(ctx, n.of, 0)
	if err != nil {
		return 0
	}
	defer m.Close()
	return live.ReplicaBehind(ctx, m, c, f.catchUp(), func(behind int64) {
		if f.opts.Waiting != nil {
			f.opts.Waiting(fmt.Sprintf("waiting for the server's snapshot: replica %s has not applied %s of its master's writes yet; keyguard's starts when it has (at most %s)", n.addr, human.Bytes(behind), human.Duration(f.catchUp())))
		}
	})
}

// loadWait bounds how long a node that is loading its dataset is waited
// for before its snapshot is asked.
const loadWait = 2 * time.Minute

// loaded waits while the node loads its dataset (just started, or a
// replica in a full sync: it refuses SYNC with LOADING), up to loadWait,
// telling Waiting once how far it is.
func (f *Fetch) loaded(ctx context.Context, c *resp.Conn, addr string) error {
	err := live.WaitLoaded(ctx, c, loadWait, func(perc string) {
		if f.opts.Waiting != nil {
			f.opts.Waiting(fmt.Sprintf("waiting for the server's snapshot: %s is loading its dataset (%s%% loaded); keyguard's starts when it has", addr, perc))
		}
	})
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("%s: stopped (%w) while it loaded its dataset, before the snapshot started", addr, context.Cause(ctx))
	}
	return fmt.Errorf("%s is %w", addr, err)
}

// childAtWork reads what the node's child process is doing (INFO, its
// default sections, returned too: diskFirst reads them), and tells
// Waiting when its snapshot must wait for it. An INFO that fails says
// nothing: the snapshot is asked for all the same.
func (f *Fetch) childAtWork(ctx context.Context, c *resp.Conn, addr string) (child, info string) {
	text, err := c.Simple(ctx, "INFO")
	if err != nil {
		return "", ""
	}
	kind, since := live.ChildAtWork(text)
	if kind != "" && f.opts.Waiting != nil {
		if since != "" {
			since = " (" + since + ")"
		}
		f.opts.Waiting(fmt.Sprintf("waiting for the server's snapshot: %s is busy with %s%s; keyguard's starts when it ends", addr, kind, since))
	}
	return kind, text
}

// diskFirst decides how to ask a node for its snapshot, and returns why
// it asks for it written to the server's disk first (resp.Conn.Snapshot's
// onDisk), or "" to let the server choose (diskless where
// repl-diskless-sync is on, the default). It reads the node's
// configuration (CONFIG GET, one round trip: a user without +config|get
// gets the server's choice); info is the node's INFO, for its saves and
// memory.
func (f *Fetch) diskFirst(ctx context.Context, c *resp.Conn, info string) string {
	if f.opts.Scheduled {
		return ""
	}
	cfg, err := c.ConfigGets(ctx, "repl-diskless-sync", "repl-diskless-sync-delay", "save", "repl-diskless-sync-max-replicas")
	if err != nil {
		return ""
	}
	var sc syncConfig
	sc.diskless = cfg["repl-diskless-sync"] == "yes"
	sc.delay, _ = strconv.Atoi(cfg["repl-diskless-sync-delay"])
	sc.saves = strings.TrimSpace(cfg["save"]) != ""
	sc.maxReplicas, _ = strconv.Atoi(cfg["repl-diskless-sync-max-replicas"]) // Redis 7+; 0 before
	last, err := strconv.Atoi(live.InfoField(info, "rdb_last_bgsave_time_sec"))
	sc.savesWork = err == nil && last >= 0 && live.InfoField(info, "rdb_last_bgsave_status") == "ok"
	sc.usedMemory, _ = strconv.ParseInt(live.InfoField(info, "used_memory"), 10, 64)
	if !sc.diskFirst() {
		return ""
	}
	return fmt.Sprintf("its save rules write that file anyway, and a diskless one waits repl-diskless-sync-delay (%d s) first", sc.delay)
}

// syncConfig is what decides how to ask a node for its snapshot.
type syncConfig struct {
	diskless    bool  // repl-diskless-sync yes: the server's own choice is a diskless transfer
	delay       int   // repl-diskless-sync-delay: seconds it waits for more replicas before it forks
	maxReplicas int   // repl-diskless-sync-max-replicas (Redis 7+): at 1 it forks for the first one at once
	saves       bool  // save rules are set: the server writes snapshots to its disk on its own
	savesWork   bool  // a save to disk finished since it started, and the last one succeeded (INFO persistence)
	usedMemory  int64 // INFO memory used_memory
}

// diskFirst reports whether a snapshot written to the server's disk
// first comes sooner than the server's diskless one, and leaves the
// server as its own configuration would. Diskless, the server first
// waits delay seconds, then its child's snapshot is decoded as it is
// written; written to disk first, it starts at once but is decoded only
// once written, so it is sooner while decoding the whole takes less than
// the delay: up to diskFirstRate bytes of used memory per second of delay
// (a snapshot is smaller than the memory it holds). A server without save
// rules is never asked: the file it would write is one it never writes,
// and loads on its next start. Nor is one whose saves to disk are not
// known to work: a save that fails (its fork refused, its disk full)
// makes a server with save rules and stop-writes-on-bgsave-error (the
// default) refuse writes until one succeeds, which a diskless snapshot
// that fails does not.
func (sc syncConfig) diskFirst() bool {
	return sc.diskless && sc.delay >= 1 && sc.maxReplicas != 1 && sc.saves && sc.savesWork &&
		sc.usedMemory > 0 && sc.usedMemory <= int64(sc.delay)*diskFirstRate
}

// diskFirstRate is how many bytes of a server's used memory a second of
// repl-diskless-sync-delay is worth: keyguard decodes a snapshot at ~300
// MB/s on 2 cores (bench/RESULTS.md), and a snapshot is smaller than
// the memory it holds (99 MB for 147 MiB in the audit benchmark's mix).
const diskFirstRate = 256 << 20

// slowStart is how long a snapshot may take to begin, with no child of
// the server to wait for, before Waiting is told why.
const slowStart = 2 * time.Second

// waitsFor says what a snapshot that has not started waits for; onDisk:
// it was asked for written to the server's disk first.
func waitsFor(child string, onDisk bool) string {
	switch {
	case child != "":
		return "the server was busy with " + child + ", and makes the snapshot only once it ends"
	case onDisk:
		return "the server writes the snapshot to its disk first, as BGSAVE does, and sends it once written"
	}
	return "a diskless server first waits repl-diskless-sync-delay (5 s by default), then makes the snapshot"
}

// closer closes a connection as an io.Closer.
type closer struct{ c *resp.Conn }

func (c closer) Close() error { c.c.Close(); return nil }

// syncError says why a node sent no snapshot, and what to do.
// failedOver says, when node n no longer has the role it was planned
// in (a failover while its snapshot was asked: a node changing role drops
// its replication links, keyguard's too), what happened and what to do;
// "" when it has, or cannot be asked.
func (f *Fetch) failedOver(ctx context.Context, n node) string {
	c, err := f.dial(ctx, n.addr, 0)
	if err != nil {
		return ""
	}
	defer c.Close()
	text, err := c.Simple(ctx, "INFO", "replication")
	if err != nil {
		return ""
	}
	now := "master"
	switch live.InfoField(text, "role") {
	case "master":
	case "slave":
		now = "replica"
	default:
		return ""
	}
	if now == n.role {
		return ""
	}
	return fmt.Sprintf("%s changed from %s to %s while keyguard asked for its snapshot (a failover), and closed the link: run again once the failover is done", n.addr, n.role, now)
}

func syncError(addr string, err error) error {
	var se resp.ServerError
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return err
	}
	if !errors.As(err, &se) {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) {
			// What a server does when its snapshot's child fails (or
			// when it stops).
			return fmt.Errorf("%s closed the link before its snapshot started (%w): the server stopped, or could not make the snapshot: %s", addr, err, saveHint)
		}
		return fmt.Errorf("%s: the snapshot did not start: %w", addr, err)
	}
	if strings.Contains(string(se), "BGSAVE failed") {
		return fmt.Errorf("%s could not make the snapshot (%s): %s", addr, se, saveHint)
	}
	switch se.Code() {
	case "LOADING":
		return fmt.Errorf("%s is loading its dataset (%s): audit it once it has loaded", addr, se)
	case "NOMASTERLINK":
		return fmt.Errorf("%s is a replica out of sync with its master (%s): it makes no snapshot until it is back in sync; ask its master, or wait", addr, se)
	case "NOPERM":
		return fmt.Errorf("%s refused the snapshot (%s): --snapshot needs an ACL user allowed REPLCONF and SYNC (+replconf +sync, both @admin); without --snapshot keyguard reads the keys with read commands only (docs/audit-acl.md)", addr, se)
	case "ERR":
		if strings.Contains(strings.ToLower(string(se)), "unknown command") {
			return fmt.Errorf("%s does not offer SYNC (%s): managed services (ElastiCache, MemoryDB, Azure Cache) and renamed commands refuse it; run without --snapshot", addr, se)
		}
	}
	return fmt.Errorf("%s refused the snapshot: %s", addr, se)
}

// saveHint is what to do when a server could not make a snapshot.
const saveHint = "its log says why (a fork refused for want of memory, see vm.overcommit_memory; a snapshot file it could not write in its dir, where it writes one first); fix that and try again, or run without --snapshot"

// planServer asks the server, or with Replicas its first online replica.
func (f *Fetch) planServer(ctx context.Context) error {
	addr := f.opts.Target.Conn.Addr
	// The snapshot holds every database; the one audited is selected
	// here only for the server to say whether it has it (a database past
	// its databases setting would otherwise be reported complete, empty).
	c, err := f.dial(ctx, addr, f.opts.Target.Conn.DB)
	if err != nil {
		return err
	}
	text, err := c.Simple(ctx, "INFO")
	c.Close()
	if err != nil {
		var se resp.ServerError
		if errors.As(err, &se) && se.Code() == "NOPERM" {
			return &live.PermissionError{Addr: addr, Commands: []string{"info"}, Reply: string(se)}
		}
		return fmt.Errorf("%s: INFO: %w", addr, err)
	}
	role, listed := live.Replication(text)
	n := node{addr: addr, role: "master"}
	switch {
	case role == "slave":
		n.role = "replica"
	case !f.opts.Replicas:
	case len(listed) == 0 && !f.opts.ReplicasPrefer:
		return fmt.Errorf("--replicas: %s has no online replica to take the snapshot from; drop --replicas to take it from the server itself, or pass --replicas=prefer to take it from the master when there is no replica", addr)
	case len(listed) == 0:
		f.notes = append(f.notes, fmt.Sprintf("--replicas=prefer: %s has no online replica; the snapshot was taken from the master itself", addr))
	default:
		rep, why := f.pickReplica(ctx, text, listed)
		switch {
		case rep != "":
			n = node{addr: rep, role: "replica", of: addr}
			if len(why) > 0 {
				f.notes = append(f.notes, fmt.Sprintf("--replicas: %s, listed first, could not be read: %s", human.Plural(int64(len(why)), "replica"), strings.Join(why, "; ")))
			}
		case !f.opts.ReplicasPrefer:
			return fmt.Errorf("--replicas: no replica of %s could be read: %s. %s; or pass --replicas=prefer to take the snapshot from the master when no replica can be read, or drop --replicas", addr, strings.Join(why, "; "), live.ListedAddressHint)
		default:
			f.notes = append(f.notes, fmt.Sprintf("--replicas=prefer: no replica of %s could be read (%s); the snapshot was taken from the master itself", addr, strings.Join(why, "; ")))
		}
	}
	f.nodes = []node{n}
	if strings.Contains(text, "\ncluster_enabled:1") {
		f.shard(ctx, &f.nodes[0])
	}
	return nil
}

// pickReplica returns the first of the listed replicas of the master
// (whose INFO is masterText) that answers and is its replica; why says,
// for each passed over, why.
func (f *Fetch) pickReplica(ctx context.Context, masterText string, listed []string) (string, []string) {
	return live.PickReplica(masterText, listed, func(addr string) (string, error) {
		c, err := f.dial(ctx, addr, 0)
		if err != nil {
			return "", err
		}
		defer c.Close()
		text, err := c.Simple(ctx, "INFO", "replication")
		if err != nil {
			return "", fmt.Errorf("INFO: %w", err)
		}
		return text, nil
	})
}

// shard reads the Cluster a node audited alone belongs to, for the
// report to say how much of it the snapshot covers ("1 of 3 masters,
// slots 0-5460; add --cluster for all"). Without CLUSTER NODES the
// report says nothing of the Cluster.
func (f *Fetch) shard(ctx context.Context, n *node) {
	nodes, _, err := f.clusterNodes(ctx, n.addr)
	if err != nil {
		return
	}
	masters, owned, ok := topology.Alone(nodes)
	if !ok {
		return
	}
	n.owned = owned
	f.alone = &report.ClusterCoverage{Masters: masters, Walked: 1, Slots: len(owned), Counted: topology.Ranges(owned)}
}

// planCluster reads the slot map from the first seed that answers and
// asks every master that serves slots (or a replica of each).
func (f *Fetch) planCluster(ctx context.Context) error {
	t := f.opts.Target
	nodes, err := f.fromSeeds(ctx)
	if err != nil {
		return err
	}
	f.slots, f.shards = slotMap(nodes), shardMap(nodes)
	for _, m := range nodes {
		if !m.IsMaster() || len(m.Owned) == 0 {
			continue
		}
		if !m.Usable() {
			f.down = append(f.down, report.Gap{Node: m.Addr, Slots: m.SlotText(), Reason: fmt.Sprintf("master %s is failed or has no address (%s): its snapshot could not be taken; run again once the Cluster has failed over", cmp.Or(m.Addr, m.ID), strings.Join(m.Flags, ","))})
			continue
		}
		n := node{addr: m.Addr, role: "master", owned: m.Owned}
		if f.opts.Replicas {
			rep, why, online := f.clusterReplica(ctx, nodes, m)
			switch {
			case rep != "":
				n.addr, n.role, n.of = rep, "replica", m.Addr
			case !online && !f.opts.ReplicasPrefer:
				return fmt.Errorf("--replicas: master %s (slots %s) has no online replica to take the snapshot from; drop --replicas to take it from the masters, or pass --replicas=prefer to take it from a master without one", m.Addr, m.SlotText())
			case !online:
				f.notes = append(f.notes, fmt.Sprintf("--replicas=prefer: master %s has no online replica; its snapshot was taken from the master", m.Addr))
			case !f.opts.ReplicasPrefer:
				return fmt.Errorf("--replicas: no replica of master %s (slots %s) could be read: %s. %s; or pass --replicas=prefer to take the snapshot from the master when no replica can be read", m.Addr, m.SlotText(), strings.Join(why, "; "), live.ClusterAddressHint)
			default:
				f.notes = append(f.notes, fmt.Sprintf("--replicas=prefer: no replica of master %s could be read (%s); its snapshot was taken from the master", m.Addr, strings.Join(why, "; ")))
			}
		}
		f.nodes = append(f.nodes, n)
	}
	if len(f.nodes) == 0 && len(f.down) > 0 {
		return fmt.Errorf("slots %s: %s", f.down[0].Slots, f.down[0].Reason)
	}
	if len(f.nodes) == 0 {
		return fmt.Errorf("%s: CLUSTER NODES lists no master serving slots", t.Conn.Addr)
	}
	moving, err := f.movingSlots(ctx, true)
	if err != nil {
		return err
	}
	f.moving = moving
	return nil
}

// clusterReplica returns the first online replica of the master m, in
// the Cluster's order, that answers at its listed address as the node
// listed there; why says, for each passed over, why; online is whether m
// has an online replica at all.
func (f *Fetch) clusterReplica(ctx context.Context, nodes []topology.Node, m topology.Node) (addr string, why []string, online bool) {
	for _, r := range nodes {
		if r.Master != m.ID || !r.Usable() || r.Failed() {
			continue
		}
		online = true
		c, err := f.dial(ctx, r.Addr, 0)
		if err != nil {
			why = append(why, r.Addr+": "+err.Error())
			continue
		}
		not := live.NotTheNode(ctx, c, r.ID)
		c.Close()
		if not == "" {
			return r.Addr, why, true
		}
		why = append(why, r.Addr+": "+not)
	}
	return "", why, online
}

// fromSeeds reads CLUSTER NODES from the first seed that answers.
func (f *Fetch) fromSeeds(ctx context.Context) ([]topology.Node, error) {
	t := f.opts.Target
	var errs []error
	for _, seed := range append([]string{t.Conn.Addr}, t.Seeds...) {
		nodes, _, err := f.clusterNodes(ctx, seed)
		if err == nil {
			return nodes, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// clusterNodes reads CLUSTER NODES from addr; moving are the slots the
// node is migrating or importing (only it lists them).
func (f *Fetch) clusterNodes(ctx context.Context, addr string) (nodes []topology.Node, moving []int, err error) {
	c, err := f.dial(ctx, addr, 0)
	if err != nil {
		return nil, nil, err
	}
	defer c.Close()
	text, err := c.Simple(ctx, "CLUSTER", "NODES")
	if err != nil {
		return nil, nil, fmt.Errorf("%s: CLUSTER NODES: %w", addr, err)
	}
	host, _, _ := net.SplitHostPort(addr)
	nodes = topology.Parse(text, host)
	if me, _ := topology.Mine(text); me != nil {
		moving = append(slices.Clone(me.Migrating), me.Importing...)
	}
	return nodes, moving, nil
}

// movingSlots asks every master which slots it is migrating or importing.
// With skipDown a master that cannot be reached is passed over (before
// the snapshots: its slots are then not covered, see Open).
func (f *Fetch) movingSlots(ctx context.Context, skipDown bool) ([]int, error) {
	var moving []int
	for _, n := range f.nodes {
		addr := n.addr
		if n.of != "" {
			addr = n.of
		}
		_, m, err := f.clusterNodes(ctx, addr)
		if err != nil {
			if skipDown && resp.Unreachable(err) && ctx.Err() == nil {
				continue
			}
			return nil, err
		}
		moving = append(moving, m...)
	}
	slices.Sort(moving)
	return slices.Compact(moving), nil
}

// shardMap maps every node's ID to its master's (a master's to itself).
func shardMap(nodes []topology.Node) map[string]string {
	shard := map[string]string{}
	for _, n := range nodes {
		shard[n.ID] = cmp.Or(n.Master, n.ID)
	}
	return shard
}

// slotMap is the owner's ID of every slot.
func slotMap(nodes []topology.Node) []string {
	owner := make([]string, keyslot.Slots)
	for _, n := range nodes {
		if n.IsMaster() {
			for _, s := range n.Owned {
				owner[s] = n.ID
			}
		}
	}
	return owner
}

// Finish names the source and how each node sent its snapshot, and,
// for a Cluster, compares the slot map after the snapshots with the one
// before: slots that changed owner, lost one, or were being migrated
// then or now are not covered, and the report is partial.
func (f *Fetch) Finish(ctx context.Context, res *snapshot.Result) {
	rep := res.Report
	t := f.opts.Target
	kind := "redis"
	if t.Cluster {
		kind = "cluster"
	}
	rep.Source = report.Source{Kind: kind, Target: t.Display, Nodes: len(f.nodes)}
	if !f.started.IsZero() {
		rep.StartedAt, rep.DurationMS = f.started, time.Since(f.started).Milliseconds()
	}
	var how []string
	for i, n := range f.nodes {
		w := n.addr + " (" + n.role
		if n.of != "" {
			w += " of " + n.of
		}
		w += ")"
		var tk taken
		if i < len(f.took) {
			tk = f.took[i]
		}
		switch {
		case tk.diskless:
			w += " diskless"
		case tk.onDisk != "":
			w += " written to its disk first, as keyguard asked: " + tk.onDisk
		default:
			w += " written to its disk first"
		}
		// A wait is named when it is a share of the run worth knowing.
		wt := tk.wait
		switch {
		case wt.child != "" && wt.took >= time.Second:
			w += ", after " + human.Duration(wt.took) + " waiting for " + wt.child + " to end"
		case wt.took >= time.Second && tk.diskless:
			w += ", after " + human.Duration(wt.took) + " (repl-diskless-sync-delay, or another child process of the server)"
		case wt.took >= time.Second:
			w += ", after " + human.Duration(wt.took)
		}
		how = append(how, w)
	}
	notes := []string{"read from the snapshot each node sent over the replication link (SYNC, as a new replica's first sync): one fork per node and no command per key; memory is the snapshot's model of each key, not MEMORY USAGE; " + strings.Join(how, "; ")}
	for i, n := range f.nodes {
		if i < len(f.took) && f.took[i].behind > 0 {
			notes = append(notes, fmt.Sprintf("replica %s had still not applied %s of its master's writes after %s: its snapshot may lack keys written to %s just before the audit (take the snapshot from the master: drop --replicas)", n.addr, human.Bytes(f.took[i].behind), human.Duration(f.catchUp()), n.of))
		}
	}
	notes = append(notes, f.notes...)
	rep.Notes = append(notes, rep.Notes...)
	cov := rep.Coverage
	if cov == nil {
		return
	}
	// Each node's role stays "snapshot" (what was counted is its
	// snapshot; the note says whether a master or a replica sent it);
	// a Cluster's nodes get the slots they hold.
	for i := range cov.Nodes {
		for j, n := range f.nodes {
			if n.addr != cov.Nodes[i].Addr {
				continue
			}
			if j < len(f.took) {
				cov.Nodes[i].RunID = f.took[j].runID
			}
			if t.Cluster || f.alone != nil {
				cov.Nodes[i].Slots = topology.Ranges(n.owned)
			}
		}
	}
	if f.alone != nil {
		cov.Cluster = f.alone
		rep.Notes = append(rep.Notes, fmt.Sprintf("%s is 1 of %d masters of a Redis Cluster and its snapshot was audited alone: slots %s; add --cluster for all", f.nodes[0].addr, f.alone.Masters, cmp.Or(f.alone.Counted, "none")))
	}
	if !t.Cluster {
		return
	}
	cc := &report.ClusterCoverage{Masters: len(f.nodes) + len(f.down), Walked: len(f.nodes)}
	suspect := f.changedSlots(ctx)
	var out [keyslot.Slots]bool
	for _, s := range suspect.slots {
		out[s] = true
	}
	for _, g := range f.down {
		for _, s := range report.ParseSlotRanges(g.Slots) {
			out[s] = true
		}
	}
	counted := 0
	var countedSlots []int
	for s, id := range f.slots {
		if id != "" && !out[s] {
			counted++
			countedSlots = append(countedSlots, s)
		}
	}
	cc.Slots = counted
	if counted != keyslot.Slots {
		cc.Counted = topology.Ranges(countedSlots)
	}
	cov.Cluster = cc
	if len(suspect.slots) == 0 && suspect.why == "" && len(f.down) == 0 {
		return
	}
	cov.NotCovered = append(cov.NotCovered, f.down...)
	if len(suspect.slots) > 0 || suspect.why != "" {
		cov.NotCovered = append(cov.NotCovered, report.Gap{Slots: topology.Ranges(suspect.slots), Reason: suspect.why})
	}
	cov.Share = min(cov.Share, float64(counted)/keyslot.Slots)
	rep.Complete, res.Complete = false, false
}

// suspect is what a Cluster's slot map says of the snapshots' coverage.
type suspect struct {
	slots []int
	why   string
}

// changedSlots reads the slot map again and returns the slots whose keys
// the snapshots may have missed or counted twice.
func (f *Fetch) changedSlots(ctx context.Context) suspect {
	after, lastErr := f.fromSeeds(ctx)
	var all []int
	for s, id := range f.slots {
		if id != "" {
			all = append(all, s)
		}
	}
	if lastErr != nil {
		return suspect{slots: all, why: fmt.Sprintf("the slot map could not be read after the snapshots (%v): whether slots moved while they were taken is not known", lastErr)}
	}
	now := slotMap(after)
	moved := slices.Clone(f.moving)
	if m, err := f.movingSlots(ctx, false); err == nil {
		moved = append(moved, m...)
	} else {
		return suspect{slots: all, why: fmt.Sprintf("the slot migrations could not be read after the snapshots (%v)", err)}
	}
	// An owner that was a replica of the one before, or has it as its
	// replica now (a failover, seen by either map while gossip catches
	// up), holds the same keys: only a slot that went to another shard
	// moved.
	shards := shardMap(after)
	sameShard := func(a, b string) bool {
		return a != "" && b != "" && (f.shards[b] == a || f.shards[a] == b || shards[a] == b || shards[b] == a)
	}
	for s := range f.slots {
		if a, b := f.slots[s], now[s]; a != b && !sameShard(a, b) {
			moved = append(moved, s)
		}
	}
	slices.Sort(moved)
	moved = slices.Compact(moved)
	if len(moved) == 0 {
		return suspect{}
	}
	return suspect{slots: moved, why: "slots moved, or were being migrated, while the snapshots were taken: their keys may be missing or counted twice; run the audit again once the Cluster is stable"}
}

// Run audits opts.Target's snapshots into one report: Open, the snapshot
// audit of the streams (every stream at once), Finish. A run that stopped
// early (a link lost, ctx ended) returns its partial result; an error
// means no snapshot could be had.
func Run(ctx context.Context, reg *registry.Registry, opts Options, so snapshot.Options) (*snapshot.Result, error) {
	f := New(opts)
	ins, err := f.Open(ctx)
	if err != nil {
		return nil, err
	}
	defer snapshot.Close(ins)
	so.Procs = max(so.Procs, runtime.GOMAXPROCS(0), len(ins))
	res, err := snapshot.Run(ctx, reg, ins, so)
	if err != nil {
		return nil, err
	}
	f.Finish(ctx, res)
	return res, nil
}
