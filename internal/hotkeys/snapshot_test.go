package hotkeys

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keyguard/keyguard/internal/audit/live"
	"github.com/keyguard/keyguard/internal/redistest"
)

// snapshotLFU is deterministicLFU on a server that makes a replica's
// snapshot at once.
var snapshotLFU = append(slices.Clone(deterministicLFU), "repl-diskless-sync-delay 0")

// forks is how many child processes the servers forked (INFO stats).
func forks(t *testing.T, nodes []*redistest.Server) int {
	t.Helper()
	n := 0
	for _, s := range nodes {
		info, err := s.Client(t).Info(context.Background(), "stats").Result()
		if err != nil {
			t.Fatal(err)
		}
		v, err := strconv.Atoi(strings.TrimSpace(live.InfoField(info, "total_forks")))
		if err != nil {
			t.Fatalf("total_forks: %v", err)
		}
		n += v
	}
	return n
}

// TestSnapshotLFUEqualsWalk: the counters read from the snapshots are
// the ones OBJECT FREQ answers, key for key (names of any bytes, every
// database of a server, every master of a Cluster), with one fork per
// master and no OBJECT FREQ.
func TestSnapshotLFUEqualsWalk(t *testing.T) {
	ctx := context.Background()
	reg := testRegistry(t)
	n := 20_000
	if testing.Short() {
		n = 6_000
	}
	srv := redistest.Start(t, snapshotLFU...)
	plantHot(t, srv.Client(t), n)
	plantDB(t, srv, 5, 2000, 60, "hot:five", "hot:both")
	cl := redistest.StartCluster(t, 3, snapshotLFU...)
	cc := cl.Client(t)
	plantHot(t, cc, n)

	for _, tc := range []struct {
		name  string
		walk  func() (*LFUResult, error)
		snap  func() (*LFUResult, error)
		nodes []*redistest.Server
		keys  int
	}{
		{"server", func() (*LFUResult, error) { return WalkLFU(ctx, srv.Client(t), LFUOptions{AllDBs: true, TopK: 100}) },
			func() (*LFUResult, error) {
				return SnapshotLFU(ctx, srv.Client(t), reg, LFUOptions{AllDBs: true, TopK: 100}, nil)
			}, []*redistest.Server{srv}, 40},
		{"cluster", func() (*LFUResult, error) { return WalkLFU(ctx, cc, LFUOptions{TopK: 100}) },
			func() (*LFUResult, error) { return SnapshotLFU(ctx, cc, reg, LFUOptions{TopK: 100}, nil) }, cl.Nodes, 38},
	} {
		t.Run(tc.name, func(t *testing.T) {
			walk, err := tc.walk()
			if err != nil {
				t.Fatal(err)
			}
			f0, q0 := forks(t, tc.nodes), freqCalls(t, tc.nodes)
			snap, err := tc.snap()
			if err != nil {
				t.Fatal(err)
			}
			if f, q := forks(t, tc.nodes)-f0, freqCalls(t, tc.nodes)-q0; f != len(tc.nodes) || q != 0 {
				t.Errorf("%d forks and %d OBJECT FREQ; want one fork per master and none", f, q)
			}
			if !slices.Equal(snap.Keys, walk.Keys) {
				t.Errorf("the snapshot's keys differ from OBJECT FREQ's:\n%+v\n%+v", snap.Keys, walk.Keys)
			}
			if len(snap.Keys) != tc.keys {
				t.Errorf("%d keys listed; want %d", len(snap.Keys), tc.keys)
			}
			if len(snap.Nodes) != len(walk.Nodes) {
				t.Fatalf("nodes %+v; want %+v", snap.Nodes, walk.Nodes)
			}
			for i, sn := range snap.Nodes {
				if wn := walk.Nodes[i]; sn.Addr != wn.Addr || sn.Sampled != wn.Sampled || !sn.Whole || sn.Policy != "allkeys-lfu" {
					t.Errorf("node %+v; walk's %+v", sn, wn)
				}
			}
			if c := snap.Coverage; c == nil || c.Share != 1 || len(c.NotCovered) != 0 {
				t.Errorf("coverage %+v", c)
			}
		})
	}
}

// A server without LFU counters is skipped before any snapshot is asked
// for: no fork for nothing.
func TestSnapshotLFUNoCounters(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t, "repl-diskless-sync-delay 0")
	plantHot(t, srv.Client(t), 1000)
	f0 := forks(t, []*redistest.Server{srv})
	res, err := SnapshotLFU(ctx, srv.Client(t), testRegistry(t), LFUOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Nodes) != 1 || !strings.Contains(res.Nodes[0].Skipped, "maxmemory-policy is noeviction") || len(res.Keys) != 0 {
		t.Errorf("result %+v", res)
	}
	if f := forks(t, []*redistest.Server{srv}) - f0; f != 0 {
		t.Errorf("%d forks; want none", f)
	}
}

// A server lost while its snapshot arrives: the counters read so far are
// returned with an error, the node not whole and saying why.
func TestSnapshotLFUServerLost(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t, snapshotLFU...)
	plantHot(t, srv.Client(t), 3000)
	// 1 ms a key: the snapshot takes ~3 s to arrive.
	if err := srv.Client(t).ConfigSet(ctx, "rdb-key-save-delay", "1000").Err(); err != nil {
		t.Fatal(err)
	}
	rdb := srv.Client(t)
	go func() {
		// Once the snapshot's child runs, and has sent part of it (it
		// writes 16 KiB at a time: ~800 of these keys, 0.8 s).
		for try := 0; try < 400; try++ {
			if in, err := rdb.Info(ctx, "persistence").Result(); err == nil && strings.Contains(in, "rdb_bgsave_in_progress:1") {
				break
			}
			time.Sleep(25 * time.Millisecond)
		}
		time.Sleep(1500 * time.Millisecond)
		srv.Kill()
	}()
	res, err := SnapshotLFU(ctx, srv.Client(t), testRegistry(t), LFUOptions{}, nil)
	if err == nil || res == nil || !strings.Contains(err.Error(), "the snapshot ended early: the server stopped or the connection was lost") {
		t.Fatalf("res %+v, err %v; want what was read and an error that names the lost link", res, err)
	}
	n := res.Nodes[0]
	if n.Whole || n.Stopped == "" || n.Sampled == 0 || n.Sampled >= 3040 {
		t.Errorf("node %+v; want some keys read, not whole, the stop named", n)
	}
	if c := res.Coverage; c == nil || c.Share >= 1 || len(c.NotCovered) == 0 {
		t.Errorf("coverage %+v; want the node not covered", c)
	}
	t.Logf("%d keys read; %v", n.Sampled, err)
}
