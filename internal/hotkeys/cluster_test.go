package hotkeys

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/redistest"
)

// deterministicLFU makes every read add one to a key's counter (from 5)
// and never decay it, so that two servers given the same reads hold the
// same counters.
var deterministicLFU = []string{"maxmemory-policy allkeys-lfu", "lfu-log-factor 0", "lfu-decay-time 0"}

// plantHot writes n keys (some of any bytes) and reads key i of the hot
// ones 3*i times, through c (a server or a Cluster).
func plantHot(t *testing.T, c redis.Cmdable, n int) {
	t.Helper()
	ctx := context.Background()
	p := c.Pipeline()
	exec := func() {
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		p.Set(ctx, fmt.Sprintf("cache:item:%d", i), "x", 0)
		if p.Len() == 2000 {
			exec()
		}
	}
	for i := range 40 {
		k := hotName(i)
		p.Set(ctx, k, "x", 0)
		for range 3 * i {
			p.Get(ctx, k)
		}
		exec()
	}
}

// hotName is the i-th planted hot key; every fourth holds bytes that are
// not text.
func hotName(i int) string {
	if i%4 == 0 {
		return fmt.Sprintf("hot:\x00\xff\r\n %d", i)
	}
	return fmt.Sprintf("hot:%d", i)
}

// TestWalkLFUClusterEqualsStandalone: the same keys read the same number
// of times on one server and on a 3-master Cluster give the same listed
// keys and counters, every key read once, every master whole.
func TestWalkLFUClusterEqualsStandalone(t *testing.T) {
	ctx := context.Background()
	n := 60_000
	if testing.Short() {
		n = 15_000
	}
	srv := redistest.Start(t, deterministicLFU...)
	plantHot(t, srv.Client(t), n)
	cl := redistest.StartCluster(t, 3, deterministicLFU...)
	cc := cl.Client(t)
	plantHot(t, cc, n)

	opts := LFUOptions{TopK: 100}
	one, err := WalkLFU(ctx, srv.Client(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	three, err := WalkLFU(ctx, cc, opts)
	if err != nil {
		t.Fatal(err)
	}
	total := n + 40
	if s := one.Nodes[0]; s.Sampled != total || !s.Whole {
		t.Fatalf("standalone: %+v, want %d keys, whole", s, total)
	}
	read := 0
	for _, m := range three.Nodes {
		read += m.Sampled
		if !m.Whole || m.Sampled == 0 {
			t.Errorf("cluster: %+v", m)
		}
	}
	if len(three.Nodes) != 3 || read != total {
		t.Fatalf("cluster: %d masters, %d keys read; want 3, %d", len(three.Nodes), read, total)
	}
	// Reads 3*i give counter 5+3*i: keys 2…39 reach the floor of 10.
	if len(one.Keys) != 38 || one.Keys[0].Key != hotName(39) || one.Keys[0].Freq != 5+3*39 {
		t.Fatalf("standalone keys: %d, first %+v", len(one.Keys), one.Keys[0])
	}
	strip := func(ks []LFUKey) []LFUKey {
		out := slices.Clone(ks)
		for i := range out {
			out[i].Node = ""
		}
		return out
	}
	if a, b := strip(one.Keys), strip(three.Keys); !slices.Equal(a, b) {
		t.Errorf("cluster keys differ from the standalone's:\n%v\n%v", b, a)
	}
}

// freqCalls is how many OBJECT FREQ the servers answered.
func freqCalls(t *testing.T, nodes []*redistest.Server) int64 {
	t.Helper()
	var calls int64
	for _, s := range nodes {
		info := s.Client(t).Info(context.Background(), "commandstats").Val()
		if _, rest, ok := strings.Cut(info, "cmdstat_object|freq:calls="); ok {
			var n int64
			fmt.Sscanf(rest, "%d", &n)
			calls += n
		}
	}
	return calls
}

// TestWalkLFUClusterFailover: a failover a quarter into the walk of a
// 3-master Cluster with replicas: the walk is complete, every key read
// once (its slot walked again on the promoted replica), and every key
// listed is a planted hot key with the counter its node holds: a replica
// does not see the master's reads, so a hot key walked after the failover
// on the promoted replica may be below the floor, never above its count.
func TestWalkLFUClusterFailover(t *testing.T) {
	ctx := context.Background()
	n, rate := 60_000, 8_000
	if testing.Short() {
		n, rate = 20_000, 4_000
	}
	cl := redistest.StartClusterWithReplicas(t, 3, 1, deterministicLFU...)
	plantHot(t, cl.Client(t), n)
	type outcome struct {
		res *LFUResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := WalkLFU(ctx, cl.Client(t), LFUOptions{Rate: rate, TopK: 100})
		done <- outcome{res, err}
	}()
	for freqCalls(t, cl.Nodes) < int64(n/4) {
		select {
		case o := <-done:
			t.Fatalf("the walk ended before the failover: %+v %v", o.res, o.err)
		case <-time.After(20 * time.Millisecond): // polling the servers' own count
		}
	}
	cl.Failover(t, 0)
	o := <-done
	if o.err != nil {
		t.Fatal(o.err)
	}
	res := o.res
	read := 0
	for _, m := range res.Nodes {
		read += m.Sampled
	}
	if read != n+40 || res.Coverage == nil || len(res.Coverage.NotCovered) != 0 || res.Coverage.Cluster == nil || res.Coverage.Cluster.Slots != 16384 {
		t.Fatalf("%d keys read of %d; nodes %+v; coverage %+v", read, n+40, res.Nodes, res.Coverage)
	}
	t.Logf("nodes %+v; %d keys listed", res.Nodes, len(res.Keys))
	moved := 0
	for _, m := range res.Nodes {
		if !m.Whole {
			moved++
			if !strings.Contains(m.Stopped, "read on their new owner") {
				t.Errorf("%s not whole: %q", m.Addr, m.Stopped)
			}
		}
	}
	if len(res.Nodes) != 4 || moved != 1 {
		t.Errorf("the failover did not reach the walk: %+v", res.Nodes)
	}
	want := map[string]int{}
	for i := range 40 {
		want[hotName(i)] = 5 + 3*i
	}
	seen := map[string]bool{}
	for _, k := range res.Keys {
		w, ok := want[k.Key]
		if !ok || seen[k.Key] || k.Freq > w || k.Freq < LFUEvidence {
			t.Errorf("listed %q counter %d (planted: %v, want at most %d)", k.Key, k.Freq, ok, w)
		}
		seen[k.Key] = true
	}
	if len(res.Keys) == 0 {
		t.Error("no hot key listed")
	}
}

// TestWalkLFUServerLost: the server killed a fifth into the walk: the
// result keeps the counters read before, the node says it stopped, the
// coverage names it as not covered, and the walk is an error.
func TestWalkLFUServerLost(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t, deterministicLFU...)
	const n = 20_000
	plantHot(t, srv.Client(t), n)
	type outcome struct {
		res *LFUResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := WalkLFU(ctx, srv.Client(t), LFUOptions{Rate: 5_000, Floor: 1, TopK: n + 40, RetryFor: time.Second})
		done <- outcome{res, err}
	}()
	for freqCalls(t, []*redistest.Server{srv}) < n/5 {
		select {
		case o := <-done:
			t.Fatalf("the walk ended before the kill: %+v %v", o.res, o.err)
		case <-time.After(20 * time.Millisecond): // polling the server's own count
		}
	}
	srv.Kill()
	o := <-done
	res := o.res
	if o.err == nil || res == nil || len(res.Nodes) != 1 {
		t.Fatalf("walk of a lost server: %+v, err %v", res, o.err)
	}
	node := res.Nodes[0]
	if node.Whole || node.Stopped == "" || node.Sampled < n/5-DefaultLFUCount || node.Sampled >= n || len(res.Keys) != node.Sampled {
		t.Errorf("lost server: %+v, %d keys listed", node, len(res.Keys))
	}
	if res.Coverage == nil || len(res.Coverage.NotCovered) != 1 || !strings.Contains(o.err.Error(), "not covered") {
		t.Errorf("coverage %+v, err %v", res.Coverage, o.err)
	}
}
