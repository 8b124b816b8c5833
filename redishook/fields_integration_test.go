package redishook

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/guard"
	"github.com/keyguard/keyguard/internal/redistest"
)

// orderPromo is what go-redis's HSet writes from a struct: one field per
// tagged member.
type orderPromo struct {
	CouponAmount int `redis:"couponAmount"`
	PromoTotal   int `redis:"promoTotal"`
}

type orderPromoMixed struct {
	CouponAmount int `redis:"couponAmount"`
	ActivityID   int `redis:"activityId"` // the promo team's field
}

// rule is a JSON value stored in a string key.
type rule struct {
	Threshold int `json:"threshold"`
	Discount  int `json:"discount"`
	Coupon    int `json:"couponAmount,omitempty"`
}

func (r rule) MarshalBinary() ([]byte, error) { return json.Marshal(r) }

// TestSchemaEnforceAgainstRedis: in enforce mode an undeclared field or a
// JSON value that breaks its template's format never reaches the server,
// alone, in a pipeline or in a transaction, whatever go-redis API builds
// the command (field/value pairs, a map, a struct, a BinaryMarshaler); the
// declared ones are written.
func TestSchemaEnforceAgainstRedis(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	rdb := srv.Client(t)
	h, pr := newHook(t, "order-team", Enforce)
	h.Install(rdb)
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}

	refused := []struct {
		name string
		do   func() error
	}{
		{"pairs", func() error { return rdb.HSet(ctx, "order:order:1:promo", "couponAmount", 10, "activityId", 7).Err() }},
		{"map", func() error {
			return rdb.HSet(ctx, "order:order:1:promo", map[string]any{"couponAmount": 10, "discountType": "PCT"}).Err()
		}},
		{"struct", func() error { return rdb.HSet(ctx, "order:order:1:promo", orderPromoMixed{10, 7}).Err() }},
		{"hsetnx", func() error { return rdb.HSetNX(ctx, "order:order:1:promo", "activityId", 7).Err() }},
		{"hincrby", func() error { return rdb.HIncrBy(ctx, "order:order:1:promo", "activityId", 1).Err() }},
		{"json key", func() error { return rdb.Set(ctx, "order:rule:1", rule{100, 5, 10}, time.Hour).Err() }},
		{"json array", func() error { return rdb.Set(ctx, "order:rule:1", `[1]`, time.Hour).Err() }},
		{"incr of json", func() error { return rdb.Incr(ctx, "order:rule:1").Err() }},
		{"pipeline", func() error {
			_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
				p.HSet(ctx, "order:order:2:promo", "couponAmount", 1)
				p.HSet(ctx, "order:order:3:promo", "x", 1)
				return nil
			})
			return err
		}},
		{"transaction", func() error {
			_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.Set(ctx, "order:rule:2", rule{Threshold: 1}, time.Hour)
				p.SetEx(ctx, "order:rule:3", "not json", time.Hour)
				return nil
			})
			return err
		}},
	}
	for _, r := range refused {
		err := r.do()
		var d *DeniedError
		if !errors.As(err, &d) || d.Reason != ReasonSchema {
			t.Errorf("%s: %v, want a schema refusal", r.name, err)
		}
	}
	stats := commandStats(t, admin)
	for _, c := range []string{"hset", "hsetnx", "hincrby", "set", "setex", "incr", "multi", "exec"} {
		if s, ok := stats[c]; ok {
			t.Errorf("%s reached the server: %s", c, s)
		}
	}
	if n := admin.Exists(ctx, "order:order:1:promo", "order:order:2:promo", "order:order:3:promo", "order:rule:1", "order:rule:2", "order:rule:3").Val(); n != 0 {
		t.Errorf("%d refused keys exist", n)
	}
	if got := schemaCount(h); got != float64(len(refused)) {
		t.Errorf("schema writes %v, want %d", got, len(refused))
	}

	// Declared fields and objects go through.
	if err := rdb.HSet(ctx, "order:order:1:promo", orderPromo{10, 90}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.HIncrBy(ctx, "order:order:1:promo", "promoTotal", 5).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Set(ctx, "order:rule:1", rule{100, 5, 0}, time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.HSet(ctx, "order:prefs:1", "lang", "zh", "anything", "goes").Err(); err != nil {
		t.Fatal(err)
	}
	got, _ := admin.HGetAll(ctx, "order:order:1:promo").Result()
	if len(got) != 2 || got["promoTotal"] != "95" {
		t.Errorf("hash %v", got)
	}
	if v := admin.Get(ctx, "order:rule:1").Val(); v != `{"threshold":100,"discount":5}` {
		t.Errorf("json %q", v)
	}
	lintMetrics(t, pr)
}

// TestSchemaWarnAgainstRedis: warn and observe modes send the write and
// count it in keyguard_schema_writes_total, per template, never per field.
func TestSchemaWarnAgainstRedis(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	for _, mode := range []Mode{Observe, Warn} {
		rdb := srv.Client(t)
		h, pr := newHook(t, "order-team", mode)
		h.Install(rdb)
		if err := rdb.HSet(ctx, "order:order:5:promo", "couponAmount", 1, "activityId", 7).Err(); err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		if err := rdb.Set(ctx, "order:rule:5", "plain", time.Hour).Err(); err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		if n := srv.Client(t).HLen(ctx, "order:order:5:promo").Val(); n != 2 {
			t.Fatalf("%s: the write was not sent (%d fields)", mode, n)
		}
		const want = `
# HELP keyguard_schema_writes_total Writes that break the template's declared fields: an undeclared field, or a JSON template's value that is not a JSON object.
# TYPE keyguard_schema_writes_total counter
keyguard_schema_writes_total{owner="order-team",service="order-team",template="order:order:{orderId:int}:promo"} 1
keyguard_schema_writes_total{owner="order-team",service="order-team",template="order:rule:{ruleId:int}"} 1
`
		if err := testutil.GatherAndCompare(nonZero{pr}, strings.NewReader(want), MetricSchemaWrites); err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
	}
}

// TestGuardThroughHook: the namespace guard on a client with the hook keeps
// to the template's declared fields like a plain HSET: its script call
// (EVALSHA, EVAL after SCRIPT FLUSH, pipelined) with an undeclared field is
// refused before it is sent, its owner field (written by the script, or
// claimed by HSETNX in best-effort mode) never is.
func TestGuardThroughHook(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	for _, bestEffort := range []bool{false, true} {
		rdb := srv.Client(t)
		h, _ := newHook(t, "promo-team", Enforce)
		h.Install(rdb)
		g := guard.New(rdb, "promo-team", guard.Options{TTL: 10 * time.Minute, BestEffort: bestEffort})
		key := "promo:activity:1001"
		if bestEffort {
			key = "promo:activity:1002"
		}

		if _, err := g.SetMany(ctx, key, map[string]any{"activityId": 7, "discountType": "PCT"}); err != nil {
			t.Fatalf("best-effort %v: declared fields: %v", bestEffort, err)
		}
		var d *DeniedError
		_, err := g.SetMany(ctx, key, map[string]any{"discountValue": 5, "couponAmount": 10})
		if !errors.As(err, &d) || d.Reason != ReasonSchema || !slices.Equal(d.Undeclared, []string{"couponAmount"}) {
			t.Fatalf("best-effort %v: undeclared field: %v", bestEffort, err)
		}
		if _, err := g.Set(ctx, key, "promoTotal", 1); !errors.Is(err, ErrDenied) {
			t.Fatalf("best-effort %v: Set: %v", bestEffort, err)
		}
		res, err := g.SetPipelined(ctx, []guard.SetOp{{Key: key, Field: "discountValue", Value: 5}, {Key: key, Field: "couponAmount", Value: 1}})
		if !errors.Is(err, ErrDenied) || !errors.Is(res[0].Err, ErrDenied) {
			t.Fatalf("best-effort %v: pipelined: %v %v", bestEffort, err, res)
		}
		if !bestEffort {
			if err := admin.ScriptFlush(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			if _, err := g.Set(ctx, key, "discountValue", 5); err != nil { // EVALSHA: NOSCRIPT, then EVAL
				t.Fatalf("after SCRIPT FLUSH: %v", err)
			}
		}
		got, _ := admin.HGetAll(ctx, key).Result()
		want := map[string]string{"__ns__": "promo-team", "activityId": "7", "discountType": "PCT"}
		if !bestEffort {
			want["discountValue"] = "5"
		}
		if len(got) != len(want) || !mapsEqual(got, want) {
			t.Errorf("best-effort %v: hash %v, want %v", bestEffort, got, want)
		}
	}
}

func mapsEqual(a, b map[string]string) bool {
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return len(a) == len(b)
}
