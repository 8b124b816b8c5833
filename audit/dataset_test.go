package audit

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/registry"
)

// The datasets of the integration tests, on audit/testdata/keyguard.yaml:
// clean keys of every template (no finding), and one planted anomaly per
// key rule.

func testRegistry(t testing.TB) *registry.Registry {
	t.Helper()
	reg, err := registry.Load("testdata/keyguard.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// writeClean writes n clean keys spread over every template (n/10 per
// template, plus seq:order:no) and returns how many keys it wrote.
func writeClean(t testing.TB, c redis.Cmdable, n int) int {
	t.Helper()
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
			t.Fatalf("write clean keys: %v", err)
		}
		keys += 9
	}
	if err := c.Set(ctx, "seq:order:no", "1000", 0).Err(); err != nil {
		t.Fatal(err)
	}
	return keys + 1
}

// planted is one anomaly: the key and every rule it must produce.
type planted struct {
	key   string
	rules []string
}

// plantAnomalies writes one key per key rule of SPEC §3 (hot-key only
// when lfu: the server must run allkeys-lfu with lfu-log-factor 0) and
// returns them. The promo-info template also gets ten keys of a second
// field style, so that the key holding both styles is mixed-schema.
func plantAnomalies(t testing.TB, c redis.Cmdable, lfu bool) []planted {
	t.Helper()
	ctx := context.Background()
	hour := time.Hour
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 10; i++ { // the second writer's style, pure
		k := fmt.Sprintf("promo:order:%d:promo-info", 800000+i)
		must(c.HSet(ctx, k, "__ns__", "promo-team", "couponAmount", "5", "promoTotal", "20").Err())
		must(c.Expire(ctx, k, hour).Err())
	}
	ps := []planted{
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
	must(c.HSet(ctx, ps[0].key, "orderId", "900001", "userId", "7", "amount", "1", "status", "NEW").Err())
	must(c.HSet(ctx, ps[1].key, "orderId", "900002", "userId", "7", "amount", "1", "status", "NEW").Err())
	must(c.Expire(ctx, ps[1].key, 100*hour).Err())
	must(c.Set(ctx, ps[2].key, "a string where a hash belongs", hour).Err())
	members := make([]any, 600)
	for i := range members {
		members[i] = i
	}
	must(c.SAdd(ctx, ps[3].key, members...).Err())
	must(c.Expire(ctx, ps[3].key, hour).Err())
	must(c.HSet(ctx, ps[4].key, "activityId", "A1", "discountValue", "10").Err())
	must(c.Expire(ctx, ps[4].key, hour).Err())
	must(c.HSet(ctx, ps[5].key, "__ns__", "order-team", "activityId", "A1", "discountValue", "10").Err())
	must(c.Expire(ctx, ps[5].key, hour).Err())
	must(c.HSet(ctx, ps[6].key, "__ns__", "promo-team", "activityId", "A1", "discountValue", "10", "couponAmount", "5", "promoTotal", "20").Err())
	must(c.Expire(ctx, ps[6].key, hour).Err())
	for _, p := range ps[7:14] {
		must(c.Set(ctx, p.key, "x", hour).Err())
	}
	must(c.Set(ctx, ps[14].key, "123456", time.Minute).Err())
	if lfu {
		hot := planted{"cache:product:detail:hot1", []string{finding.HotKey}}
		must(c.Set(ctx, hot.key, `{"productNo":"hot1","title":"bottle","price":1}`, hour).Err())
		for range 100 {
			must(c.Get(ctx, hot.key).Err())
		}
		ps = append(ps, hot)
	}
	return ps
}
