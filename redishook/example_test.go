package redishook_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/redishook"
	"github.com/keyguard/keyguard/registry"
)

// The seed 000 incident through the SDK: the order service writes the
// promotion team's key. In enforce mode the write is refused before it is
// sent, with a message naming the owner; the metrics count it; the writer
// records let 'keyguard writers' report services writing templates they do
// not own (in observe or warn mode, where such writes go through).
func Example() {
	ctx := context.Background()
	reg, err := registry.Load("keyguard.yaml")
	if err != nil {
		panic(err)
	}
	promReg := prometheus.NewRegistry() // served on /metrics by the service

	// The recorder flushes through its own client, in the background.
	rec := redishook.NewRecorder(redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"}), redishook.RecorderOptions{})
	rec.Start(ctx)
	defer rec.Close()

	opt := &redis.Options{Addr: "127.0.0.1:6379"}
	if err := redishook.NameConnections(opt, "order-team"); err != nil { // CLIENT LIST shows name=order-team
		panic(err)
	}
	rdb := redis.NewClient(opt)
	h := redishook.New(reg, redishook.Options{
		Service:    "order-team",
		Mode:       redishook.Enforce,
		Logger:     slog.New(slog.NewTextHandler(os.Stderr, nil)),
		Registerer: promReg,
		Recorder:   rec,
	})
	h.Install(rdb)

	err = rdb.HSet(ctx, "promo:sku:1001", "couponAmount", 10).Err()
	var denied *redishook.DeniedError
	if errors.As(err, &denied) {
		fmt.Println("refused; owner:", denied.Owner) // keyguard_denied_total{template="promo:sku:{skuId:int}",owner="promo-team",service="order-team"} 1
	}

	// Later, from cron or a shell: keyguard writers --redis redis://127.0.0.1:6379
	tws, _ := redishook.ReadWriters(ctx, rdb, reg, time.Now().Add(-24*time.Hour))
	for _, tw := range tws {
		fmt.Println(tw.Template, len(tw.Writers), tw.Violation())
	}
}

// A template that declares its value's fields: in enforce mode a write of
// another field is refused before it is sent, naming the undeclared fields
// and the declared set (no server is needed to see it: nothing is sent).
func ExampleDeniedError_fields() {
	reg, err := registry.Parse("keyguard.yaml", []byte(`version: 1
domains: {order: {owner: order-team}}
keys:
  - key: "order:order:{orderId:int}:promo"
    type: hash
    ttl: 1h
    fields: [couponAmount, promoTotal]
`))
	if err != nil {
		panic(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer rdb.Close()
	redishook.New(reg, redishook.Options{Service: "order-team", Mode: redishook.Enforce}).Install(rdb)

	err = rdb.HSet(context.Background(), "order:order:1001:promo", "couponAmount", 10, "activityId", 7).Err()
	var denied *redishook.DeniedError
	if errors.As(err, &denied) {
		fmt.Println(denied.Reason, denied.Undeclared, denied.Declared)
	}
	// Output: schema [activityId] [couponAmount promoTotal]
}
