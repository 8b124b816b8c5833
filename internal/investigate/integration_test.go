package investigate

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/redistest"
	"github.com/keyguard/keyguard/registry"
)

// storyRegistry is the incident's registry: promo-team owns
// promo:sku:{skuId:int} and declares its fields; order-team has its own
// template for the settlement preview (fields undeclared: learned).
const storyRegistry = `
version: 1
domains:
  promo: {owner: promo-team}
  order: {owner: order-team}
keys:
  - key: "promo:sku:{skuId:int}"
    type: hash
    ttl: 10m
    fields: [activityId, discountType, discountValue]
  - key: "order:sku:{skuId:int}:settle-preview"
    type: hash
    ttl: 5m
  - key: "order:order:{orderId:int}:items"
    type: hash
    ttl: 1h
`

// promoScript is how promo-service writes: the whole value and its TTL in
// one script.
var promoScript = redis.NewScript(`
redis.call('del', KEYS[1])
redis.call('hset', KEYS[1], 'activityId', ARGV[1], 'discountType', '1', 'discountValue', '50')
return redis.call('pexpire', KEYS[1], 600000)
`)

// clientFactory makes a client named after a service, standalone or
// Cluster.
type clientFactory func(t *testing.T, name string) redis.UniversalClient

func standaloneClients(srv *redistest.Server) clientFactory {
	return func(t *testing.T, name string) redis.UniversalClient {
		c := redis.NewClient(&redis.Options{Addr: srv.Addr, ClientName: name})
		t.Cleanup(func() { c.Close() })
		return c
	}
}

func clusterClients(cl *redistest.Cluster) clientFactory {
	return func(t *testing.T, name string) redis.UniversalClient {
		c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs, ClientName: name})
		t.Cleanup(func() { c.Close() })
		return c
	}
}

// story runs the incident until ctx ends: promo-service writes
// promo:sku:1001 through a Lua script with a 10m TTL; order-service writes
// its settlement preview into the same key inside MULTI, without a TTL,
// and its own order:order:1001:items; user-service writes an unregistered
// user:coupon:1001; catalog-reader only reads. On the 3-master Cluster the
// three keys live on three masters.
func story(ctx context.Context, t *testing.T, newClient clientFactory) *sync.WaitGroup {
	promo, order, reader := newClient(t, "promo-service"), newClient(t, "order-service"), newClient(t, "catalog-reader")
	user := newClient(t, "user-service")
	var wg sync.WaitGroup
	loop := func(every time.Duration, step func(i int) error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				if err := step(i); err != nil && ctx.Err() == nil {
					t.Errorf("writer: %v", err)
					return
				}
				sleepCtx(ctx, every)
			}
		}()
	}
	loop(70*time.Millisecond, func(i int) error {
		return promoScript.Run(ctx, promo, []string{"promo:sku:1001"}, 12345+i).Err()
	})
	loop(110*time.Millisecond, func(i int) error {
		_, err := order.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.HSet(ctx, "promo:sku:1001", "couponAmount", 10, "promoTotal", 30)
			p.Persist(ctx, "promo:sku:1001")
			return nil
		})
		if err != nil {
			return err
		}
		return order.HSet(ctx, "order:order:1001:items", "status", i).Err()
	})
	loop(200*time.Millisecond, func(i int) error {
		return user.Set(ctx, "user:coupon:1001", 1, time.Hour).Err()
	})
	loop(50*time.Millisecond, func(i int) error {
		if err := reader.HGetAll(ctx, "promo:sku:1001").Err(); err != nil {
			return err
		}
		return reader.HGetAll(ctx, "order:order:1001:items").Err()
	})
	return &wg
}

func TestStoryStandalone(t *testing.T) {
	srv := redistest.Start(t, "slowlog-log-slower-than 0", "slowlog-max-len 1024")
	self := redis.NewClient(&redis.Options{Addr: srv.Addr, ClientName: DefaultSelf})
	t.Cleanup(func() { self.Close() })
	testStory(t, self, standaloneClients(srv), 1, func() []*redis.Client { return []*redis.Client{srv.Client(t)} })
}

func TestStoryCluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	self := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs, ClientName: DefaultSelf})
	t.Cleanup(func() { self.Close() })
	testStory(t, self, clusterClients(cl), 3, func() []*redis.Client {
		var out []*redis.Client
		for _, n := range cl.Nodes {
			out = append(out, n.Client(t))
		}
		return out
	})
}

// testStory checks the scenario: investigate names both writers,
// both styles, the TTL fluctuation and the owning template, and does not
// blame the client that only reads; no MONITOR connection stays open.
func testStory(t *testing.T, c redis.UniversalClient, newClient clientFactory, captures int, servers func() []*redis.Client) {
	reg, err := registry.Parse("keyguard.yaml", []byte(storyRegistry))
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	wg := story(ctx, t, newClient)
	defer func() { stop(); wg.Wait() }()
	// The search starts once the story has written its keys.
	for _, k := range []string{"promo:sku:1001", "order:order:1001:items", "user:coupon:1001"} {
		for deadline := time.Now().Add(30 * time.Second); c.Exists(ctx, k).Val() == 0; sleepCtx(ctx, 10*time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the story did not write %s in 30 s", k)
			}
		}
	}
	rep, err := Run(context.Background(), reg, c, Options{Target: Target{ID: "1001"},
		Watch: 3 * time.Second, WatchEvery: 100 * time.Millisecond, Monitor: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	rep.WriteText(&text)
	t.Log(text.String())

	if len(rep.Capture.Nodes) != captures {
		t.Errorf("%d captures, want one per master holding the keys (%d)", len(rep.Capture.Nodes), captures)
	}
	if u := activity(rep, "user:coupon:1001"); u == nil || len(u.Writers) != 1 || u.Writers[0].Allowed != "unknown" || u.Writers[0].Move == nil || u.Writers[0].Move.Template != "user:coupon:{id:int}" {
		t.Errorf("unregistered key's writer: %+v", u)
	}
	act := activity(rep, "promo:sku:1001")
	if act == nil || len(act.Writers) != 2 {
		t.Fatalf("promo:sku:1001: want two writers, got %+v", act)
	}
	promo, order := writerOf(act, "promo-service"), writerOf(act, "order-service")
	if promo == nil || order == nil {
		t.Fatalf("writers %+v", act.Writers)
	}
	if promo.ViaScript == 0 || !strings.HasPrefix(strings.Join(promo.Scripts, ","), "EVALSHA") || promo.Allowed != "yes" {
		t.Errorf("promo-service writes through its script and is the owner: %+v", promo)
	}
	if order.ViaMulti == 0 || order.Allowed != "no" || order.Move == nil || order.Move.Template != "order:sku:{skuId:int}:settle-preview" || order.Move.Example != "order:sku:1001:settle-preview" {
		t.Errorf("order-service writes in MULTI, is foreign, and should move: %+v %+v", order, order.Move)
	}
	if len(act.Readers) != 1 || act.Readers[0].Service != "catalog-reader" {
		t.Errorf("readers %+v", act.Readers)
	}
	base := activity(rep, "order:order:1001:items")
	if base == nil || len(base.Writers) != 1 || base.Writers[0].Service != "order-service" || base.Writers[0].Allowed != "yes" {
		t.Errorf("order:order:1001:items: %+v", base)
	}
	for _, k := range rep.Capture.Keys {
		if writerOf(&k, "catalog-reader") != nil {
			t.Errorf("the reader is blamed as a writer of %s", k.Key)
		}
	}
	checkStyles(t, rep, promo, order)
	checkFindings(t, rep)
	checkNoMonitor(t, servers())
	if captures == 1 { // the standalone server logs every command
		checkSlowLog(t, rep)
	}
}

// checkSlowLog: the slow log's entries on the key name their client and
// hide the values.
func checkSlowLog(t *testing.T, rep *Report) {
	t.Helper()
	names := map[string]bool{}
	for _, e := range rep.SlowLog {
		if slices.Contains(e.Keys, "promo:sku:1001") {
			names[e.Name] = true
			if strings.Contains(e.Command, "couponAmount") || strings.Contains(e.Command, "12345") {
				t.Errorf("slow log entry shows a value: %s", e.Command)
			}
		}
	}
	if !names["promo-service"] || !names["order-service"] || !names["catalog-reader"] {
		t.Errorf("slow log clients %v, entries %+v", names, rep.SlowLog)
	}
}

func checkStyles(t *testing.T, rep *Report, promo, order *Writer) {
	t.Helper()
	var promoStyle, orderStyle *Style
	for i := range rep.Styles {
		switch rep.Styles[i].Label() {
		case "{activityId, discountType, discountValue}":
			promoStyle = &rep.Styles[i]
		case "{couponAmount, promoTotal}":
			orderStyle = &rep.Styles[i]
		}
	}
	if promoStyle == nil || orderStyle == nil {
		t.Fatalf("both styles: %+v", rep.Styles)
	}
	if promoStyle.Declared != "promo:sku:{skuId:int}" || orderStyle.Declared != "" {
		t.Errorf("promo's style is declared, order's learned: %+v %+v", promoStyle, orderStyle)
	}
	if strings.Join(promo.Styles, ",") != promoStyle.ID || strings.Join(order.Styles, ",") != orderStyle.ID {
		t.Errorf("writers' styles: promo %v order %v, want %s and %s", promo.Styles, order.Styles, promoStyle.ID, orderStyle.ID)
	}
}

func checkFindings(t *testing.T, rep *Report) {
	t.Helper()
	want := map[string]bool{finding.SecondWriter: false, finding.TTLFluctuation: false, finding.MixedSchema: false}
	for _, f := range rep.Findings {
		if f.Key != "promo:sku:1001" || f.Severity != finding.Error {
			if strings.Contains(f.Message, "catalog-reader") {
				t.Errorf("a finding names the reader: %+v", f)
			}
			continue
		}
		if _, ok := want[f.Rule]; ok {
			want[f.Rule] = true
		}
		if f.Rule == finding.SecondWriter {
			for _, s := range []string{"promo-service", "order-service", "promo:sku:{skuId:int}", "promo-team"} {
				if !strings.Contains(f.Message, s) {
					t.Errorf("second-writer message lacks %q: %s", s, f.Message)
				}
			}
			if strings.Contains(f.Message, "catalog-reader") {
				t.Errorf("the reader is named a writer: %s", f.Message)
			}
			if !strings.Contains(f.Hint, "order:sku:{skuId:int}:settle-preview") {
				t.Errorf("hint: %s", f.Hint)
			}
		}
		if f.Rule == finding.TTLFluctuation && (!strings.Contains(f.Message, "no TTL") || !strings.Contains(f.Message, "TTL 10m")) {
			t.Errorf("ttl-fluctuation: %s", f.Message)
		}
	}
	for rule, ok := range want {
		if !ok {
			t.Errorf("no %s error on promo:sku:1001: %+v", rule, rep.Findings)
		}
	}
	if len(rep.Conclusion) == 0 || !strings.Contains(rep.Conclusion[0], "is written by 2 clients") {
		t.Errorf("conclusion: %q", rep.Conclusion)
	}
}

func activity(rep *Report, key string) *KeyActivity {
	if rep.Capture == nil {
		return nil
	}
	for i := range rep.Capture.Keys {
		if rep.Capture.Keys[i].Key == key {
			return &rep.Capture.Keys[i]
		}
	}
	return nil
}

func writerOf(a *KeyActivity, service string) *Writer {
	for i := range a.Writers {
		if a.Writers[i].Service == service {
			return &a.Writers[i]
		}
	}
	return nil
}

// checkNoMonitor fails when a server still has a client in MONITOR mode
// (flag O) once the server has seen the close (it frees the client on the
// next event-loop turn: poll a little).
func checkNoMonitor(t *testing.T, servers []*redis.Client) {
	t.Helper()
	for _, s := range servers {
		var list string
		for i := 0; i < 50; i++ {
			list = s.ClientList(context.Background()).Val()
			if monitors(list) == 0 {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if n := monitors(list); n != 0 {
			t.Errorf("%s: %d MONITOR connections left open:\n%s", s.Options().Addr, n, list)
		}
	}
}

func monitors(list string) int {
	n := 0
	for _, c := range ParseClientList(list) {
		if strings.Contains(c.Flags, "O") {
			n++
		}
	}
	return n
}
