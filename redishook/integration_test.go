package redishook

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/redistest"
	"github.com/keyguard/keyguard/ttlpolicy"
)

// commandStats returns the commands the server executed (cmdstat_<name>
// → calls) since the last CONFIG RESETSTAT.
func commandStats(t *testing.T, c *redis.Client) map[string]string {
	t.Helper()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	stats := map[string]string{}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && strings.HasPrefix(name, "cmdstat_") {
			stats[strings.TrimPrefix(name, "cmdstat_")] = rest
		}
	}
	return stats
}

// TestEnforceRefusesBeforeSending: a refused command, pipeline or
// transaction never reaches the server (INFO commandstats).
func TestEnforceRefusesBeforeSending(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	rdb := srv.Client(t)
	h, pr := newHook(t, "order-team", Enforce)
	h.Install(rdb)
	if err := rdb.Ping(ctx).Err(); err != nil { // open the connection (HELLO, CLIENT SETINFO) first
		t.Fatal(err)
	}
	if err := admin.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}

	err := rdb.HSet(ctx, "promo:sku:1001", "couponAmount", 10).Err()
	var d *DeniedError
	if !errors.As(err, &d) || d.Owner != "promo-team" {
		t.Fatalf("HSET of promo's key: %v", err)
	}

	cmds, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, "order:order:1:base", "amount", 99)
		p.Set(ctx, "promo:flag:1", "x", time.Minute)
		p.Get(ctx, "order:cache:1")
		return nil
	})
	if !errors.Is(err, ErrDenied) {
		t.Fatalf("pipeline: %v", err)
	}
	for _, c := range cmds {
		if !errors.Is(c.Err(), ErrDenied) {
			t.Errorf("pipeline command %v: err %v, want the denial", c.Args(), c.Err())
		}
	}

	_, err = rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, "order:order:1:base", "amount", 99)
		p.Set(ctx, "order:cache:1", "v", 0) // no TTL on a TTL template
		return nil
	})
	if !errors.As(err, &d) || d.Reason != ReasonNoTTL {
		t.Fatalf("transaction: %v", err)
	}

	stats := commandStats(t, admin)
	for _, c := range []string{"hset", "set", "get", "multi", "exec"} {
		if s, ok := stats[c]; ok {
			t.Errorf("%s reached the server: %s", c, s)
		}
	}
	if n, _ := admin.Exists(ctx, "promo:sku:1001", "order:order:1:base", "promo:flag:1").Result(); n != 0 {
		t.Errorf("%d refused keys exist", n)
	}

	// What is allowed still goes through.
	if _, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, "order:cache:1", "v", 0)
		p.Expire(ctx, "order:cache:1", time.Minute)
		p.HSet(ctx, "order:order:1:base", "amount", 99)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if ttl := admin.TTL(ctx, "order:cache:1").Val(); ttl <= 0 {
		t.Errorf("ttl %v", ttl)
	}
	if got := testutil.ToFloat64(h.unreg.denied) + testutil.ToFloat64(h.ents[2].denied) + testutil.ToFloat64(h.ents[3].denied) + testutil.ToFloat64(h.ents[1].denied); got != 3 {
		t.Errorf("denied total %v, want 3 (one HSET, one pipeline, one transaction)", got)
	}
	lintMetrics(t, pr)
}

// TestObserveCounts: observe mode counts every command once per template,
// in single commands, pipelines and transactions, and lets all through.
func TestObserveCounts(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	h, pr := newHook(t, "order-team", Observe)
	h.Install(rdb)

	rdb.HSet(ctx, "order:order:1:base", "a", 1)               // write order base
	rdb.HGetAll(ctx, "order:order:1:base")                    // read order base
	rdb.HSet(ctx, "promo:sku:1001", "couponAmount", 10)       // foreign write: sent in observe mode
	rdb.Get(ctx, "promo_sku_1001")                            // unregistered read
	rdb.MGet(ctx, "order:cache:1", "order:cache:2", "nope:1") // one read of order:cache, one unregistered
	rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, "order:cache:1", "v", time.Minute) // write order cache
		p.Get(ctx, "order:cache:1")                   // read order cache
		return nil
	})
	rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Incr(ctx, "seq:order:no") // write seq
		return nil
	})
	if n := srv.Client(t).Exists(ctx, "promo:sku:1001").Val(); n != 1 {
		t.Fatal("observe mode refused a write")
	}
	const want = `
# HELP keyguard_commands_total Redis commands per key template, template owner, calling service and access (read|write).
# TYPE keyguard_commands_total counter
keyguard_commands_total{access="read",owner="order-team",service="order-team",template="order:cache:{id}"} 2
keyguard_commands_total{access="read",owner="order-team",service="order-team",template="order:order:{orderId:int}:base"} 1
keyguard_commands_total{access="write",owner="order-team",service="order-team",template="order:cache:{id}"} 1
keyguard_commands_total{access="write",owner="order-team",service="order-team",template="order:order:{orderId:int}:base"} 1
keyguard_commands_total{access="write",owner="order-team",service="order-team",template="seq:order:no"} 1
keyguard_commands_total{access="write",owner="promo-team",service="order-team",template="promo:sku:{skuId:int}"} 1
# HELP keyguard_foreign_writes_total Write attempts by a service that is neither the template's owner nor one of its writers.
# TYPE keyguard_foreign_writes_total counter
keyguard_foreign_writes_total{owner="promo-team",service="order-team",template="promo:sku:{skuId:int}"} 1
# HELP keyguard_unregistered_total Redis commands touching keys that match no registered template.
# TYPE keyguard_unregistered_total counter
keyguard_unregistered_total{access="read",service="order-team"} 2
`
	if err := testutil.GatherAndCompare(nonZero{pr}, strings.NewReader(want),
		MetricCommands, MetricForeignWrites, MetricUnregistered, MetricDenied); err != nil {
		t.Fatal(err)
	}
	lintMetrics(t, pr)
}

// countingHook counts the commands a client's hooks see (test only).
type countingHook struct{ n atomic.Int64 }

func (c *countingHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *countingHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() == "get" || cmd.Name() == "set" {
			c.n.Add(1)
		}
		return next(ctx, cmd)
	}
}
func (c *countingHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			if cmd.Name() == "get" || cmd.Name() == "set" {
				c.n.Add(1)
			}
		}
		return next(ctx, cmds)
	}
}

// TestClusterCountsOnce: on a 3-master cluster the hook, installed on the
// ClusterClient, counts each command once — single commands, a pipeline
// spread over every node, a transaction, and a command redirected by MOVED,
// which a node-level hook sees twice.
func TestClusterCountsOnce(t *testing.T) {
	ctx := context.Background()
	cl := redistest.StartCluster(t, 3)
	cc := cl.Client(t)
	h, _ := newHook(t, "order-team", Enforce)
	h.Install(cc)
	nodeLevel := &countingHook{}
	cc.OnNewNode(func(n *redis.Client) { n.AddHook(nodeLevel) })

	const n = 30
	for i := range n {
		if err := cc.Set(ctx, fmt.Sprintf("order:cache:%d", i), "v", time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cc.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := range n {
			p.Get(ctx, fmt.Sprintf("order:cache:%d", i))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := cc.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, "order:cache:{x}", "v", time.Minute)
		p.Get(ctx, "order:cache:{x}")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	wantWrites, wantReads := float64(n+1), float64(n+1)

	// A refused pipeline spanning nodes is refused whole.
	_, err := cc.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := range n {
			p.Set(ctx, fmt.Sprintf("order:cache:%d", i), "w", time.Minute)
		}
		p.HSet(ctx, "promo:sku:7", "f", "v")
		return nil
	})
	if !errors.Is(err, ErrDenied) {
		t.Fatalf("cross-node pipeline with a foreign write: %v", err)
	}
	if v := cc.Get(ctx, "order:cache:0").Val(); v != "v" {
		t.Fatalf("part of a refused pipeline was sent: order:cache:0 = %q", v)
	}
	wantReads++

	// MOVED: move the empty slot of a fresh key to another master behind
	// the client's back; the client's first attempt gets MOVED and is retried.
	key := "order:cache:moved"
	if err := cc.Get(ctx, key).Err(); !errors.Is(err, redis.Nil) { // loads the slot map
		t.Fatal(err)
	}
	wantReads++
	moveSlot(t, cl, key)
	before := nodeLevel.n.Load()
	if err := cc.Set(ctx, key, "v", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	wantWrites++
	nodeSeen := nodeLevel.n.Load() - before

	e := &h.ents[1] // order:cache:{id}
	if got := testutil.ToFloat64(e.cmds[accWrite]); got != wantWrites {
		t.Errorf("writes counted %v, want %v", got, wantWrites)
	}
	if got := testutil.ToFloat64(e.cmds[accRead]); got != wantReads {
		t.Errorf("reads counted %v, want %v", got, wantReads)
	}
	if nodeSeen != 2 {
		t.Errorf("node-level hooks saw the redirected SET %d times, want 2 (attempt + retry after MOVED)", nodeSeen)
	}
	t.Logf("redirected SET: cluster-level hook counted it once, node-level hooks saw it %d times", nodeSeen)
}

// moveSlot reassigns the (empty) slot of key to another master, the way
// redis-cli --cluster reshard does, without migrating keys.
func moveSlot(t *testing.T, cl *redistest.Cluster, key string) {
	t.Helper()
	ctx := context.Background()
	var clients []*redis.Client
	var ids []string
	for _, s := range cl.Nodes {
		c := s.Client(t)
		clients = append(clients, c)
		id, err := c.Do(ctx, "cluster", "myid").Text()
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	slot, err := clients[0].ClusterKeySlot(ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	src := -1
	for i, c := range clients {
		if n, _ := c.ClusterCountKeysInSlot(ctx, int(slot)).Result(); n > 0 {
			t.Fatalf("slot %d not empty", slot)
		}
		shards, err := c.ClusterSlots(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range shards {
			if int64(s.Start) <= slot && slot <= int64(s.End) && s.Nodes[0].ID == ids[i] {
				src = i
			}
		}
	}
	if src < 0 {
		t.Fatalf("no owner for slot %d", slot)
	}
	dst := (src + 1) % len(clients)
	must := func(c *redis.Client, args ...any) {
		if err := c.Do(ctx, args...).Err(); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	must(clients[dst], "cluster", "setslot", slot, "importing", ids[src])
	must(clients[src], "cluster", "setslot", slot, "migrating", ids[dst])
	must(clients[dst], "cluster", "setslot", slot, "node", ids[dst])
	for i, c := range clients {
		if i != dst {
			must(c, "cluster", "setslot", slot, "node", ids[dst])
		}
	}
}

// TestWatchOnCluster: Hook.Watch covers the commands of a Watch callback,
// which go-redis does not run through cluster-level hooks.
func TestWatchOnCluster(t *testing.T) {
	ctx := context.Background()
	cl := redistest.StartCluster(t, 3)
	cc := cl.Client(t)
	h, _ := newHook(t, "order-team", Enforce)
	h.Install(cc)
	key := "promo:sku:{42}"
	err := h.Watch(ctx, cc, func(tx *redis.Tx) error {
		_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.HSet(ctx, key, "f", "v")
			return nil
		})
		return err
	}, key)
	if !errors.Is(err, ErrDenied) {
		t.Fatalf("Hook.Watch let a foreign write through: %v", err)
	}
	if n := cc.Exists(ctx, key).Val(); n != 0 {
		t.Fatal("the key was written")
	}
	// Plain Watch bypasses the cluster-level hook (go-redis #1547): the
	// reason Hook.Watch exists. Documented, not asserted.
}

func TestNameConnections(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	opt := &redis.Options{Addr: srv.Addr}
	if err := NameConnections(opt, "order-team"); err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	if err := rdb.Ping(ctx).Err(); err != nil { // Redis 7.0 lacks CLIENT SETINFO: the connection still works
		t.Fatal(err)
	}
	list, err := rdb.ClientList(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(list, "name=order-team ") {
		t.Fatalf("CLIENT LIST does not name the connection:\n%s", list)
	}
	if err := NameConnections(opt, "order team"); err == nil {
		t.Fatal("a name with a space was accepted")
	}
	if err := NameClusterConnections(&redis.ClusterOptions{}, "order-team"); err != nil {
		t.Fatal(err)
	}
}

// TestTTLPolicyPassesEnforce: writes through ttlpolicy satisfy the hook's
// TTL rules in enforce mode; the same write without TTL does not.
func TestTTLPolicyPassesEnforce(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	reg := testRegistry(t)
	New(reg, Options{Service: "order-team", Mode: Enforce}).Install(rdb)
	p := ttlpolicy.New(reg, ttlpolicy.Options{})
	if err := p.Set(ctx, rdb, "order:cache:1", "v"); err != nil {
		t.Fatal(err)
	}
	if err := p.Set(ctx, rdb, "seq:order:no", "1"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.HSet(ctx, rdb, "order:order:1:base", "amount", 99); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Set(ctx, "order:cache:2", "v", 0).Err(); !errors.Is(err, ErrDenied) {
		t.Fatalf("SET without TTL: %v", err)
	}
	if err := p.Set(ctx, rdb, "promo:flag:1", "v"); !errors.Is(err, ErrDenied) {
		t.Fatalf("ttlpolicy does not bypass ownership: %v", err)
	}
}
