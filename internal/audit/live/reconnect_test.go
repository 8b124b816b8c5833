package live

import (
	"context"
	"net"
	"slices"
	"sync"
	"testing"

	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/plant"
	"github.com/keyguard/keyguard/internal/redistest"
)

// cuts drops connections: each connection that has read the next
// number of bytes of the list is closed, and the replies in flight are
// lost with it.
type cuts struct {
	mu    sync.Mutex
	left  []int
	dials int
}

func (c *cuts) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.dials++
	c.mu.Unlock()
	return &cutConn{Conn: nc, cuts: c}, nil
}

// cut reports whether a connection that has read n bytes is dropped now.
func (c *cuts) cut(n int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.left) == 0 || n < c.left[0] {
		return false
	}
	c.left = c.left[1:]
	return true
}

type cutConn struct {
	net.Conn
	cuts *cuts
	read int
}

func (c *cutConn) Read(p []byte) (int, error) {
	if c.cuts.cut(c.read) {
		c.Conn.Close()
		return 0, net.ErrClosed
	}
	n, err := c.Conn.Read(p)
	c.read += n
	return n, err
}

// A connection lost in the middle of the walk is dialled again, and the
// round trip sent again with what the last one sent after its listing,
// whose replies were not read yet: the report is the one of a walk
// without faults. The cuts fall at different places in the pipelines.
func TestReconnectMidPipeline(t *testing.T) {
	reg := testRegistry(t)
	s := redistest.Start(t)
	// 3,000 keys a template, as TestModelledMemoryMatchesMemoryUsage: at
	// 1,500 the model of the template with APPEND-grown strings is now
	// and then more than 1% off, and so one walk against another.
	tmpl := modelData(t, s.Client(t), 3000)
	// Each key counts MEMORY USAGE or the model's bytes: a group's bytes
	// lie between the two sums of the lower and of the higher of them.
	mem, est := memoryByKey(t, s.Client(t), tmpl), modelledBytes(t, s.Client(t), tmpl)
	lo, hi := map[string]int64{}, map[string]int64{}
	for k, m := range mem {
		e := est[k]
		if e < 0 {
			e = m
		}
		lo[tmpl[k]] += min(m, e)
		hi[tmpl[k]] += max(m, e)
	}
	ctx := context.Background()
	clean, err := Run(ctx, reg, standalone(s), Options{Count: 100})
	if err != nil {
		t.Fatal(err)
	}

	cs := &cuts{left: []int{150_000, 60_000, 260_000, 30_000, 100_000}}
	tg := standalone(s)
	tg.Conn.Dialer = cs.dial
	faulty, err := Run(ctx, reg, tg, Options{Count: 100})
	if err != nil {
		t.Fatal(err)
	}
	a, b := clean.Report, faulty.Report
	if !faulty.Complete || b.Summary.Keys != a.Summary.Keys {
		t.Fatalf("with cuts: complete %v (stopped %+v), %d keys; without: %d keys", faulty.Complete, faulty.Stopped, b.Summary.Keys, a.Summary.Keys)
	}
	cs.mu.Lock()
	left, dials := len(cs.left), cs.dials
	cs.mu.Unlock()
	if left > 0 {
		t.Fatalf("%d cuts of 5 left after %d dials: the walk ended before the faults", left, dials)
	}
	if len(a.Groups) != len(b.Groups) {
		t.Fatalf("%d groups, %d with cuts", len(a.Groups), len(b.Groups))
	}
	for i := range a.Groups {
		ga, gb := a.Groups[i], b.Groups[i]
		if ga.Name != gb.Name || ga.Keys != gb.Keys || !equalMaps(ga.Types, gb.Types) {
			t.Errorf("group %s: %d keys %v; with cuts %s: %d keys %v", ga.Name, ga.Keys, ga.Types, gb.Name, gb.Keys, gb.Types)
		}
		// Which keys the memory model sizes depends on the keys sent
		// again and on the order replies came in (the model is exact for
		// all but a few odd keys, of which one walk may model more than
		// the other): each walk's bytes are MEMORY USAGE or the model's,
		// key by key.
		for _, g := range []report.Group{ga, gb} {
			if g.Bytes < lo[g.Name] || g.Bytes > hi[g.Name] {
				t.Errorf("group %s: %d bytes, not between %d and %d", g.Name, g.Bytes, lo[g.Name], hi[g.Name])
			}
		}
	}
	if fa, fb := found(a), found(b); !slices.Equal(fa, fb) {
		t.Errorf("findings differ:\n without cuts %v\n with cuts    %v", fa, fb)
	}
}

// The same on a Cluster, whose walkers list slots with GETKEYSINSLOT: a
// walker's connection dropped mid-walk is dialled again, its round trip
// sent again, and every slot counted once, by that walker.
func TestClusterReconnectMidPipeline(t *testing.T) {
	reg := testRegistry(t)
	c := redistest.StartCluster(t, 3)
	n := plant.Clean(t, c.Client(t), 6000)
	ctx := context.Background()
	cs := &cuts{left: []int{60_000, 25_000, 110_000, 40_000}}
	tg := clusterTarget(c)
	tg.Conn.Dialer = cs.dial
	res, err := Run(ctx, reg, tg, Options{Count: 100})
	if err != nil {
		t.Fatal(err)
	}
	rep := res.Report
	if !res.Complete || rep.Summary.Keys != int64(n) || res.Scanned != int64(n) {
		t.Fatalf("complete %v (stopped %+v) keys %d scanned %d, want %d", res.Complete, res.Stopped, rep.Summary.Keys, res.Scanned, n)
	}
	cs.mu.Lock()
	left, dials := len(cs.left), cs.dials
	cs.mu.Unlock()
	if left > 0 {
		t.Fatalf("%d cuts of 4 left after %d dials: the walk ended before the faults", left, dials)
	}
	checkTemplateGroups(t, rep, 6000/10)
	// The walkers' own retries absorbed the drops: no slot was walked
	// again after the walker gave its node up.
	if hasNote(rep, "walked again") {
		t.Errorf("slots walked again: %q", rep.Notes)
	}
}
