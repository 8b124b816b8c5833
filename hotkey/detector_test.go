package hotkey

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/redistest"
)

// TestDetectorHook: every key of every command through the hook is
// counted; copies count as their key; the top keys are classified per
// template and region.
func TestDetectorHook(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	reg := testRegistry(t)
	pr := prometheus.NewRegistry()
	d, err := NewDetector(reg, DetectorOptions{Service: "catalog-team", Registerer: pr, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	rdb := srv.Client(t)
	d.Install(rdb)
	for range 500 {
		rdb.Get(ctx, "cache:product:detail:P1")
	}
	for range 200 {
		rdb.Set(ctx, "goods:hot:area:110101:20010", "x", time.Minute)
	}
	for i := range 100 { // reads of the copies by a client that is not the Cache
		rdb.Get(ctx, ReplicaKey("cache:product:wide:P9", i%8, 8))
	}
	rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for range 50 {
			p.MGet(ctx, "user_1024_token", "config:global:a")
		}
		return nil
	})
	want := map[string]struct {
		count    uint32
		template string
		region   string
	}{
		"cache:product:detail:P1":     {500, "cache:product:detail:{productNo}", ""},
		"goods:hot:area:110101:20010": {200, "goods:hot:area:{area:region}:{sku:int}", "110101"},
		"cache:product:wide:P9":       {100, "cache:product:wide:{productNo}", ""},
		"user_1024_token":             {50, TemplateUnregistered, ""},
		"config:global:a":             {50, "config:global:{name}", ""},
	}
	top := d.Top()
	if len(top) != len(want) {
		t.Fatalf("Top = %+v", top)
	}
	for _, h := range top {
		w, ok := want[h.Key]
		if !ok || h.Count != w.count || h.Template() != w.template || h.Region != w.region {
			t.Errorf("%+v (template %s), want %+v", h, h.Template(), w)
		}
	}
	if top[0].Key != "cache:product:detail:P1" || top[0].Rate <= top[1].Rate {
		t.Errorf("not hottest first: %+v", top)
	}

	// The report round trip, and the metrics by template only.
	since := time.Now().Add(-time.Minute)
	if err := d.Flush(ctx, rdb); err != nil {
		t.Fatal(err)
	}
	reps, err := ReadReports(ctx, rdb, since)
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) != 1 || reps[0].Service != "catalog-team" || reps[0].ID != d.ID() || len(reps[0].Keys) != 5 || reps[0].Keys[0].Key != "cache:product:detail:P1" {
		t.Fatalf("reports %+v", reps)
	}
	if ttl := rdb.PTTL(ctx, ReportKey(d.ID())).Val(); ttl <= 0 || ttl > DefaultReportTTL {
		t.Errorf("report TTL %v", ttl)
	}
	mfs, err := pr.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if strings.Contains(l.GetValue(), "P1") || strings.Contains(l.GetValue(), "110101") {
					t.Errorf("%s has a raw key in label %s=%q", mf.GetName(), l.GetName(), l.GetValue())
				}
			}
		}
	}
	if r := counter(t, pr, MetricRate, "template", "cache:product:detail:{productNo}"); r <= 0 {
		t.Errorf("%s for the detail template = %v", MetricRate, r)
	}
	if n := counter(t, pr, MetricTopKeys, "template", TemplateUnregistered); n != 1 {
		t.Errorf("%s{unregistered} = %v", MetricTopKeys, n)
	}
	// An old report is not read back.
	if reps, _ := ReadReports(ctx, rdb, time.Now().Add(time.Minute)); len(reps) != 0 {
		t.Errorf("a report from before since was read: %+v", reps)
	}
}

// TestCacheCountsKeysNotCopies: reads through the Cache on a client with
// the hook count the key once per read, not its copies or lock.
func TestCacheCountsKeysNotCopies(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	reg := testRegistry(t)
	d, err := NewDetector(reg, DetectorOptions{Service: "catalog-team", Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	rdb := srv.Client(t)
	d.Install(rdb)
	c, _ := newCache(t, reg, rdb, Options{Detector: d, PromoteAbove: 1e12})
	for range 300 {
		if _, err := c.Get(ctx, "cache:product:wide:P3", (&loaderCount{value: "v"}).load); err != nil {
			t.Fatal(err)
		}
	}
	top := d.Top()
	if len(top) != 1 || top[0].Key != "cache:product:wide:P3" || top[0].Count != 300 {
		t.Fatalf("Top = %+v, want the key counted 300 times", top)
	}
}

// TestRate: a key observed at a steady pace is estimated at about that
// rate, before and after the counts age.
func TestRate(t *testing.T) {
	d, err := NewDetector(testRegistry(t), DetectorOptions{Window: time.Hour, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	// 10,000 observations "over" the window: span is at least 1 s, and
	// here the window has just started, so the rate is count / 1 s.
	for range 10000 {
		d.Observe("k")
	}
	if r := d.Rate("k"); r < 9000 || r > 10001 {
		t.Errorf("Rate = %v, want about 10000/s over the 1 s minimum span", r)
	}
	d.Halve() // one window passed: 5000 left over a span of one hour
	if r := d.Rate("k"); r < 5000/3600.0*0.99 || r > 5000/3600.0*1.01 {
		t.Errorf("after Halve: %v, want about %v", r, 5000/3600.0)
	}
	if d.Rate("never") != 0 {
		t.Errorf("unseen key has a rate")
	}
}
