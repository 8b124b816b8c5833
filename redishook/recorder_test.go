package redishook

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/redistest"
	"github.com/keyguard/keyguard/registry"
)

// TestSecondWriter is seed 000 §5.3: two services write one template, the
// records show both, and the one the registry does not allow is marked.
func TestSecondWriter(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	reg := testRegistry(t)
	rec := NewRecorder(srv.Client(t), RecorderOptions{})
	pr := prometheus.NewPedanticRegistry()

	promo := srv.Client(t)
	New(reg, Options{Service: "promo-team", Mode: Enforce, Registerer: pr, Recorder: rec}).Install(promo)
	order := srv.Client(t)
	New(reg, Options{Service: "order-team", Mode: Observe, Registerer: pr, Recorder: rec}).Install(order)

	if err := promo.HSet(ctx, "promo:sku:1001", "activityId", 12345).Err(); err != nil {
		t.Fatal(err)
	}
	if err := order.HSet(ctx, "promo:sku:1001", "couponAmount", 10).Err(); err != nil { // observe: sent, recorded
		t.Fatal(err)
	}
	if err := order.HSet(ctx, "order:order:1001:base", "amount", 99).Err(); err != nil {
		t.Fatal(err)
	}
	order.HGetAll(ctx, "promo:sku:1001") // reads are not writes
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	got, err := ReadWriters(ctx, srv.Client(t), reg, time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d templates, want 2: %+v", len(got), got)
	}
	base, sku := got[0], got[1]
	if base.Template != "order:order:{orderId:int}:base" || len(base.Writers) != 1 || !base.Writers[0].Allowed || base.Violation() {
		t.Errorf("order base: %+v", base)
	}
	if sku.Template != "promo:sku:{skuId:int}" || sku.Entry == nil || len(sku.Writers) != 2 || !sku.Violation() {
		t.Fatalf("promo sku: %+v", sku)
	}
	for _, w := range sku.Writers {
		if w.Allowed != (w.Service == "promo-team") {
			t.Errorf("writer %s allowed=%v", w.Service, w.Allowed)
		}
		if d := time.Since(w.LastWrite); d < 0 || d > time.Hour {
			t.Errorf("writer %s last write %v", w.Service, w.LastWrite)
		}
	}
	if ttl := srv.Client(t).PTTL(ctx, RecordKey("promo:sku:{skuId:int}")).Val(); ttl <= 0 || ttl > DefaultWindow {
		t.Errorf("record TTL %v", ttl)
	}
	// Nothing dirty: a flush sends nothing.
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestRecordsTrimmed: a writer older than the window disappears at the
// next flush of the template.
func TestRecordsTrimmed(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	reg := testRegistry(t)
	rec := NewRecorder(admin, RecorderOptions{Window: time.Hour})
	rdb := srv.Client(t)
	New(reg, Options{Service: "order-team", Recorder: rec}).Install(rdb)

	key := RecordKey("order:cache:{id}")
	old := time.Now().Add(-2 * time.Hour).UnixMilli()
	admin.ZAdd(ctx, key, redis.Z{Score: float64(old), Member: "gone-service"})
	rdb.Set(ctx, "order:cache:1", "v", time.Minute)
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	members := admin.ZRange(ctx, key, 0, -1).Val()
	if len(members) != 1 || members[0] != "order-team" {
		t.Fatalf("members %v, want only order-team", members)
	}
	// ReadWriters also applies its own since.
	admin.ZAdd(ctx, key, redis.Z{Score: float64(old), Member: "gone-service"})
	got, err := ReadWriters(ctx, admin, reg, time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || len(got[0].Writers) != 1 {
		t.Fatalf("got %+v", got)
	}
}

// TestRecorderSurvivesOutage: a failed flush keeps the marks; the next one
// after the server is back writes them. Start/Close run the loop.
func TestRecorderSurvivesOutage(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	reg := testRegistry(t)
	recClient := srv.Client(t)
	rec := NewRecorder(recClient, RecorderOptions{Every: time.Hour})
	rec.Start(ctx)
	rec.Start(ctx) // idempotent
	h := New(reg, Options{Service: "order-team", Recorder: rec})
	rdb := srv.Client(t)
	h.Install(rdb)
	rdb.Set(ctx, "order:cache:1", "v", time.Minute)

	srv.Kill()
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if err := rec.Flush(short); err == nil {
		t.Fatal("flush to a dead server succeeded")
	}
	srv.Restart(t)
	if err := rec.Close(); err != nil { // final flush
		t.Fatal(err)
	}
	got, err := ReadWriters(ctx, srv.Client(t), reg, time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Template != "order:cache:{id}" {
		t.Fatalf("got %+v", got)
	}
	if err := rec.Close(); err != nil { // second Close: nothing to do
		t.Fatal(err)
	}
}

// TestRecordsOnCluster: the records share one hash tag, so a flush and a
// read work on a ClusterClient.
func TestRecordsOnCluster(t *testing.T) {
	ctx := context.Background()
	cl := redistest.StartCluster(t, 3)
	cc := cl.Client(t)
	reg := testRegistry(t)
	rec := NewRecorder(cc, RecorderOptions{})
	for _, svc := range []string{"order-team", "promo-team"} {
		c := cl.Client(t)
		New(reg, Options{Service: svc, Recorder: rec}).Install(c)
		if err := c.Set(ctx, "promo:flag:7", svc, time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := ReadWriters(ctx, cc, reg, time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || len(got[0].Writers) != 2 || !got[0].Violation() {
		t.Fatalf("got %+v", got)
	}
}

func TestReadWritersEmptyAndUnknownTemplate(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	c := srv.Client(t)
	reg := testRegistry(t)
	got, err := ReadWriters(ctx, c, reg, time.Now().Add(-time.Hour))
	if err != nil || got != nil {
		t.Fatalf("empty: %v %v", got, err)
	}
	const gone = "old:template:{id}"
	c.HSet(ctx, RecordIndexKey, TemplateID(gone), gone)
	c.ZAdd(ctx, RecordKey(gone), redis.Z{Score: float64(time.Now().UnixMilli()), Member: "x"})
	got, err = ReadWriters(ctx, c, reg, time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Entry != nil || got[0].Violation() || got[0].Writers[0].Allowed {
		t.Fatalf("got %+v", got)
	}
	c.Set(ctx, RecordIndexKey+"x", "", 0)
	c.Del(ctx, RecordIndexKey)
	c.Set(ctx, RecordIndexKey, "not a hash", 0)
	if _, err := ReadWriters(ctx, c, reg, time.Now()); err == nil || errors.Is(err, redis.Nil) {
		t.Fatalf("wrong type: %v", err)
	}
}

// TestRecordRegistry: the fragment declaring keyguard's own keys loads and
// classifies the record keys.
func TestRecordRegistry(t *testing.T) {
	reg, err := registry.Parse("records.yaml", []byte("version: 1\n"+RecordRegistry))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{RecordIndexKey, RecordKey("promo:sku:{skuId:int}")} {
		if reg.Lookup(k) == nil {
			t.Errorf("%s matches no template of RecordRegistry", k)
		}
	}
	for _, f := range reg.Lint() {
		t.Logf("lint: %s %s: %s", f.Severity, f.Rule, f.Message)
	}
	if id := TemplateID("x"); len(id) != 16 {
		t.Fatalf("id %q", id)
	}
	if _, err := strconv.ParseUint(TemplateID("promo:sku:{skuId:int}"), 16, 64); err != nil {
		t.Fatal(err)
	}
}
