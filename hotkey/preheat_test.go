package hotkey

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/keyguard/keyguard/internal/redistest"
)

func TestExpand(t *testing.T) {
	reg := testRegistry(t)
	goods := reg.EntryByKey("goods:hot:area:{area:region}:{sku:int}")
	bs, err := Expand(reg, goods, map[string][]string{"area": {"310100", "110101"}, "sku": {"1", "2", "3"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 2 || bs[0].Region != "310100" || len(bs[0].Keys) != 3 || bs[0].Keys[2] != "goods:hot:area:310100:3" || bs[1].Keys[0] != "goods:hot:area:110101:1" {
		t.Fatalf("batches %+v", bs)
	}
	detail := reg.EntryByKey("cache:product:detail:{productNo}")
	bs, err = Expand(reg, detail, map[string][]string{"productNo": {"P1", "P2"}})
	if err != nil || len(bs) != 1 || bs[0].Region != "" || strings.Join(bs[0].Keys, ",") != "cache:product:detail:P1,cache:product:detail:P2" {
		t.Fatalf("%+v, %v", bs, err)
	}
	cart := reg.EntryByKey("{{cart:{uid}}}:items")
	bs, err = Expand(reg, cart, map[string][]string{"uid": {"42"}})
	if err != nil || bs[0].Keys[0] != "{cart:42}:items" {
		t.Fatalf("hash tag: %+v, %v", bs, err)
	}
	for _, bad := range []map[string][]string{
		{"area": {"110101"}},                            // sku missing
		{"area": {"abc"}, "sku": {"1"}},                 // not a region
		{"area": {"110101"}, "sku": {"x"}},              // not an int
		{"area": {"110101"}, "sku": {"1"}, "zz": {"1"}}, // no such placeholder
	} {
		if _, err := Expand(reg, goods, bad); err == nil {
			t.Errorf("%v accepted", bad)
		} else {
			t.Log(err)
		}
	}
}

func TestPreheat(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	raw := srv.Client(t)
	reg := testRegistry(t)
	c, pr := newCache(t, reg, srv.Client(t), Options{})
	raw.Set(ctx, "config:global:present", "old", time.Hour)
	batches := []Batch{
		{Region: "110101", Keys: []string{"goods:hot:area:110101:1", "goods:hot:area:110101:2"}},
		{Region: "310100", Keys: []string{"goods:hot:area:310100:1", "goods:hot:area:310100:404"}},
		{Keys: []string{"config:global:present", "config:global:new", "config:global:broken", "user_1024_token"}},
	}
	load := func(ctx context.Context, key string) (string, error) {
		switch {
		case strings.HasSuffix(key, ":404"):
			return "", ErrNotFound
		case strings.HasSuffix(key, ":broken"):
			return "", errors.New("database says no")
		}
		return "v:" + key, nil
	}
	var calls []PreheatProgress
	res, err := c.Preheat(ctx, batches, load, PreheatOptions{Rate: 50, Concurrency: 2, Missing: true, Local: true,
		Progress: func(p PreheatProgress) { calls = append(calls, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Total != 8 || res.Done != 8 || res.OK != 4 || res.Skipped != 1 || res.Absent != 1 || res.Failed != 2 || len(res.Failures) != 2 {
		t.Fatalf("result %+v", res)
	}
	if len(res.Batches) != 3 || res.Batches[1].Region != "310100" || res.Batches[1].OK != 1 || res.Batches[1].Absent != 1 || res.Batches[2].Failed != 2 {
		t.Errorf("batches %+v", res.Batches)
	}
	if len(calls) != 8 || calls[7].Done != 8 || calls[0].Region != "110101" || calls[7].Batch != 2 {
		t.Fatalf("progress %+v", calls)
	}
	// 8 keys at 50/s: the limiter spaces them at least 7 × 20 ms apart.
	if res.Elapsed < 140*time.Millisecond {
		t.Errorf("8 keys at 50/s took %v", res.Elapsed)
	}
	for _, f := range res.Failures {
		if f.Key != "config:global:broken" && f.Key != "user_1024_token" {
			t.Errorf("failure %v", f)
		}
	}
	if v := raw.Get(ctx, "config:global:present").Val(); v != "old" {
		t.Errorf("Missing overwrote a present key: %q", v)
	}
	for _, name := range ReplicaKeys("goods:hot:area:110101:2", 6) {
		if v := raw.Get(ctx, name).Val(); v != "v:goods:hot:area:110101:2" {
			t.Errorf("copy %s = %q", name, v)
		}
	}
	// Local: the hot keys are in this process's local tier already.
	l := &loaderCount{value: "loader"}
	if v, err := c.Get(ctx, "goods:hot:area:310100:1", l.load); err != nil || v != "v:goods:hot:area:310100:1" || l.n() != 0 {
		t.Errorf("after a local preheat: %q, %v, loader %d", v, err, l.n())
	}
	if hits := counter(t, pr, MetricLocal, "result", "hit"); hits != 1 {
		t.Errorf("local hits %v, want 1", hits)
	}
	if n := counter(t, pr, MetricPreheat, "result", "ok"); n != 4 {
		t.Errorf("%s ok = %v", MetricPreheat, n)
	}
}

// TestPreheatStops: a cancelled context ends the preheat with its error.
func TestPreheatStops(t *testing.T) {
	srv := redistest.Start(t)
	c, _ := newCache(t, testRegistry(t), srv.Client(t), Options{})
	ctx, cancel := context.WithCancel(context.Background())
	keys := make([]string, 100)
	for i := range keys {
		keys[i] = "config:global:k" + string(rune('a'+i%26)) + strings.Repeat("x", i/26)
	}
	n := 0
	res, err := c.Preheat(ctx, []Batch{{Keys: keys}}, func(ctx context.Context, key string) (string, error) { return "v", nil },
		PreheatOptions{Concurrency: 1, Progress: func(p PreheatProgress) {
			if n++; n == 10 {
				cancel()
			}
		}})
	if !errors.Is(err, context.Canceled) || res.Done >= 100 {
		t.Fatalf("err %v after %d keys", err, res.Done)
	}
}
