package replsync

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keyguard/keyguard/internal/audit/live"
	"github.com/keyguard/keyguard/internal/plant"
	"github.com/keyguard/keyguard/internal/redistest"
)

// hasNote reports whether one of notes contains s.
func hasNote(notes []string, s string) bool {
	return slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, s) })
}

// onlineReplicas waits until m's INFO lists n replicas online.
func onlineReplicas(t *testing.T, m *redistest.Server, n int) {
	t.Helper()
	m.WaitInfo(t, "replication", func(in string) bool { return strings.Count(in, "state=online") == n })
}

// TestReplicaListedElsewhere: a master lists each replica at the address
// it sees it connect from and the port it announces, which may lead
// nowhere from here, or to another server. --replicas (the walk and the
// snapshot) passes such replicas over for the next one that answers as
// this master's replica, refuses when none does, and with
// --replicas=prefer reads the master; it never reads another server's
// keys as the master's.
func TestReplicaListedElsewhere(t *testing.T) {
	reg := testRegistry(t)
	ctx := context.Background()
	m := redistest.Start(t, "repl-diskless-sync-delay 0")
	n := plant.Clean(t, m.Client(t), 300)

	// Another master's replica, holding other keys: the first replica of
	// m announces its port.
	m2 := redistest.Start(t, "repl-diskless-sync-delay 0")
	other := redistest.StartReplica(t, m2)
	for i := range 50 {
		m2.Client(t).Set(ctx, "elsewhere:"+strconv.Itoa(i), "x", 0)
	}
	other.WaitInfo(t, "keyspace", func(in string) bool { return strings.Contains(in, "db0:keys=50,") })
	redistest.StartReplica(t, m, "replica-announce-port "+strconv.Itoa(other.Port))
	onlineReplicas(t, m, 1)
	// A second that announces a port nothing listens on.
	redistest.StartReplica(t, m, "replica-announce-port 1")
	onlineReplicas(t, m, 2)
	elsewhere, refused := other.Addr, "127.0.0.1:1"

	// --replicas: refused, each listed replica named with why, and what
	// to do.
	_, err := live.Run(ctx, reg, target(m.Addr, false), live.Options{Replicas: true})
	snapErr := func() error {
		_, err := audit(t, reg, Options{Target: target(m.Addr, false), Replicas: true})
		return err
	}()
	for what, err := range map[string]error{"walk": err, "snapshot": snapErr} {
		if err == nil {
			t.Fatalf("%s --replicas: read a replica; want an error, none of the listed replicas is m's", what)
		}
		for _, s := range []string{elsewhere + " answers, but it is a replica of another master", refused + ":", "replica-announce-ip", "--replicas=prefer"} {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s --replicas: %q lacks %q", what, err, s)
			}
		}
	}

	// --replicas=prefer: the master is read, and the report says why.
	res, err := live.Run(ctx, reg, target(m.Addr, false), live.Options{Replicas: true, ReplicasPrefer: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Report.Summary.Keys != int64(n) || !res.Complete || !hasNote(res.Report.Notes, "no replica of "+m.Addr+" could be read") {
		t.Errorf("walk --replicas=prefer: keys %d of %d, complete %v, notes %q", res.Report.Summary.Keys, n, res.Complete, res.Report.Notes)
	}
	snap, err := audit(t, reg, Options{Target: target(m.Addr, false), Replicas: true, ReplicasPrefer: true})
	if err != nil {
		t.Fatal(err)
	}
	if snap.Report.Summary.Keys != int64(n) || !snap.Complete || !hasNote(snap.Report.Notes, "the snapshot was taken from the master itself") {
		t.Errorf("snapshot --replicas=prefer: keys %d of %d, complete %v, notes %q", snap.Report.Summary.Keys, n, snap.Complete, snap.Report.Notes)
	}

	// A third replica that answers where it is listed: read, the two
	// before it named.
	good := redistest.StartReplica(t, m)
	onlineReplicas(t, m, 3)
	good.WaitInfo(t, "keyspace", func(in string) bool { return strings.Contains(in, fmt.Sprintf("db0:keys=%d,", n)) })
	res, err = live.Run(ctx, reg, target(m.Addr, false), live.Options{Replicas: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Report.Summary.Keys != int64(n) || !hasNote(res.Report.Notes, "walked replica "+good.Addr) || !hasNote(res.Report.Notes, "2 replicas, listed first, could not be read") {
		t.Errorf("walk --replicas: keys %d of %d, notes %q", res.Report.Summary.Keys, n, res.Report.Notes)
	}
	snap, err = audit(t, reg, Options{Target: target(m.Addr, false), Replicas: true})
	if err != nil {
		t.Fatal(err)
	}
	if snap.Report.Summary.Keys != int64(n) || !hasNote(snap.Report.Notes, good.Addr+" (replica of "+m.Addr+")") || !hasNote(snap.Report.Notes, "2 replicas, listed first, could not be read") {
		t.Errorf("snapshot --replicas: keys %d of %d, notes %q", snap.Report.Summary.Keys, n, snap.Report.Notes)
	}
}

// TestClusterReplicaListedElsewhere: a Cluster replica that announces a
// port nothing listens on. --replicas refuses (naming it, and what to
// do), --replicas=prefer reads its master, walk and snapshot alike; the
// report of either counts every key.
func TestClusterReplicaListedElsewhere(t *testing.T) {
	reg := testRegistry(t)
	ctx := context.Background()
	c := redistest.StartClusterWithReplicas(t, 3, 1, "repl-diskless-sync-delay 0")
	n := plant.Clean(t, c.Client(t), 600)
	bad := c.Replicas[0]
	if err := bad.Client(t).ConfigSet(ctx, "cluster-announce-port", "1").Err(); err != nil {
		t.Fatal(err)
	}
	// Every node lists it at port 1, its link connected, before the
	// audit asks any (a link still down reads as no healthy replica).
	deadline := time.Now().Add(30 * time.Second)
	for _, node := range c.Nodes {
		for !listedConnected(node.Client(t).ClusterNodes(ctx).Val(), " 127.0.0.1:1@") {
			if time.Now().After(deadline) {
				t.Fatalf("%s does not list the replica at port 1:\n%s", node.Addr, node.Client(t).ClusterNodes(ctx).Val())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	for i := range c.Nodes {
		waitSynced(t, c.Nodes[i], c.Replicas[i])
	}
	tg := target(c.Addrs[0], true, c.Addrs[1:]...)
	master := c.Nodes[0].Addr

	_, err := live.Run(ctx, reg, tg, live.Options{Replicas: true, RetryFor: 2 * time.Second, IOTimeout: time.Second})
	snapErr := func() error { _, err := audit(t, reg, Options{Target: tg, Replicas: true}); return err }()
	for what, err := range map[string]error{"walk": err, "snapshot": snapErr} {
		if err == nil {
			t.Fatalf("%s --replicas: no error; the replica of %s cannot be read", what, master)
		}
		for _, s := range []string{"no replica of master " + master, " could be read: 127.0.0.1:1: ", "cluster-announce-ip", "--replicas=prefer"} {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s --replicas: %q lacks %q", what, err, s)
			}
		}
	}

	res, err := live.Run(ctx, reg, tg, live.Options{Replicas: true, ReplicasPrefer: true, RetryFor: 2 * time.Second, IOTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.Report.Summary.Keys != int64(n) || !res.Complete || !hasNote(res.Report.Notes, "no replica of master "+master+" could be read") {
		t.Errorf("walk --replicas=prefer: keys %d of %d, complete %v, notes %q", res.Report.Summary.Keys, n, res.Complete, res.Report.Notes)
	}
	snap, err := audit(t, reg, Options{Target: tg, Replicas: true, ReplicasPrefer: true})
	if err != nil {
		t.Fatal(err)
	}
	if snap.Report.Summary.Keys != int64(n) || !snap.Complete || !hasNote(snap.Report.Notes, "no replica of master "+master+" could be read") {
		t.Errorf("snapshot --replicas=prefer: keys %d of %d, complete %v, notes %q", snap.Report.Summary.Keys, n, snap.Complete, snap.Report.Notes)
	}
}

// listedConnected reports whether a CLUSTER NODES text lists a node at
// addr (" host:port@") with its link connected.
func listedConnected(nodes, addr string) bool {
	for _, line := range strings.Split(nodes, "\n") {
		// id addr flags master ping pong epoch link-state slots…
		if f := strings.Fields(line); len(f) >= 8 && strings.Contains(line, addr) && f[7] == "connected" {
			return true
		}
	}
	return false
}

// waitSynced waits until replica r holds as many keys as its master m.
func waitSynced(t *testing.T, m, r *redistest.Server) {
	t.Helper()
	want := m.Client(t).DBSize(context.Background()).Val()
	r.WaitInfo(t, "keyspace", func(in string) bool {
		return want == 0 && !strings.Contains(in, "db0:") || strings.Contains(in, fmt.Sprintf("db0:keys=%d,", want))
	})
}
