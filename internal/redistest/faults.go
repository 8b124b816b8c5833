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

// Failover promotes the first replica of master i with CLUSTER FAILOVER
// (the master agrees and hands over; no data is lost) and waits until the
// replica is a master serving the slots in every node's view. Afterwards
// Nodes[i] and Addrs[i] are the new master and the old one takes the
// replica's place in Replicas, so that Nodes stays the masters.
func (c *Cluster) Failover(tb testing.TB, i int) {
	tb.Helper()
	per := len(c.Replicas) / max(len(c.Nodes), 1)
	if per == 0 || i < 0 || i >= len(c.Nodes) {
		tb.Fatalf("redistest: Failover(%d) on a cluster of %d masters and %d replicas", i, len(c.Nodes), len(c.Replicas))
	}
	ctx, cancel := context.WithTimeout(context.Background(), clusterTimeout)
	defer cancel()
	rep := c.Replicas[i*per]
	rc := redis.NewClient(&redis.Options{Addr: rep.Addr, DisableIdentity: true})
	defer rc.Close()
	if err := rc.Do(ctx, "CLUSTER", "FAILOVER").Err(); err != nil {
		tb.Fatalf("redistest: CLUSTER FAILOVER on %s: %v", rep.Addr, err)
	}
	id, err := rc.Do(ctx, "CLUSTER", "MYID").Text()
	if err != nil {
		tb.Fatalf("redistest: CLUSTER MYID on %s: %v", rep.Addr, err)
	}
	c.Nodes[i], c.Replicas[i*per] = rep, c.Nodes[i]
	c.Addrs[i] = rep.Addr
	if err := c.waitView(ctx, func(nodes string) string {
		for line := range strings.Lines(nodes) {
			f := strings.Fields(line)
			if len(f) >= 9 && f[0] == id && strings.Contains(","+f[2]+",", ",master,") {
				return ""
			}
		}
		return rep.Addr + " is not yet a master serving slots"
	}); err != nil {
		tb.Fatalf("redistest: failover to %s: %v", rep.Addr, err)
	}
}

// MoveSlots migrates slots, with their keys, from master Nodes[from] to
// Nodes[to] as redis-cli --cluster reshard does: IMPORTING on the
// target, MIGRATING on the source, MIGRATE of the keys in batches, then
// SETSLOT NODE on both and on every other master. It returns the keys
// moved.
func (c *Cluster) MoveSlots(tb testing.TB, from, to int, slots []int) int {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*clusterTimeout)
	defer cancel()
	src := redis.NewClient(&redis.Options{Addr: c.Addrs[from], DisableIdentity: true})
	defer src.Close()
	dst := redis.NewClient(&redis.Options{Addr: c.Addrs[to], DisableIdentity: true})
	defer dst.Close()
	srcID, err1 := src.Do(ctx, "CLUSTER", "MYID").Text()
	dstID, err2 := dst.Do(ctx, "CLUSTER", "MYID").Text()
	if err1 != nil || err2 != nil {
		tb.Fatalf("redistest: CLUSTER MYID: %v %v", err1, err2)
	}
	host, port := "127.0.0.1", strconv.Itoa(c.Nodes[to].Port)
	moved := 0
	for _, s := range slots {
		steps := [][]any{
			{dst, "CLUSTER", "SETSLOT", s, "IMPORTING", srcID},
			{src, "CLUSTER", "SETSLOT", s, "MIGRATING", dstID},
		}
		for _, st := range steps {
			if err := st[0].(*redis.Client).Do(ctx, st[1:]...).Err(); err != nil {
				tb.Fatalf("redistest: slot %d: %v: %v", s, st[1:], err)
			}
		}
		for {
			keys, err := src.ClusterGetKeysInSlot(ctx, s, 100).Result()
			if err != nil {
				tb.Fatalf("redistest: CLUSTER GETKEYSINSLOT %d on %s: %v", s, c.Addrs[from], err)
			}
			if len(keys) == 0 {
				break
			}
			args := []any{"MIGRATE", host, port, "", 0, 5000, "KEYS"}
			for _, k := range keys {
				args = append(args, k)
			}
			if err := src.Do(ctx, args...).Err(); err != nil {
				tb.Fatalf("redistest: MIGRATE of slot %d to %s: %v", s, c.Addrs[to], err)
			}
			moved += len(keys)
		}
		for _, n := range []*redis.Client{dst, src} {
			if err := n.Do(ctx, "CLUSTER", "SETSLOT", s, "NODE", dstID).Err(); err != nil {
				tb.Fatalf("redistest: CLUSTER SETSLOT %d NODE: %v", s, err)
			}
		}
	}
	for i, a := range c.Addrs {
		if i == from || i == to {
			continue
		}
		m := redis.NewClient(&redis.Options{Addr: a, DisableIdentity: true})
		for _, s := range slots {
			if err := m.Do(ctx, "CLUSTER", "SETSLOT", s, "NODE", dstID).Err(); err != nil {
				m.Close()
				tb.Fatalf("redistest: CLUSTER SETSLOT %d NODE on %s: %v", s, a, err)
			}
		}
		m.Close()
	}
	return moved
}

// waitView waits until ok returns "" for the CLUSTER NODES of every
// master and replica that answers, and each reports cluster_state:ok.
func (c *Cluster) waitView(ctx context.Context, ok func(nodes string) string) error {
	all := append(append([]*Server{}, c.Nodes...), c.Replicas...)
	var last string
	for {
		why := ""
		for _, s := range all {
			rc := redis.NewClient(&redis.Options{Addr: s.Addr, DisableIdentity: true})
			info, err := rc.ClusterInfo(ctx).Result()
			if err == nil && !strings.Contains(info, "cluster_state:ok\r\n") {
				err = fmt.Errorf("cluster_state not ok")
			}
			var nodes string
			if err == nil {
				nodes, err = rc.ClusterNodes(ctx).Result()
			}
			rc.Close()
			if err != nil {
				why = s.Addr + ": " + err.Error()
				break
			}
			if why = ok(nodes); why != "" {
				why = s.Addr + ": " + why
				break
			}
		}
		if why == "" {
			return nil
		}
		last = why
		select {
		case <-ctx.Done():
			return fmt.Errorf("not settled after %v (last: %s)", clusterTimeout, last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Down is the Cluster once master i has stopped and the others agree it
// failed (CLUSTER NODES flags it "fail"; with cluster-require-full-coverage,
// the default, they then answer every key with CLUSTERDOWN). Stop Nodes[i]
// first: a test that reads the Cluster while the stopped master is only
// unreachable starts it with a long cluster-node-timeout, which Down
// shortens on the others.
func (c *Cluster) Down(tb testing.TB, i int) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clusterTimeout)
	defer cancel()
	gone := c.Nodes[i].Addr
	for j, s := range c.Nodes {
		if j == i {
			continue
		}
		rc := redis.NewClient(&redis.Options{Addr: s.Addr, DisableIdentity: true})
		err := rc.ConfigSet(ctx, "cluster-node-timeout", "500").Err()
		rc.Close()
		if err != nil {
			tb.Fatalf("redistest: CONFIG SET cluster-node-timeout on %s: %v", s.Addr, err)
		}
	}
	failed := func(s *Server) bool {
		rc := redis.NewClient(&redis.Options{Addr: s.Addr, DisableIdentity: true})
		defer rc.Close()
		nodes, err := rc.ClusterNodes(ctx).Result()
		if err != nil {
			return false
		}
		for line := range strings.Lines(nodes) {
			f := strings.Fields(line)
			if len(f) >= 3 && strings.HasPrefix(f[1], gone+"@") && strings.Contains(","+f[2]+",", ",fail,") {
				return true
			}
		}
		return false
	}
	for j := 0; j < len(c.Nodes); {
		switch {
		case j == i || failed(c.Nodes[j]):
			j++
		case ctx.Err() != nil:
			rc := redis.NewClient(&redis.Options{Addr: c.Nodes[j].Addr, DisableIdentity: true})
			nodes, err := rc.ClusterNodes(context.Background()).Result()
			rc.Close()
			tb.Fatalf("redistest: %s not marked failed by %s in %s: CLUSTER NODES %v\n%s", gone, c.Nodes[j].Addr, clusterTimeout, err, nodes)
		default:
			time.Sleep(50 * time.Millisecond)
		}
	}
}
