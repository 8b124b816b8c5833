package redistest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

const (
	// clusterTimeout bounds forming the cluster after all nodes are up.
	clusterTimeout = 30 * time.Second
	slotCount      = 16384
)

// Cluster is a Redis Cluster of masters only, each a Server with its own
// port, cluster bus port and directory (nodes.conf lives in Node.Dir).
type Cluster struct {
	Nodes []*Server
	Addrs []string // Nodes[i].Addr
}

// StartCluster starts masters cluster-enabled servers, splits the 16384
// slots evenly among them, joins them, and waits until every node reports
// cluster_state:ok and sees all masters. extraConfig lines are appended to
// every node's config (after cluster-node-timeout 2000, so they can
// override it).
func StartCluster(tb testing.TB, masters int, extraConfig ...string) *Cluster {
	tb.Helper()
	if masters < 1 || masters > slotCount {
		tb.Fatalf("redistest: StartCluster with %d masters; want 1..%d", masters, slotCount)
	}
	bin := lookBinary(tb)
	conf := append([]string{
		"cluster-enabled yes",
		"cluster-config-file nodes.conf",
		"cluster-node-timeout 2000",
		"cluster-announce-ip 127.0.0.1",
	}, extraConfig...)
	c := &Cluster{}
	for range masters {
		s := start(tb, bin, true, conf)
		c.Nodes = append(c.Nodes, s)
		c.Addrs = append(c.Addrs, s.Addr)
	}
	if err := c.form(); err != nil {
		for _, s := range c.Nodes {
			tb.Logf("redistest: cluster node %s:\n%s", s.Addr, s.tail())
		}
		tb.Fatalf("redistest: form cluster of %d masters: %v", masters, err)
	}
	return c
}

// Client returns a go-redis cluster client seeded with all nodes, closed at
// cleanup.
func (c *Cluster) Client(tb testing.TB) *redis.ClusterClient {
	tb.Helper()
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs})
	tb.Cleanup(func() { _ = cc.Close() })
	return cc
}

// URL returns "redis://host1:port1,host2:port2,..." listing every node.
func (c *Cluster) URL() string { return "redis://" + strings.Join(c.Addrs, ",") }

// form assigns slots, introduces the nodes to the first one, and waits for
// the cluster to converge.
func (c *Cluster) form() error {
	ctx, cancel := context.WithTimeout(context.Background(), clusterTimeout)
	defer cancel()
	n := len(c.Nodes)
	clients := make([]*redis.Client, n)
	for i, s := range c.Nodes {
		clients[i] = redis.NewClient(&redis.Options{Addr: s.Addr, DisableIdentity: true})
		defer clients[i].Close()
	}
	for i, rdb := range clients {
		// Distinct epochs up front spare the cluster its collision dance.
		if err := rdb.Do(ctx, "CLUSTER", "SET-CONFIG-EPOCH", i+1).Err(); err != nil {
			return fmt.Errorf("CLUSTER SET-CONFIG-EPOCH on %s: %w", c.Addrs[i], err)
		}
		lo, hi := i*slotCount/n, (i+1)*slotCount/n-1
		if err := rdb.ClusterAddSlotsRange(ctx, lo, hi).Err(); err != nil {
			return fmt.Errorf("CLUSTER ADDSLOTSRANGE %d %d on %s: %w", lo, hi, c.Addrs[i], err)
		}
	}
	first := c.Nodes[0]
	firstBus, err := clients[0].ConfigGet(ctx, "cluster-port").Result()
	if err != nil {
		return fmt.Errorf("CONFIG GET cluster-port on %s: %w", first.Addr, err)
	}
	for i := 1; i < n; i++ {
		err := clients[i].Do(ctx, "CLUSTER", "MEET", "127.0.0.1", first.Port, firstBus["cluster-port"]).Err()
		if err != nil {
			return fmt.Errorf("CLUSTER MEET from %s to %s: %w", c.Addrs[i], first.Addr, err)
		}
	}
	var last string
	for {
		ok := true
		for i, rdb := range clients {
			if why := converged(ctx, rdb, n); why != "" {
				ok, last = false, c.Addrs[i]+": "+why
				break
			}
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not converged after %v (last: %s); raise clusterTimeout on a slow machine", clusterTimeout, last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// converged returns "" when the node sees a healthy cluster of n masters
// covering all slots, or why not.
func converged(ctx context.Context, rdb *redis.Client, n int) string {
	info, err := rdb.ClusterInfo(ctx).Result()
	if err != nil {
		return "CLUSTER INFO: " + err.Error()
	}
	for _, want := range []string{
		"cluster_state:ok",
		"cluster_slots_ok:" + strconv.Itoa(slotCount),
		"cluster_known_nodes:" + strconv.Itoa(n),
	} {
		if !strings.Contains(info, want+"\r\n") {
			return "CLUSTER INFO lacks " + want
		}
	}
	nodes, err := rdb.ClusterNodes(ctx).Result()
	if err != nil {
		return "CLUSTER NODES: " + err.Error()
	}
	masters := 0
	for line := range strings.Lines(nodes) {
		f := strings.Fields(line)
		// <id> <ip:port@cport> <flags> <master> <ping> <pong> <epoch> <link> <slots...>
		if len(f) < 9 {
			continue // a master without slots does not count
		}
		flags := "," + f[2] + ","
		if !strings.Contains(flags, ",master,") || strings.Contains(flags, "fail") ||
			strings.Contains(flags, "handshake") || strings.Contains(flags, "noaddr") || f[7] != "connected" {
			continue
		}
		masters++
	}
	if masters != n {
		return fmt.Sprintf("CLUSTER NODES shows %d healthy masters with slots, want %d", masters, n)
	}
	return ""
}
