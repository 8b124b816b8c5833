package dualwrite

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/keyslot"
	"github.com/keyguard/keyguard/internal/redistest"
	"github.com/keyguard/keyguard/migration"
	"github.com/keyguard/keyguard/registry"
)

const testRegistry = `version: 1
separator: ":"
domains:
  old: {owner: team-a}
  new: {owner: team-a}
  tag: {owner: team-a}
  promo: {owner: promo-team}
  order: {owner: order-team}
keys:
  - {key: "old:s:{id}", type: string, ttl: 1h}
  - {key: "new:s:{id}", type: string, ttl: 1h}
  - {key: "old:l:{id}", type: list, ttl: 1h}
  - {key: "new:l:{id}", type: list, ttl: 1h}
  - {key: "tag:{{u{id}}}:old", type: string, ttl: 1h}
  - {key: "tag:{{u{id}}}:new", type: string, ttl: 1h}
  - {key: "tag:{{l{id}}}:old", type: list, ttl: 1h}
  - {key: "tag:{{l{id}}}:new", type: list, ttl: 1h}
  - {key: "tag:{{h{id}}}:old", type: hash, ttl: 1h}
  - {key: "tag:{{h{id}}}:new", type: hash, ttl: 1h}
  - {key: "promo:sku:{skuId:int}", type: hash, ttl: 10m, guard: true}
  - {key: "order:sku:{skuId:int}:settle-preview", type: hash, ttl: 5m}
`

func testPlan(t testing.TB, from, to string, fields ...string) *migration.Plan {
	t.Helper()
	reg, err := registry.Parse("test.yaml", []byte(testRegistry))
	if err != nil {
		t.Fatal(err)
	}
	p, err := migration.NewPlan(reg, from, to, migration.PlanOptions{Fields: fields})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

type target struct {
	name    string
	rdb     redis.UniversalClient
	cluster bool
}

func targets(t *testing.T) []target {
	t.Helper()
	srv := redistest.Start(t)
	c := redistest.StartCluster(t, 3)
	return []target{{"standalone", srv.Client(t), false}, {"cluster", c.Client(t), true}}
}

// TestIntegration runs the scenarios against one standalone server and one
// 3-master Cluster, emptied (FLUSHALL, CONFIG RESETSTAT) before each.
func TestIntegration(t *testing.T) {
	ctx := context.Background()
	tgs := targets(t)
	for _, sc := range []struct {
		name string
		fn   func(*testing.T, context.Context, target)
	}{
		{"ReplaceWritesBothWithOneTTL", testReplaceWritesBothWithOneTTL},
		{"UpdateSeedsTheNewKey", testUpdateSeedsTheNewKey},
		{"PartialFailure", testPartialFailure},
		{"WritersDuringCopy", testWritersDuringCopy},
	} {
		for _, tg := range tgs {
			t.Run(sc.name+"/"+tg.name, func(t *testing.T) {
				each(t, ctx, tg.rdb, func(c *redis.Client) error {
					c.ConfigResetStat(ctx)
					return c.FlushAll(ctx).Err()
				})
				sc.fn(t, ctx, tg)
			})
		}
	}
}

// each runs fn on the server or on every Cluster master.
func each(t *testing.T, ctx context.Context, rdb redis.UniversalClient, fn func(*redis.Client) error) {
	t.Helper()
	var err error
	switch c := rdb.(type) {
	case *redis.Client:
		err = fn(c)
	case *redis.ClusterClient:
		err = c.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error { return fn(m) })
	}
	if err != nil {
		t.Fatal(err)
	}
}

func set(v string) Write {
	return func(p redis.Pipeliner, key string) { p.Set(context.Background(), key, v, 0) }
}

func testReplaceWritesBothWithOneTTL(t *testing.T, ctx context.Context, tg target) {
	metrics := prometheus.NewRegistry()
	for _, pr := range [][2]string{{"old:s:{id}", "new:s:{id}"}, {"tag:{{u{id}}}:old", "tag:{{u{id}}}:new"}} {
		p := testPlan(t, pr[0], pr[1])
		w, err := NewWriter(tg.rdb, p, Options{Registerer: metrics})
		if err != nil {
			t.Fatal(err)
		}
		old := strings.ReplaceAll(strings.ReplaceAll(pr[0], "{{", "{"), "{id}}}", "7}")
		old = strings.ReplaceAll(old, "{id}", "7")
		execs := calls(t, ctx, tg.rdb, "exec")
		start := time.Now()
		ks, err := w.Replace(ctx, old, set("v1"))
		took := time.Since(start)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{ks.Old, ks.New} {
			if got := tg.rdb.Get(ctx, k).Val(); got != "v1" {
				t.Errorf("%s = %q", k, got)
			}
		}
		eo, en := tg.rdb.PExpireTime(ctx, ks.Old).Val(), tg.rdb.PExpireTime(ctx, ks.New).Val()
		// One TTL, set by each node as the write arrives: the deadlines are
		// apart by at most the time the write took (one MULTI: 0).
		if eo <= 0 || (eo-en).Abs() > took.Truncate(time.Millisecond)+time.Millisecond {
			t.Errorf("expiries %v and %v, the write took %v", eo, en, took)
		}
		if ttl := tg.rdb.PTTL(ctx, ks.New).Val(); ttl < 59*time.Minute {
			t.Errorf("TTL %v, want the template's 1h", ttl)
		}
		want := 1 // one MULTI/EXEC for both keys
		if tg.cluster && keyslot.Slot(ks.Old) != keyslot.Slot(ks.New) {
			want = 2 // one per key, sent at once
		}
		if got := calls(t, ctx, tg.rdb, "exec") - execs; got != want {
			t.Errorf("%s: %d EXECs, want %d", pr[0], got, want)
		}
	}
	if got := counter(t, metrics, MetricWrites, "old:s:{id}", "new:s:{id}", "ok"); got != 1 {
		t.Errorf("writes ok = %v", got)
	}
}

// calls sums INFO commandstats calls of cmd over every master.
func calls(t testing.TB, ctx context.Context, rdb redis.UniversalClient, cmd string) int {
	t.Helper()
	total := 0
	count := func(c *redis.Client) {
		for line := range strings.Lines(c.Info(ctx, "commandstats").Val()) {
			if rest, ok := strings.CutPrefix(line, "cmdstat_"+cmd+":calls="); ok {
				v, _ := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
				total += v
			}
		}
	}
	switch c := rdb.(type) {
	case *redis.Client:
		count(c)
	case *redis.ClusterClient:
		var mu sync.Mutex
		var ms []*redis.Client
		c.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
			mu.Lock()
			ms = append(ms, m)
			mu.Unlock()
			return nil
		})
		for _, m := range ms {
			count(m)
		}
	}
	return total
}

// counter is the value of the series name{labels} in g, 0 when absent.
func counter(t testing.TB, g prometheus.Gatherer, name string, labels ...string) float64 {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			var got []string
			for _, l := range m.GetLabel() {
				got = append(got, l.GetValue())
			}
			slices.Sort(got) // label values in the order of the label names
			want := slices.Sorted(slices.Values(labels))
			if slices.Equal(got, want) {
				return m.GetCounter().GetValue() + m.GetGauge().GetValue()
			}
		}
	}
	return 0
}

func testUpdateSeedsTheNewKey(t *testing.T, ctx context.Context, tg target) {
	rdb := tg.rdb
	rdb.HSet(ctx, "tag:{h1}:old", "a", "1", "b", "2")
	w, err := NewWriter(rdb, testPlan(t, "tag:{{h{id}}}:old", "tag:{{h{id}}}:new"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	incr := func(p redis.Pipeliner, key string) { p.HIncrBy(ctx, key, "n", 1) }
	for range 3 {
		if _, err := w.Update(ctx, "tag:{h1}:old", incr); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{"tag:{h1}:old", "tag:{h1}:new"} {
		if got := rdb.HGetAll(ctx, k).Val(); len(got) != 3 || got["a"] != "1" || got["n"] != "3" {
			t.Errorf("%s = %v", k, got)
		}
	}
	// Moved fields: only the order team's fields seed the new key.
	rdb.HSet(ctx, "promo:sku:1", "activityId", "9", "couponAmount", "10")
	fw, err := NewWriter(rdb, testPlan(t, "promo:sku:{skuId:int}", "order:sku:{skuId:int}:settle-preview", "couponAmount", "promoTotal"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = fw.Update(ctx, "promo:sku:1", func(p redis.Pipeliner, key string) { p.HSet(ctx, key, "promoTotal", 30) })
	if tg.cluster {
		if !errors.Is(err, ErrCrossSlot) {
			t.Fatalf("cross-slot Update: %v", err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if got := rdb.HGetAll(ctx, "order:sku:1:settle-preview").Val(); len(got) != 2 || got["couponAmount"] != "10" || got["promoTotal"] != "30" {
		t.Errorf("new hash %v", got)
	}
	if got := rdb.HGetAll(ctx, "promo:sku:1").Val(); len(got) != 3 {
		t.Errorf("old hash %v", got)
	}
	// Replace with moved fields empties only those fields of the old hash.
	if _, err := fw.Replace(ctx, "promo:sku:1", func(p redis.Pipeliner, key string) { p.HSet(ctx, key, "promoTotal", 31) }); err != nil {
		t.Fatal(err)
	}
	if got := rdb.HGetAll(ctx, "promo:sku:1").Val(); len(got) != 2 || got["activityId"] != "9" || got["promoTotal"] != "31" {
		t.Errorf("old hash after Replace %v", got)
	}
	if ttl := rdb.PTTL(ctx, "promo:sku:1").Val(); ttl < 4*time.Minute {
		t.Errorf("the old hash without a TTL got %v", ttl)
	}
}

func testPartialFailure(t *testing.T, ctx context.Context, tg target) {
	rdb := tg.rdb
	metrics := prometheus.NewRegistry()
	// In one transaction: a runtime error on the new key only.
	rdb.RPush(ctx, "tag:{l1}:old", "a")
	rdb.Set(ctx, "tag:{l1}:new", "not a list", 0)
	w, err := NewWriter(rdb, testPlan(t, "tag:{{l{id}}}:old", "tag:{{l{id}}}:new"), Options{Registerer: metrics})
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.Update(ctx, "tag:{l1}:old", func(p redis.Pipeliner, key string) { p.RPush(ctx, key, "b") })
	var pe *PartialError
	if !errors.As(err, &pe) || pe.Old != nil || pe.New == nil || !strings.Contains(err.Error(), "WRONGTYPE") {
		t.Fatalf("err = %v, want a PartialError on the new key", err)
	}
	if got := rdb.LRange(ctx, "tag:{l1}:old", 0, -1).Val(); len(got) != 2 {
		t.Errorf("old list %v", got)
	}
	// Across slots: a user that may not write the new keys.
	forbid(t, ctx, rdb)
	restricted := restrictedClient(t, rdb)
	cw, err := NewWriter(restricted, testPlan(t, "old:s:{id}", "new:s:{id}"), Options{Registerer: metrics})
	if err != nil {
		t.Fatal(err)
	}
	_, err = cw.Replace(ctx, "old:s:1", set("x"))
	if !tg.cluster {
		// One server: one transaction, which the refused command aborts.
		if err == nil || errors.As(err, &pe) || rdb.Exists(ctx, "old:s:1").Val() != 0 {
			t.Fatalf("standalone write with the new key forbidden: %v", err)
		}
		return
	}
	if !errors.As(err, &pe) || pe.New == nil || pe.Old != nil || !strings.Contains(err.Error(), "NOPERM") {
		t.Fatalf("err = %v, want a PartialError on the new key", err)
	}
	if rdb.Get(ctx, "old:s:1").Val() != "x" {
		t.Error("the old key was not written")
	}
	sw, err := NewWriter(restricted, testPlan(t, "tag:{{u{id}}}:old", "tag:{{u{id}}}:new"), Options{Registerer: metrics})
	if err != nil {
		t.Fatal(err)
	}
	// In one transaction a refused command aborts it: nothing written.
	_, err = sw.Replace(ctx, "tag:{u1}:old", set("x"))
	if err == nil || errors.As(err, &pe) {
		t.Fatalf("one-slot write with the new key forbidden: %v", err)
	}
	if rdb.Exists(ctx, "tag:{u1}:old").Val() != 0 {
		t.Error("an aborted transaction wrote the old key")
	}
	if got := counter(t, metrics, MetricWrites, "old:s:{id}", "new:s:{id}", "partial"); got != 1 {
		t.Errorf("partial writes = %v", got)
	}
}

// forbid creates the user "oldonly" that may write old keys only, on
// every master.
func forbid(t *testing.T, ctx context.Context, rdb redis.UniversalClient) {
	t.Helper()
	rule := []any{"acl", "setuser", "oldonly", "on", ">pw", "~old:*", "~tag:*:old", "~tag:{u*}:old", "+@all"}
	switch c := rdb.(type) {
	case *redis.Client:
		if err := c.Do(ctx, rule...).Err(); err != nil {
			t.Fatal(err)
		}
	case *redis.ClusterClient:
		if err := c.ForEachShard(ctx, func(ctx context.Context, n *redis.Client) error { return n.Do(ctx, rule...).Err() }); err != nil {
			t.Fatal(err)
		}
	}
}

func restrictedClient(t *testing.T, rdb redis.UniversalClient) redis.UniversalClient {
	t.Helper()
	var c redis.UniversalClient
	switch x := rdb.(type) {
	case *redis.Client:
		o := *x.Options()
		o.Username, o.Password = "oldonly", "pw"
		c = redis.NewClient(&o)
	case *redis.ClusterClient:
		o := *x.Options()
		o.Username, o.Password = "oldonly", "pw"
		c = redis.NewClusterClient(&o)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestReader(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	metrics := prometheus.NewRegistry()
	p := testPlan(t, "old:s:{id}", "new:s:{id}")
	r, err := NewReader(rdb, p, Options{Percent: 10, Registerer: metrics})
	if err != nil {
		t.Fatal(err)
	}
	in := map[string]bool{}
	n := 0
	for i := range 5000 {
		k := fmt.Sprintf("old:s:%d", i)
		if r.InRollout(k) {
			in[k] = true
			n++
		}
	}
	if n < 400 || n > 600 {
		t.Errorf("%d of 5000 keys in a 10%% rollout", n)
	}
	for _, pct := range []float64{20, 55.5, 100} {
		if err := r.SetPercent(pct); err != nil {
			t.Fatal(err)
		}
		for k := range in {
			if !r.InRollout(k) {
				t.Fatalf("%s left the rollout at %v%%", k, pct)
			}
		}
	}
	if err := r.SetPercent(101); err == nil {
		t.Error("101% accepted")
	}
	r.SetPercent(0)
	if got := counter(t, metrics, MetricRollout, "old:s:{id}", "new:s:{id}"); got != 0 {
		t.Errorf("rollout ratio %v at 0%%", got)
	}
	for i := range 100 {
		if r.InRollout(fmt.Sprintf("old:s:%d", i)) {
			t.Fatal("a key in a 0% rollout")
		}
	}

	rdb.Set(ctx, "old:s:1", "old", 0)
	rdb.Set(ctx, "old:s:2", "old", 0)
	rdb.Set(ctx, "new:s:2", "new", 0)
	r.SetPercent(100)
	for _, tt := range []struct {
		key, want string
		src       Source
	}{{"old:s:1", "old", Fallback}, {"old:s:2", "new", New}, {"old:s:3", "", Miss}} {
		v, src, err := r.Get(ctx, tt.key)
		if err != nil || v != tt.want || src != tt.src {
			t.Errorf("Get(%s) = %q, %v, %v; want %q, %v", tt.key, v, src, err, tt.want, tt.src)
		}
	}
	r.SetPercent(0)
	if v, src, _ := r.Get(ctx, "old:s:2"); v != "old" || src != Old {
		t.Errorf("outside the rollout: %q from %v", v, src)
	}
	if _, _, err := r.Get(ctx, "other:1"); err == nil {
		t.Error("a key of another template was read")
	}
	for result, want := range map[string]float64{"new": 1, "fallback": 1, "miss": 1, "old": 1} {
		if got := counter(t, metrics, MetricReads, "old:s:{id}", "new:s:{id}", result); got != want {
			t.Errorf("reads{result=%s} = %v, want %v", result, got, want)
		}
	}
	// Fields: the old hash holds another team's fields too.
	fp := testPlan(t, "promo:sku:{skuId:int}", "order:sku:{skuId:int}:settle-preview", "couponAmount")
	fr, err := NewReader(rdb, fp, Options{Percent: 100, Registerer: metrics})
	if err != nil {
		t.Fatal(err)
	}
	rdb.HSet(ctx, "promo:sku:5", "activityId", "1")
	if _, src, _ := fr.HMGet(ctx, "promo:sku:5", "couponAmount"); src != Miss {
		t.Errorf("a hash without the field: %v", src)
	}
	rdb.HSet(ctx, "promo:sku:5", "couponAmount", "3")
	if v, src, _ := fr.HMGet(ctx, "promo:sku:5", "couponAmount"); src != Fallback || v[0] != "3" {
		t.Errorf("HMGet = %v from %v", v, src)
	}
	if m, src, _ := fr.HGetAll(ctx, "promo:sku:6"); src != Miss || len(m) != 0 {
		t.Errorf("HGetAll of nothing: %v %v", m, src)
	}
}

func TestCohortSpread(t *testing.T) {
	var buckets [10]int
	for i := range 100000 {
		buckets[Cohort("order:sku:"+strconv.Itoa(i)+":x")/1000]++
	}
	for i, n := range buckets {
		if n < 9000 || n > 11000 {
			t.Errorf("cohort decile %d holds %d of 100000 sequential keys", i, n)
		}
	}
}
