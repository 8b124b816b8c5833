package redistest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/redistest"
)

func TestStartSetGet(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, "maxmemory-policy allkeys-lfu")
	rdb := srv.Client(t)
	ctx := t.Context()

	if err := rdb.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatalf("SET: %v", err)
	}
	got, err := rdb.Get(ctx, "k").Result()
	if err != nil || got != "v" {
		t.Fatalf("GET k = %q, %v; want v", got, err)
	}
	policy, err := rdb.ConfigGet(ctx, "maxmemory-policy").Result()
	if err != nil || policy["maxmemory-policy"] != "allkeys-lfu" {
		t.Errorf("extra config not applied: %v, %v", policy, err)
	}
	dir, err := rdb.ConfigGet(ctx, "dir").Result()
	if err != nil || filepath.Clean(dir["dir"]) != filepath.Clean(srv.Dir) {
		t.Errorf("CONFIG GET dir = %v, %v; want %s", dir, err, srv.Dir)
	}
	if want := "redis://127.0.0.1:" + strconv.Itoa(srv.Port); srv.URL() != want || srv.Addr != want[len("redis://"):] {
		t.Errorf("URL() = %q, Addr = %q; want %q", srv.URL(), srv.Addr, want)
	}
	if !strings.Contains(srv.Log(), "Ready to accept connections") {
		t.Errorf("Log() lacks the ready line:\n%s", srv.Log())
	}
}

func TestRestartKeepsSavedData(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()

	if err := rdb.Set(ctx, "saved", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Save(ctx).Err(); err != nil {
		t.Fatalf("SAVE: %v", err)
	}
	if _, err := os.Stat(filepath.Join(srv.Dir, "dump.rdb")); err != nil {
		t.Fatalf("SAVE wrote no dump.rdb in Dir: %v", err)
	}
	port := srv.Port

	srv.Stop()
	srv.Stop() // idempotent
	if err := rdb.Ping(ctx).Err(); err == nil {
		t.Fatal("PING succeeded after Stop")
	}
	srv.Restart(t)
	if srv.Port != port {
		t.Fatalf("Restart moved the port from %d to %d", port, srv.Port)
	}
	got, err := rdb.Get(ctx, "saved").Result()
	if err != nil || got != "1" {
		t.Fatalf("GET saved after Restart = %q, %v; want 1", got, err)
	}
	if err := rdb.Set(ctx, "after", "2", 0).Err(); err != nil {
		t.Fatalf("SET after Restart: %v", err)
	}
	if n := strings.Count(srv.Log(), "Ready to accept connections"); n != 2 {
		t.Errorf("Log() shows %d starts, want 2", n)
	}
}

func TestKillMakesPingFail(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatalf("PING before Kill: %v", err)
	}
	srv.Kill()
	srv.Kill()
	srv.Stop() // no-op after Kill; cleanup runs again later
	if err := rdb.Ping(ctx).Err(); err == nil {
		t.Fatal("PING succeeded after Kill")
	}
	// Restart right after SIGKILL: the port must be reusable at once.
	srv.Restart(t)
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatalf("PING after Restart: %v", err)
	}
	srv.Kill() // cleanup must cope with an already dead server
}

func TestStartParallelDistinctPorts(t *testing.T) {
	t.Parallel()
	a, b := redistest.Start(t), redistest.Start(t)
	if a.Port == b.Port || a.Dir == b.Dir {
		t.Fatalf("two servers share port or dir: %+v %+v", a, b)
	}
}

func TestCluster(t *testing.T) {
	t.Parallel()
	c := redistest.StartCluster(t, 3)
	if len(c.Nodes) != 3 || len(c.Addrs) != 3 {
		t.Fatalf("got %d nodes, %d addrs; want 3", len(c.Nodes), len(c.Addrs))
	}
	if want := "redis://" + strings.Join(c.Addrs, ","); c.URL() != want {
		t.Errorf("URL() = %q, want %q", c.URL(), want)
	}
	cc := c.Client(t)
	ctx := t.Context()

	const keys = 1000
	for i := range keys {
		if err := cc.Set(ctx, "key:"+strconv.Itoa(i), i, 0).Err(); err != nil {
			t.Fatalf("SET key:%d: %v", i, err)
		}
	}
	total := int64(0)
	for _, n := range c.Nodes {
		size, err := n.Client(t).DBSize(ctx).Result()
		if err != nil {
			t.Fatalf("DBSIZE on %s: %v", n.Addr, err)
		}
		if size == 0 {
			t.Errorf("node %s holds no keys; slots not spread", n.Addr)
		}
		if _, err := os.Stat(filepath.Join(n.Dir, "nodes.conf")); err != nil {
			t.Errorf("node %s: nodes.conf not in its Dir: %v", n.Addr, err)
		}
		total += size
	}
	if total != keys {
		t.Errorf("DBSIZE sum = %d, want %d", total, keys)
	}
	got, err := cc.Get(ctx, "key:999").Result()
	if err != nil || got != "999" {
		t.Errorf("GET key:999 = %q, %v", got, err)
	}
}

func TestClusterNodeRestart(t *testing.T) {
	t.Parallel()
	c := redistest.StartCluster(t, 2, "cluster-node-timeout 1000")
	cc := c.Client(t)
	ctx := t.Context()
	timeout, err := c.Nodes[0].Client(t).ConfigGet(ctx, "cluster-node-timeout").Result()
	if err != nil || timeout["cluster-node-timeout"] != "1000" {
		t.Errorf("extra config did not override node timeout: %v, %v", timeout, err)
	}
	c.Nodes[1].Restart(t) // nodes.conf in Dir brings it back into the cluster
	if err := cc.Set(ctx, "after-restart", "x", 0).Err(); err != nil {
		t.Fatalf("SET after node restart: %v", err)
	}
}

func TestClusterWithReplicas(t *testing.T) {
	t.Parallel()
	const masters, per = 3, 1
	c := redistest.StartClusterWithReplicas(t, masters, per)
	if len(c.Nodes) != masters || len(c.Addrs) != masters || len(c.Replicas) != masters*per {
		t.Fatalf("got %d nodes, %d addrs, %d replicas; want %d, %d, %d", len(c.Nodes), len(c.Addrs), len(c.Replicas), masters, masters, masters*per)
	}
	if want := "redis://" + strings.Join(c.Addrs, ","); c.URL() != want {
		t.Errorf("URL() = %q, want %q (masters only)", c.URL(), want)
	}
	ctx := t.Context()
	cc := c.Client(t)
	const keys = 300
	for i := range keys {
		if err := cc.Set(ctx, "key:"+strconv.Itoa(i), i, 0).Err(); err != nil {
			t.Fatalf("SET key:%d: %v", i, err)
		}
	}
	for i, m := range c.Nodes {
		mc := m.Client(t)
		id, err := mc.Do(ctx, "CLUSTER", "MYID").Text()
		if err != nil {
			t.Fatal(err)
		}
		// WAIT: every write so far has reached the master's replicas.
		if got, err := mc.Do(ctx, "WAIT", per, 0).Int(); err != nil || got != per {
			t.Fatalf("WAIT on %s = %d, %v; want %d replicas", m.Addr, got, err, per)
		}
		size, err := mc.DBSize(ctx).Result()
		if err != nil || size == 0 {
			t.Fatalf("DBSIZE on master %s = %d, %v; want keys", m.Addr, size, err)
		}
		for _, r := range c.Replicas[i*per : (i+1)*per] {
			rc := r.Client(t)
			info, err := rc.Info(ctx, "replication").Result()
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"role:slave", "master_link_status:up", "master_port:" + strconv.Itoa(m.Port)} {
				if !strings.Contains(info, want+"\r\n") {
					t.Errorf("replica %s: INFO replication lacks %s:\n%s", r.Addr, want, info)
				}
			}
			nodes, err := rc.ClusterNodes(ctx).Result()
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(nodes, "myself,slave "+id+" ") {
				t.Errorf("replica %s: CLUSTER NODES does not show it as a replica of %s:\n%s", r.Addr, id, nodes)
			}
			if got, err := rc.DBSize(ctx).Result(); err != nil || got != size {
				t.Errorf("DBSIZE on replica %s = %d, %v; want its master's %d", r.Addr, got, err, size)
			}
		}
	}
}

// Failover swaps a master and its replica, keeping every key; MoveSlots
// moves slots and their keys to another master.
func TestClusterFailoverAndMoveSlots(t *testing.T) {
	c := redistest.StartClusterWithReplicas(t, 3, 1)
	ctx := context.Background()
	cc := c.Client(t)
	for i := range 3000 {
		if err := cc.Set(ctx, fmt.Sprintf("k%d", i), i, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	oldMaster, oldReplica := c.Addrs[1], c.Replicas[1].Addr
	before, _ := c.Nodes[1].Client(t).DBSize(ctx).Result()
	c.Failover(t, 1)
	if c.Addrs[1] != oldReplica || c.Replicas[1].Addr != oldMaster || c.Nodes[1].Addr != oldReplica {
		t.Fatalf("after the failover: masters %v, replica of 1 %s", c.Addrs, c.Replicas[1].Addr)
	}
	nm := c.Nodes[1].Client(t)
	if role, _ := nm.Do(ctx, "ROLE").Slice(); len(role) == 0 || role[0] != "master" {
		t.Errorf("new master's ROLE %v", role)
	}
	if after, _ := nm.DBSize(ctx).Result(); after != before {
		t.Errorf("the new master holds %d keys, the old one %d", after, before)
	}
	slots := []int{0, 1, 2, 100, 5000}
	moved := c.MoveSlots(t, 0, 2, slots)
	var want int64
	for _, s := range slots {
		n, _ := c.Nodes[2].Client(t).ClusterCountKeysInSlot(ctx, s).Result()
		want += n
		if left, _ := c.Nodes[0].Client(t).ClusterCountKeysInSlot(ctx, s).Result(); left != 0 {
			t.Errorf("slot %d: %d keys left on the source", s, left)
		}
	}
	if int64(moved) != want || moved == 0 {
		t.Errorf("moved %d keys, the target holds %d of those slots", moved, want)
	}
	for i := range 3000 {
		if v, err := cc.Get(ctx, fmt.Sprintf("k%d", i)).Int(); err != nil || v != i {
			t.Fatalf("k%d after the moves: %v %v", i, v, err)
		}
	}
}

// A Sentinel started here knows its master by name.
func TestStartSentinel(t *testing.T) {
	m := redistest.Start(t)
	s := redistest.StartSentinel(t, "mymaster", m)
	c := redis.NewSentinelClient(&redis.Options{Addr: s.Addr})
	defer c.Close()
	addr, err := c.GetMasterAddrByName(context.Background(), "mymaster").Result()
	if err != nil || len(addr) != 2 || addr[0]+":"+addr[1] != m.Addr {
		t.Fatalf("GET-MASTER-ADDR-BY-NAME: %v %v, want %s", addr, err, m.Addr)
	}
}
