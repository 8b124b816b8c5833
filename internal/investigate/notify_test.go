package investigate

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/redistest"
	"github.com/keyguard/keyguard/registry"
)

func TestMissingClasses(t *testing.T) {
	for setting, want := range map[string]string{"": "Kg$lshzxt", "KA": "", "AKE": "", "Ex": "Kg$lshzt", "K$h": "glszxt"} {
		if got := missingClasses(setting); got != want {
			t.Errorf("missingClasses(%q) = %q, want %q", setting, got, want)
		}
	}
}

func TestNotifyStandalone(t *testing.T) {
	srv := redistest.Start(t)
	self := redis.NewClient(&redis.Options{Addr: srv.Addr, ClientName: DefaultSelf})
	t.Cleanup(func() { self.Close() })
	testNotify(t, self, standaloneClients(srv), []*redis.Client{srv.Client(t)})
}

func TestNotifyCluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	self := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs, ClientName: DefaultSelf})
	t.Cleanup(func() { self.Close() })
	var nodes []*redis.Client
	for _, n := range cl.Nodes {
		nodes = append(nodes, n.Client(t))
	}
	testNotify(t, self, clusterClients(cl), nodes)
}

// testNotify: --notify refuses to change the server's setting unless
// allowed, hears a string writer and a hash writer taking turns on one key
// when allowed, and puts the setting back.
func testNotify(t *testing.T, c redis.UniversalClient, newClient clientFactory, nodes []*redis.Client) {
	reg, err := registry.Parse("keyguard.yaml", []byte(storyRegistry))
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Target: Target{Key: "promo:sku:1001"}, Notify: true, NotifyFor: 1500 * time.Millisecond}
	if _, err := Run(context.Background(), reg, c, opts); err == nil || !strings.Contains(err.Error(), "--enable-notify") {
		t.Fatalf("notifications off: error %v", err)
	}
	ctx, stop := context.WithCancel(context.Background())
	a, b := newClient(t, "promo-service"), newClient(t, "order-service")
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ctx.Err() == nil; i++ {
			if i%2 == 0 {
				a.Set(ctx, "promo:sku:1001", `{"activityId":1}`, 10*time.Minute)
			} else {
				b.TxPipelined(ctx, func(p redis.Pipeliner) error {
					p.Del(ctx, "promo:sku:1001")
					p.HSet(ctx, "promo:sku:1001", "couponAmount", 10)
					return nil
				})
			}
			sleepCtx(ctx, 50*time.Millisecond)
		}
	}()
	defer func() { stop(); <-done }()
	opts.EnableNotify = true
	rep, err := Run(context.Background(), reg, c, opts)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Notify == nil || len(rep.Notify.Keys) != 1 {
		t.Fatalf("notify: %+v", rep.Notify)
	}
	ke := rep.Notify.Keys[0]
	if ke.Counts["set"] == 0 || ke.Counts["hset"] == 0 || ke.Counts["del"] == 0 {
		t.Errorf("events %v", ke.Counts)
	}
	said := strings.Join(rep.Conclusion, "\n")
	if !strings.Contains(said, "written as a hash and a string in turn") {
		t.Errorf("conclusion: %s", said)
	}
	for _, nn := range rep.Notify.Nodes {
		if nn.Enabled == "" || !nn.Restored {
			t.Errorf("node setting: %+v", nn)
		}
	}
	for _, n := range nodes {
		if got := n.ConfigGet(context.Background(), "notify-keyspace-events").Val()["notify-keyspace-events"]; got != "" {
			t.Errorf("%s: notify-keyspace-events %q after the run, want it restored to \"\"", n.Options().Addr, got)
		}
	}
}
