package guard_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/guard"
)

// The seed 002 incident: the order service owns order:1001; the promotion
// service builds the same key and is refused, loudly, instead of silently
// overwriting the order. (Needs a Redis server, so it has no Output.)
func Example() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()

	order := guard.New(rdb, "order-service:order", guard.Options{TTL: 30 * time.Minute, Jitter: 5 * time.Minute})
	res, err := order.SetMany(ctx, "order:1001", map[string]any{"amount": 99, "status": "paid"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("added %d, updated %d, claimed %v, TTL set %v\n", res.Added, res.Updated, res.Claimed, res.TTLSet)

	promo := guard.New(rdb, "promo-service:order", guard.Options{TTL: 10 * time.Minute})
	_, err = promo.Set(ctx, "order:1001", "amount", "0")
	var conflict *guard.ConflictError
	if errors.As(err, &conflict) {
		fmt.Println("refused, owner:", conflict.Owner) // do not retry: give promo its own key
	}
}

// A batch of guarded writes in one pipeline, with per-write outcomes.
func ExampleGuard_SetPipelined() {
	ctx := context.Background()
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:7000"}})
	defer rdb.Close()

	g := guard.New(rdb, "order-service:order", guard.Options{TTL: time.Hour})
	results, err := g.SetPipelined(ctx, []guard.SetOp{
		{Key: "order:1001", Field: "status", Value: "shipped"},
		{Key: "order:1002", Fields: map[string]any{"status": "paid", "amount": 15}},
	})
	for i, r := range results {
		switch {
		case errors.Is(r.Err, guard.ErrConflict):
			fmt.Println(i, "belongs to another namespace:", r.Err)
		case r.Err != nil:
			fmt.Println(i, "failed:", r.Err)
		default:
			fmt.Println(i, "added", r.Added, "updated", r.Updated)
		}
	}
	_ = err // the first per-op error, if any
}

// A service that shares a key it does not own gives it a TTL only when the
// owner has not (seed 002: EXPIRE … NX for non-owners).
func ExampleGuard_ExpireNX() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()

	g := guard.New(rdb, "promo-service:order", guard.Options{TTL: 10 * time.Minute})
	set, err := g.ExpireNX(ctx, "cfg:region:cn", 10*time.Minute)
	if err == nil && !set {
		fmt.Println("the key already has a TTL (or is gone): its owner manages it")
	}
}
