// Package plant writes the datasets of the audit and rdb integration
// tests to a real server: clean keys of every template of
// audit/testdata/keyguard.yaml, and one planted anomaly per key rule, so
// that the live audit and the snapshot audit are held to the same keys.
//
//	n := plant.Clean(t, client, 500)            // no finding
//	anomalies := plant.Anomalies(t, client, true) // one per rule; hot-key needs an LFU server
//
// A test helper: it imports only package finding, and only tests import it.
package plant

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/finding"
)

// Clean writes about n keys spread over every template (n/10 rounds of
// nine templates, plus seq:order:no), none breaking a rule, and returns
// how many it wrote.
func Clean(tb testing.TB, c redis.Cmdable, n int) int {
	tb.Helper()
	ctx := context.Background()
	keys := 0
	for i := 0; i < n/10; i++ {
		id := fmt.Sprint(i)
		p := c.Pipeline()
		k := "order:order:" + id + ":base"
		p.HSet(ctx, k, "orderId", id, "userId", "7", "amount", "12.50", "status", "PAID")
		p.Expire(ctx, k, 20*time.Hour)
		k = "promo:order:" + id + ":promo-info"
		p.HSet(ctx, k, "__ns__", "promo-team", "activityId", "A"+id, "discountValue", "10")
		p.Expire(ctx, k, 10*time.Hour)
		p.Set(ctx, "cache:product:detail:p"+id, `{"productNo":"p`+id+`","title":"bottle","price":2590}`, 5*time.Hour)
		k = "auth:session:u" + id
		p.HSet(ctx, k, "token", "t"+id, "loginAt", "1700000000")
		p.Expire(ctx, k, 10*time.Hour)
		p.Set(ctx, "auth:code:acct"+id, "123456", 4*time.Minute)
		k = "feed:user:" + id + ":timeline"
		p.RPush(ctx, k, "post:1", "post:2")
		p.Expire(ctx, k, 40*time.Hour)
		k = "social:user:" + id + ":followers"
		p.SAdd(ctx, k, "1", "2", "3")
		p.Expire(ctx, k, 40*time.Hour)
		k = "rank:board:" + id
		p.ZAdd(ctx, k, redis.Z{Score: 1, Member: "a"}, redis.Z{Score: 2, Member: "b"})
		p.Expire(ctx, k, 70*time.Hour)
		k = "event:order:" + id
		p.XAdd(ctx, &redis.XAddArgs{Stream: k, Values: []any{"orderId", id, "event", "created"}})
		p.Expire(ctx, k, 40*time.Hour)
		if _, err := p.Exec(ctx); err != nil {
			tb.Fatalf("plant: write clean keys: %v", err)
		}
		keys += 9
	}
	if err := c.Set(ctx, "seq:order:no", "1000", 0).Err(); err != nil {
		tb.Fatalf("plant: %v", err)
	}
	return keys + 1
}

// Anomaly is a key written to break rules, with every rule it breaks.
type Anomaly struct {
	Key   string
	Rules []string
}

// Anomalies writes one key per key rule (docs/rules.md) and returns them. The
// promo-info template also gets ten keys of a second writer's field style
// (not anomalies), so that the key holding both styles is mixed-schema.
// With lfu (the server must run allkeys-lfu with lfu-log-factor 0) one
// key is read 100 times to be hot.
func Anomalies(tb testing.TB, c redis.Cmdable, lfu bool) []Anomaly {
	tb.Helper()
	ctx := context.Background()
	hour := time.Hour
	must := func(err error) {
		tb.Helper()
		if err != nil {
			tb.Fatalf("plant: %v", err)
		}
	}
	for i := 0; i < 10; i++ { // the second writer's style, pure
		k := fmt.Sprintf("promo:order:%d:promo-info", 800000+i)
		must(c.HSet(ctx, k, "__ns__", "promo-team", "couponAmount", "5", "promoTotal", "20").Err())
		must(c.Expire(ctx, k, hour).Err())
	}
	ps := []Anomaly{
		{"order:order:900001:base", []string{finding.NoTTL}},
		{"order:order:900002:base", []string{finding.TTLMismatch}},
		{"order:order:900003:base", []string{finding.TypeMismatch}},
		{"social:user:900004:followers", []string{finding.BigKey}},
		{"promo:order:900005:promo-info", []string{finding.GuardOwnerless}},
		{"promo:order:900006:promo-info", []string{finding.GuardForeign}},
		{"promo:order:900007:promo-info", []string{finding.MixedSchema}},
		{"order:misc:900008", []string{finding.Unregistered}},
		{"order:Misc:900009", []string{finding.Unregistered, finding.Case}},
		{"order:misc name:900010", []string{finding.Unregistered, finding.Charset}},
		{"order:misc:" + strings.Repeat("x", 80), []string{finding.Unregistered, finding.Length}},
		{"user_1024_token", []string{finding.Unregistered, finding.Separator}},
		{"12345:info", []string{finding.Unregistered, finding.LeadingID, finding.Domain}},
		{"tmp_data_20240321150322", []string{finding.Unregistered, finding.Separator, finding.Timestamp}},
		{"auth:code:13812345678", []string{finding.PII}},
	}
	must(c.HSet(ctx, ps[0].Key, "orderId", "900001", "userId", "7", "amount", "1", "status", "NEW").Err())
	must(c.HSet(ctx, ps[1].Key, "orderId", "900002", "userId", "7", "amount", "1", "status", "NEW").Err())
	must(c.Expire(ctx, ps[1].Key, 100*hour).Err())
	must(c.Set(ctx, ps[2].Key, "a string where a hash belongs", hour).Err())
	members := make([]any, 600)
	for i := range members {
		members[i] = i
	}
	must(c.SAdd(ctx, ps[3].Key, members...).Err())
	must(c.Expire(ctx, ps[3].Key, hour).Err())
	must(c.HSet(ctx, ps[4].Key, "activityId", "A1", "discountValue", "10").Err())
	must(c.Expire(ctx, ps[4].Key, hour).Err())
	must(c.HSet(ctx, ps[5].Key, "__ns__", "order-team", "activityId", "A1", "discountValue", "10").Err())
	must(c.Expire(ctx, ps[5].Key, hour).Err())
	must(c.HSet(ctx, ps[6].Key, "__ns__", "promo-team", "activityId", "A1", "discountValue", "10", "couponAmount", "5", "promoTotal", "20").Err())
	must(c.Expire(ctx, ps[6].Key, hour).Err())
	for _, p := range ps[7:14] {
		must(c.Set(ctx, p.Key, "x", hour).Err())
	}
	must(c.Set(ctx, ps[14].Key, "123456", time.Minute).Err())
	if lfu {
		hot := Anomaly{"cache:product:detail:hot1", []string{finding.HotKey}}
		must(c.Set(ctx, hot.Key, `{"productNo":"hot1","title":"bottle","price":1}`, hour).Err())
		for range 100 {
			must(c.Get(ctx, hot.Key).Err())
		}
		ps = append(ps, hot)
	}
	return ps
}

// Databases writes Clean(per[db]) keys into each database db of the
// server at url (redis://host:port), and the anomalies (plus the ten
// keys of a second writer) into database 1, and returns the keys written
// per database and in all.
func Databases(tb testing.TB, url string, per []int) (want map[int]int64, total int64) {
	tb.Helper()
	want = map[int]int64{}
	for db, n := range per {
		opt, err := redis.ParseURL(fmt.Sprintf("%s/%d", url, db))
		if err != nil {
			tb.Fatalf("plant: %v", err)
		}
		c := redis.NewClient(opt)
		k := Clean(tb, c, n)
		if db == 1 {
			k += len(Anomalies(tb, c, false)) + 10
		}
		c.Close()
		want[db] = int64(k)
		total += int64(k)
	}
	return want, total
}
