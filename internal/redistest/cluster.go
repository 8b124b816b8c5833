package redistest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keyguard/keyguard/internal/topology"
	"github.com/redis/go-redis/v9"
)

const (
	// clusterTimeout bounds forming the cluster after all nodes are up.
	clusterTimeout = 30 * time.Second
	slotCount      = 16384
)

// Cluster is a Redis Cluster, each node a Server with its own port,
// cluster bus port and directory (nodes.conf lives in Server.Dir). Nodes
// and Addrs are the masters only; Replicas, filled by
// StartClusterWithReplicas, holds the replicas, those of Nodes[i] at
// Replicas[i*r : (i+1)*r] for r replicas per master.
type Cluster struct {
	Nodes    []*Server
	Addrs    []string // Nodes[i].Addr
	Replicas []*Server
}

// StartCluster starts masters cluster-enabled servers, splits the 16384
// slots evenly among them, joins them, and waits until every node reports
// cluster_state:ok and sees all masters. extraConfig lines are appended to
// every node's config (after cluster-node-timeout 2000, so they can
// override it).
func StartCluster(tb testing.TB, masters int, extraConfig ...string) *Cluster {
	tb.Helper()
	return startCluster(tb, masters, 0, extraConfig)
}

// StartClusterWithReplicas is StartCluster plus replicasPerMaster replicas
// of every master: it starts them, joins them to the cluster, makes each
// replicate its master (CLUSTER REPLICATE), and waits until every replica
// reports master_link_status:up and every node's CLUSTER NODES lists it,
// connected, as a replica of its master. Masters sync replicas at once
// (repl-diskless-sync-delay 0 precedes extraConfig). With
// replicasPerMaster 0 it is StartCluster.
func StartClusterWithReplicas(tb testing.TB, masters, replicasPerMaster int, extraConfig ...string) *Cluster {
	tb.Helper()
	if replicasPerMaster < 0 {
		tb.Fatalf("redistest: StartClusterWithReplicas with %d replicas per master; want 0 or more", replicasPerMaster)
	}
	if replicasPerMaster == 0 {
		return startCluster(tb, masters, 0, extraConfig)
	}
	return startCluster(tb, masters, replicasPerMaster, append([]string{"repl-diskless-sync-delay 0"}, extraConfig...))
}

// StartClusterPorts is StartCluster whose nodes each take n more free
// ports, which config turns into more config lines (a TLS port of each
// node: tls-port, tls-cluster).
func StartClusterPorts(tb testing.TB, masters, n int, config func(ports []int) []string) *Cluster {
	tb.Helper()
	return startClusterPorts(tb, masters, 0, n, func(ports []int) []string { return config(ports) })
}

func startCluster(tb testing.TB, masters, replicasPerMaster int, extraConfig []string) *Cluster {
	tb.Helper()
	return startClusterPorts(tb, masters, replicasPerMaster, 0, func([]int) []string { return extraConfig })
}

func startClusterPorts(tb testing.TB, masters, replicasPerMaster, n int, extra func(ports []int) []string) *Cluster {
	tb.Helper()
	if masters < 1 || masters > slotCount {
		tb.Fatalf("redistest: StartCluster with %d masters; want 1..%d", masters, slotCount)
	}
	bin := lookBinary(tb)
	conf := func(ports []int) []string {
		return append([]string{
			"cluster-enabled yes",
			"cluster-config-file nodes.conf",
			"cluster-node-timeout 2000",
			"cluster-announce-ip 127.0.0.1",
		}, extra(ports)...)
	}
	c := &Cluster{}
	for range masters {
		s := startPorts(tb, bin, true, n, conf)
		c.Nodes = append(c.Nodes, s)
		c.Addrs = append(c.Addrs, s.Addr)
	}
	if err := c.form(); err != nil {
		for _, s := range c.Nodes {
			tb.Logf("redistest: cluster node %s:\n%s", s.Addr, s.tail())
		}
		tb.Fatalf("redistest: form cluster of %d masters: %v", masters, err)
	}
	if replicasPerMaster == 0 {
		return c
	}
	for range masters * replicasPerMaster {
		c.Replicas = append(c.Replicas, startPorts(tb, bin, true, n, conf))
	}
	if err := c.attachReplicas(replicasPerMaster); err != nil {
		for _, s := range append(append([]*Server{}, c.Nodes...), c.Replicas...) {
			tb.Logf("redistest: cluster node %s:\n%s", s.Addr, s.tail())
		}
		tb.Fatalf("redistest: attach %d replicas per master to a cluster of %d masters: %v", replicasPerMaster, masters, err)
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
	for _, nd := range topology.Parse(nodes, "") {
		// a master without slots does not count; fail? (suspected) does
		if nd.IsMaster() && len(nd.Owned) > 0 && nd.Usable() && !nd.Has("fail?") && nd.Linked {
			masters++
		}
	}
	if masters != n {
		return fmt.Sprintf("CLUSTER NODES shows %d healthy masters with slots, want %d", masters, n)
	}
	return ""
}

// attachReplicas introduces the started replicas to the cluster, makes
// Replicas[i*per+j] replicate Nodes[i], and waits until replication is up
// and every node agrees on the topology.
func (c *Cluster) attachReplicas(per int) error {
	ctx, cancel := context.WithTimeout(context.Background(), clusterTimeout)
	defer cancel()
	all := append(append([]*Server{}, c.Nodes...), c.Replicas...)
	clients := make([]*redis.Client, len(all))
	for i, s := range all {
		clients[i] = redis.NewClient(&redis.Options{Addr: s.Addr, DisableIdentity: true})
		defer clients[i].Close()
	}
	masters, replicas := clients[:len(c.Nodes)], clients[len(c.Nodes):]
	ids := make([]string, len(c.Nodes))
	for i, rdb := range masters {
		id, err := rdb.Do(ctx, "CLUSTER", "MYID").Text()
		if err != nil {
			return fmt.Errorf("CLUSTER MYID on %s: %w", c.Addrs[i], err)
		}
		ids[i] = id
	}
	first := c.Nodes[0]
	firstBus, err := masters[0].ConfigGet(ctx, "cluster-port").Result()
	if err != nil {
		return fmt.Errorf("CONFIG GET cluster-port on %s: %w", first.Addr, err)
	}
	for j, rdb := range replicas {
		err := rdb.Do(ctx, "CLUSTER", "MEET", "127.0.0.1", first.Port, firstBus["cluster-port"]).Err()
		if err != nil {
			return fmt.Errorf("CLUSTER MEET from %s to %s: %w", c.Replicas[j].Addr, first.Addr, err)
		}
	}
	// CLUSTER REPLICATE needs the replica to know its master: wait for
	// gossip to bring the master's id, then ask.
	pending := make([]bool, len(replicas))
	for j := range pending {
		pending[j] = true
	}
	var last string
	for {
		left := 0
		for j, rdb := range replicas {
			if !pending[j] {
				continue
			}
			err := rdb.Do(ctx, "CLUSTER", "REPLICATE", ids[j/per]).Err()
			if err == nil {
				pending[j] = false
				continue
			}
			// "ERR Unknown node <id>" until gossip arrives.
			left, last = left+1, c.Replicas[j].Addr+": CLUSTER REPLICATE "+ids[j/per]+": "+err.Error()
		}
		if left == 0 {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("replicas did not learn their masters after %v (last: %s); raise clusterTimeout on a slow machine", clusterTimeout, last)
		case <-time.After(50 * time.Millisecond):
		}
	}
	for {
		why := ""
		for j, rdb := range replicas {
			if why = replicaUp(ctx, rdb); why != "" {
				why = c.Replicas[j].Addr + ": " + why
				break
			}
		}
		for i := 0; why == "" && i < len(clients); i++ {
			if why = replicasListed(ctx, clients[i], c.Replicas, ids, per); why != "" {
				why = all[i].Addr + ": " + why
			}
		}
		if why == "" {
			return nil
		}
		last = why
		select {
		case <-ctx.Done():
			return fmt.Errorf("replication not up after %v (last: %s); raise clusterTimeout on a slow machine", clusterTimeout, last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// replicaUp returns "" when the node is a replica whose link to its master
// is up, or why not.
func replicaUp(ctx context.Context, rdb *redis.Client) string {
	info, err := rdb.Info(ctx, "replication").Result()
	if err != nil {
		return "INFO replication: " + err.Error()
	}
	for _, want := range []string{"role:slave", "master_link_status:up"} {
		if !strings.Contains(info, want+"\r\n") {
			return "INFO replication lacks " + want
		}
	}
	return ""
}

// replicasListed returns "" when the node sees a healthy cluster in which
// every replica is a connected replica of its master (replicas[j] of
// ids[j/per]), or why not.
func replicasListed(ctx context.Context, rdb *redis.Client, replicas []*Server, ids []string, per int) string {
	info, err := rdb.ClusterInfo(ctx).Result()
	if err != nil {
		return "CLUSTER INFO: " + err.Error()
	}
	for _, want := range []string{
		"cluster_state:ok",
		"cluster_slots_ok:" + strconv.Itoa(slotCount),
		"cluster_known_nodes:" + strconv.Itoa(len(ids)+len(replicas)),
	} {
		if !strings.Contains(info, want+"\r\n") {
			return "CLUSTER INFO lacks " + want
		}
	}
	nodes, err := rdb.ClusterNodes(ctx).Result()
	if err != nil {
		return "CLUSTER NODES: " + err.Error()
	}
	masterOf := map[string]string{} // "ip:port" of a healthy connected replica → its master's id
	for _, nd := range topology.Parse(nodes, "") {
		if nd.Has("slave") && nd.Usable() && !nd.Has("fail?") && nd.Linked {
			masterOf[nd.Addr] = nd.Master
		}
	}
	for j, s := range replicas {
		if got, want := masterOf[s.Addr], ids[j/per]; got != want {
			return fmt.Sprintf("CLUSTER NODES shows %s as a replica of %q, want a connected replica of %s", s.Addr, got, want)
		}
	}
	return ""
}
