package main

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/hotkey"
	"github.com/keyguard/keyguard/internal/hotkeys"
	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/registry"
)

// demoHotKey is the product of the flash sale.
const demoHotKey = "cache:product:detail:P1001"

// hotkeys tells the hot-key story on the embedded server: a flash sale
// makes one product key hot; two instances of the catalog service read it
// through the SDK, the detector finds it, 'keyguard hotkeys' merges the
// reports, the local tier absorbs the reads, and a price change written
// by one instance reaches the other through the invalidation channel.
func (d *demo) hotkeys() error {
	d.title("A hot key: detected, reported and absorbed by the local tier (keyguard hotkeys)")
	reg := d.reg // declares what the hot-key SDK needs: the load lock, the invalidation channel, the reports
	e := reg.Lookup(demoHotKey)
	fmt.Fprintf(d.w, "  %s declares hot: {replicas: %d, local_ttl: %s}, ttl %s + jitter %s.\n",
		e.Key, e.Hot.Replicas, registry.FormatTTL(e.Hot.LocalTTL), registry.FormatTTL(e.TTL), registry.FormatTTL(e.TTLJitter))
	db := &demoCatalog{}
	db.price.Store("1999")
	metrics := prometheus.NewRegistry()
	var caches []*hotkey.Cache
	var dets []*hotkey.Detector
	for range 2 {
		det, err := hotkey.NewDetector(reg, hotkey.DetectorOptions{Service: "catalog-team", Registerer: metrics})
		if err != nil {
			return err
		}
		rdb := redis.NewClient(&redis.Options{Addr: d.srv.Addr()})
		defer rdb.Close()
		det.Install(rdb) // the hook sees the service's other commands too
		c, err := hotkey.New(d.ctx, reg, rdb, hotkey.Options{Service: "catalog-team", Detector: det, Registerer: metrics})
		if err != nil {
			return fmt.Errorf("demo hot-key cache: %w", err)
		}
		defer c.Close()
		caches, dets = append(caches, c), append(dets, det)
	}
	if err := d.flashSale(caches, db, metrics, e.Hot.Replicas); err != nil {
		return err
	}
	if err := d.hotReport(reg, dets); err != nil {
		return err
	}
	return d.priceChange(caches, db, e.Hot.Replicas)
}

// demoCatalog is the catalog database behind the cache.
type demoCatalog struct {
	loads atomic.Int64
	price atomic.Value // string
}

func (db *demoCatalog) load(ctx context.Context, key string) (string, error) {
	db.loads.Add(1)
	return fmt.Sprintf(`{"sku":%q,"price":%s}`, strings.TrimPrefix(key, "cache:product:detail:"), db.price.Load()), nil
}

// flashSale reads 20,000 times one product and 2,000 times 200 others,
// alternating between the instances, and shows where the reads went.
func (d *demo) flashSale(caches []*hotkey.Cache, db *demoCatalog, metrics *prometheus.Registry, replicas int) error {
	const reads = 22000
	before := d.srv.CommandCount()
	for i := range reads {
		key := demoHotKey
		if i%11 == 0 {
			key = fmt.Sprintf("cache:product:detail:P%d", 2000+i%200)
		}
		if _, err := caches[i%2].Get(d.ctx, key, db.load); err != nil {
			return fmt.Errorf("demo read: %w", err)
		}
	}
	redisCmds := d.srv.CommandCount() - before
	hits := counterSum(metrics, hotkey.MetricLocal, "hit")
	fmt.Fprintf(d.w, "\n  Flash sale: %s reads by 2 instances of catalog-team (%s of %s).\n", human.Count(reads), human.Count(20000), demoHotKey)
	fmt.Fprintf(d.w, "    answered by the local tier     %s (%.1f%%)\n", human.Count(int64(hits)), 100*hits/float64(reads))
	fmt.Fprintf(d.w, "    commands that reached Redis    %s (a miss: GET, lock, check, copies, unlock)\n", human.Count(int64(redisCmds)))
	fmt.Fprintf(d.w, "    database loads                 %d (one per product, whichever instance missed first)\n", db.loads.Load())
	fmt.Fprintf(d.w, "\n  The %d copies of %s and the Cluster slots they hash to (one in each of %d equal slot ranges):\n   ", replicas, demoHotKey, replicas)
	for _, name := range hotkey.ReplicaKeys(demoHotKey, replicas) {
		fmt.Fprintf(d.w, " %s (slot %d)", strings.TrimPrefix(name, "cache:product:detail:"), hotkey.Slot(name))
	}
	fmt.Fprintln(d.w)
	return nil
}

// hotReport flushes each instance's report and merges them as
// 'keyguard hotkeys' does.
func (d *demo) hotReport(reg *registry.Registry, dets []*hotkey.Detector) error {
	for _, det := range dets {
		if err := det.Flush(d.ctx, d.rdb); err != nil {
			return fmt.Errorf("demo hot-key report: %w", err)
		}
	}
	reps, err := hotkey.ReadReports(d.ctx, d.rdb, time.Now().Add(-time.Minute))
	if err != nil {
		return err
	}
	rep := hotkeys.BuildReport(reg, reps, nil, nil, hotkeys.ReportOptions{Target: "demo", Window: 10 * time.Minute, Top: 3})
	fmt.Fprintln(d.w, "\n  keyguard hotkeys (the two instances' reports merged):")
	fmt.Fprintf(d.w, "    %-30s %12s  %s\n", "key", "est. ops/s", "instances")
	for _, k := range rep.Keys {
		fmt.Fprintf(d.w, "    %-30s %12s  %d\n", k.Key, human.Count(int64(k.Rate)), k.Instances)
	}
	for _, f := range rep.Findings {
		fmt.Fprintf(d.w, "    %s %s %s: %s\n", f.Severity, f.Rule, f.Key, f.Message)
	}
	return nil
}

// priceChange writes a new price through instance 1 and shows instance 0
// serving it once the invalidation arrives.
func (d *demo) priceChange(caches []*hotkey.Cache, db *demoCatalog, replicas int) error {
	db.price.Store("1799")
	old, err := caches[0].Get(d.ctx, demoHotKey, db.load)
	if err != nil {
		return err
	}
	v, _ := db.load(d.ctx, demoHotKey)
	if err := caches[1].Set(d.ctx, demoHotKey, v); err != nil {
		return fmt.Errorf("demo write: %w", err)
	}
	now := old
	for deadline := time.Now().Add(5 * time.Second); now == old && time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if now, err = caches[0].Get(d.ctx, demoHotKey, db.load); err != nil {
			return err
		}
	}
	fmt.Fprintf(d.w, "\n  Price change written by instance 1 (all %d copies, then PUBLISH on %s):\n", replicas, hotkey.DefaultChannel)
	fmt.Fprintf(d.w, "    instance 0 before: %s\n    instance 0 after:  %s  (its local copy was dropped by the broadcast, not by local_ttl)\n", old, now)
	return nil
}

// counterSum adds the series of a counter family whose result label is
// result.
func counterSum(g prometheus.Gatherer, name, result string) float64 {
	mfs, _ := g.Gather()
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" && l.GetValue() == result {
					sum += m.GetCounter().GetValue()
				}
			}
		}
	}
	return sum
}
