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

// The server killed a third into --watch and --monitor: the report names
// the spans not observed, says "steady" of no key and draws no "no second
// writer" from samples that were not taken.
func TestServerLostDuringWatch(t *testing.T) {
	reg, err := registry.Parse("keyguard.yaml", []byte(storyRegistry))
	if err != nil {
		t.Fatal(err)
	}
	srv := redistest.Start(t)
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { c.Close() })
	for _, k := range []string{"promo:sku:1001", "order:sku:1001:settle-preview"} {
		if err := c.HSet(ctx, k, "activityId", 1, "discountType", 1, "discountValue", 50).Err(); err != nil {
			t.Fatal(err)
		}
		c.Expire(ctx, k, 10*time.Minute)
	}
	const watchFor = 1500 * time.Millisecond
	go func() {
		time.Sleep(watchFor / 3)
		srv.Kill()
	}()
	rep, err := Run(ctx, reg, c, Options{Target: Target{ID: "1001"}, Watch: watchFor, WatchEvery: 50 * time.Millisecond, Monitor: watchFor})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	rep.WriteText(&text)
	out := text.String()
	t.Log(out)
	var watchGap, capGap bool
	for _, s := range rep.NotObserved {
		if s.Node != srv.Addr || s.To <= s.From || time.Duration(s.From) > watchFor {
			t.Errorf("span %+v", s)
		}
		watchGap = watchGap || s.Step == "TTL watch"
		capGap = capGap || s.Step == "capture"
	}
	if !watchGap || !capGap {
		t.Errorf("spans not observed %+v; want the watch's and the capture's", rep.NotObserved)
	}
	if strings.Contains(out, "steady") || strings.Contains(out, "no sign of a second writer") || strings.Contains(out, "nothing suspicious") || strings.Contains(out, "no client wrote these keys") {
		t.Errorf("a conclusion from samples not taken:\n%s", out)
	}
	if !strings.Contains(out, "no conclusion") || !strings.Contains(out, "not observed") {
		t.Errorf("the report does not say what was not observed:\n%s", out)
	}
	for _, k := range rep.Watch.Keys {
		if k.Unobserved <= 0 {
			t.Errorf("key %s: no time unobserved", k.Key)
		}
	}
}
