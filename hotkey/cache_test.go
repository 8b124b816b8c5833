package hotkey

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/redistest"
	"github.com/keyguard/keyguard/registry"
)

// TestLocalTierAbsorbsReads: after the first read of a hot key, reads are
// answered locally; Redis sees one GET.
func TestLocalTierAbsorbsReads(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	reg := testRegistry(t)
	c, pr := newCache(t, reg, srv.Client(t), Options{})
	l := &loaderCount{value: `{"name":"phone"}`}
	key := "cache:product:detail:P1001"
	if err := admin.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	for range 1000 {
		v, err := c.Get(ctx, key, l.load)
		if err != nil || v != l.value {
			t.Fatalf("Get = %q, %v", v, err)
		}
	}
	if l.n() != 1 {
		t.Errorf("loader called %d times, want 1", l.n())
	}
	// The miss, the check under the lock, and the lock release's GET.
	if n := commandCalls(t, admin, "get"); n != 3 {
		t.Errorf("Redis saw %d GETs for 1000 reads, want 3", n)
	}
	if hits := counter(t, pr, MetricLocal, "template", "cache:product:detail:{productNo}", "result", "hit"); hits != 999 {
		t.Errorf("local hits = %v, want 999", hits)
	}
	// Every copy holds the value with one TTL, within the template's jitter.
	var ttls []time.Duration
	for _, name := range ReplicaKeys(key, 3) {
		v, err := admin.Get(ctx, name).Result()
		if err != nil || v != l.value {
			t.Fatalf("copy %s = %q, %v", name, v, err)
		}
		ttl := admin.PTTL(ctx, name).Val()
		if ttl < 9*time.Minute || ttl > 12*time.Minute {
			t.Errorf("copy %s TTL %v outside ttl 10m + jitter 2m", name, ttl)
		}
		ttls = append(ttls, ttl)
	}
	for _, d := range ttls[1:] {
		if diff := (d - ttls[0]).Abs(); diff > time.Second {
			t.Errorf("copies' TTLs differ by %v: %v", diff, ttls)
		}
	}
	if n, _ := admin.Exists(ctx, key).Result(); n != 0 {
		t.Errorf("the key itself was stored besides its copies")
	}
}

// TestInvalidationReachesEveryInstance: four instances hold a key in
// their local tier (local_ttl 1h, so only the broadcast can change it); a
// write through any of them is seen by all.
func TestInvalidationReachesEveryInstance(t *testing.T) {
	t.Run("standalone", func(t *testing.T) {
		srv := redistest.Start(t)
		testInvalidation(t, func() redis.UniversalClient { return srv.Client(t) })
	})
	t.Run("cluster", func(t *testing.T) {
		cl := redistest.StartCluster(t, 3)
		testInvalidation(t, func() redis.UniversalClient { return cl.Client(t) })
	})
}

func testInvalidation(t *testing.T, client func() redis.UniversalClient) {
	ctx := context.Background()
	reg := testRegistry(t)
	const n = 4
	var cs []*Cache
	for i := range n {
		c, _ := newCache(t, reg, client(), Options{Service: fmt.Sprintf("svc-%d", i)})
		cs = append(cs, c)
	}
	key := "config:switch:activity_home"
	l := &loaderCount{value: "off"}
	for _, c := range cs {
		if v, err := c.Get(ctx, key, l.load); err != nil || v != "off" {
			t.Fatalf("Get = %q, %v", v, err)
		}
	}
	for round, writer := range []int{0, 2, 3, 1} {
		want := fmt.Sprintf("on-%d", round)
		if err := cs[writer].Set(ctx, key, want); err != nil {
			t.Fatal(err)
		}
		for i, c := range cs {
			eventually(t, fmt.Sprintf("round %d: instance %d sees %q", round, i, want), func() bool {
				v, err := c.Get(ctx, key, l.load)
				return err == nil && v == want
			})
		}
	}
	if l.n() != 1 {
		t.Errorf("loader called %d times, want 1 (the first miss)", l.n())
	}
	// Delete reaches everyone too: the next read loads again.
	if err := cs[1].Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	l.value = "reloaded"
	l.mu.Unlock()
	for i, c := range cs {
		eventually(t, fmt.Sprintf("instance %d reloads after Delete", i), func() bool {
			v, err := c.Get(ctx, key, l.load)
			return err == nil && v == "reloaded"
		})
	}
}

// TestStampedeOncePerProcess: 1,000 concurrent misses on one key call the
// loader once, with and without the local tier.
func TestStampedeOncePerProcess(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	reg := testRegistry(t)
	c, pr := newCache(t, reg, srv.Client(t), Options{})
	for _, key := range []string{"cache:product:detail:P2001", "config:global:homepage"} {
		l := &loaderCount{value: "v", gate: make(chan struct{})}
		var wg sync.WaitGroup
		errs := make(chan error, 1000)
		for range 1000 {
			wg.Go(func() {
				v, err := c.Get(ctx, key, l.load)
				if err == nil && v != "v" {
					err = fmt.Errorf("got %q", v)
				}
				if err != nil {
					errs <- err
				}
			})
		}
		eventually(t, "the loader is called", func() bool { return l.n() > 0 })
		close(l.gate)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if l.n() != 1 {
			t.Errorf("%s: loader called %d times for 1000 concurrent misses, want 1", key, l.n())
		}
	}
	if a := counter(t, pr, MetricLock, "result", "acquired"); a != 2 {
		t.Errorf("lock acquired %v times, want 2", a)
	}
}

// TestLockTakenOverWhenHolderFails: a load that fails releases the lock,
// and a waiting process takes it and loads.
func TestLockTakenOverWhenHolderFails(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	reg := testRegistry(t)
	a, _ := newCache(t, reg, srv.Client(t), Options{})
	b, _ := newCache(t, reg, srv.Client(t), Options{})
	key := "config:global:banner"
	started, fail := make(chan struct{}), make(chan struct{})
	errA := make(chan error, 1)
	go func() {
		_, err := a.Get(ctx, key, func(ctx context.Context, key string) (string, error) {
			close(started)
			<-fail
			return "", errors.New("database down")
		})
		errA <- err
	}()
	<-started
	got := make(chan string, 1)
	go func() {
		v, err := b.Get(ctx, key, func(ctx context.Context, key string) (string, error) { return "from-b", nil })
		if err != nil {
			v = err.Error()
		}
		got <- v
	}()
	close(fail)
	if err := <-errA; err == nil || !errors.Is(err, err) {
		t.Fatalf("holder: %v, want its loader's error", err)
	}
	if v := <-got; v != "from-b" {
		t.Fatalf("waiter got %q, want from-b", v)
	}
}

// TestUnregisteredAndWrongType: errors say what to do, nothing is sent.
func TestUnregisteredAndWrongType(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	c, _ := newCache(t, testRegistry(t), srv.Client(t), Options{})
	l := &loaderCount{value: "x"}
	_, err := c.Get(ctx, "user_1024_token", l.load)
	if !errors.Is(err, ErrUnregistered) {
		t.Errorf("unregistered: %v", err)
	}
	err = c.Set(ctx, "order:order:1:base", "x")
	if !errors.Is(err, ErrType) {
		t.Errorf("hash template: %v", err)
	}
	if l.n() != 0 {
		t.Errorf("loader called")
	}
}

// TestNoLockTemplate: a template without a registered lock: template
// cannot load a miss, and the error says what to register.
func TestNoLockTemplate(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	c, _ := newCache(t, testRegistry(t), srv.Client(t), Options{})
	_, err := c.Get(ctx, "{cart:42}:items", (&loaderCount{value: "x"}).load)
	var he *Error
	if !errors.Is(err, ErrNoLock) || !errors.As(err, &he) || he.Hint == "" {
		t.Fatalf("err = %v", err)
	}
	t.Log(err)
}

// TestPromoteAbove: with a rate threshold a key of a hot template enters
// the local tier only once this process reads it that often.
func TestPromoteAbove(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	c, pr := newCache(t, testRegistry(t), srv.Client(t), Options{PromoteAbove: 100})
	key := "cache:product:detail:P77"
	l := &loaderCount{value: "v"}
	hits := func() float64 { return counter(t, pr, MetricLocal, "result", "hit") }
	// The detector's span is at least a second: 99 reads are under 100/s.
	for range 99 {
		if _, err := c.Get(ctx, key, l.load); err != nil {
			t.Fatal(err)
		}
	}
	if h := hits(); h != 0 {
		t.Fatalf("%v local hits below the threshold", h)
	}
	for range 100 {
		if _, err := c.Get(ctx, key, l.load); err != nil {
			t.Fatal(err)
		}
	}
	if h := hits(); h < 90 {
		t.Fatalf("%v local hits above the threshold, want the key promoted", h)
	}
	// A cold key of the same template stays out.
	if _, err := c.Get(ctx, "cache:product:detail:P78", l.load); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.local.GetIfPresent("cache:product:detail:P78"); ok {
		t.Errorf("a key read once is in the local tier")
	}
}

// TestSubscriptionLoss: when the invalidation subscription is killed the
// local tier is emptied and bypassed until go-redis has resubscribed.
func TestSubscriptionLoss(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	c, pr := newCache(t, testRegistry(t), srv.Client(t), Options{})
	key := "config:switch:flag"
	l := &loaderCount{value: "v"}
	if _, err := c.Get(ctx, key, l.load); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.local.GetIfPresent(key); !ok {
		t.Fatal("not in the local tier")
	}
	if err := admin.Do(ctx, "CLIENT", "KILL", "TYPE", "pubsub").Err(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the loss is noticed", func() bool { return !c.up.Load() })
	if _, ok := c.local.GetIfPresent(key); ok {
		t.Error("the local tier kept an entry while invalidations could be missed")
	}
	eventually(t, "the subscription comes back", func() bool { return c.up.Load() })
	if s := counter(t, pr, MetricSubscribed); s != 1 {
		t.Errorf("%s = %v", MetricSubscribed, s)
	}
	// Invalidations flow again.
	other, _ := newCache(t, testRegistry(t), srv.Client(t), Options{})
	if _, err := c.Get(ctx, key, l.load); err != nil {
		t.Fatal(err)
	}
	if err := other.Set(ctx, key, "changed"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the change arrives", func() bool {
		v, err := c.Get(ctx, key, l.load)
		return err == nil && v == "changed"
	})
}

// TestLockRelease: the lock is released by its token only, and release
// works after SCRIPT FLUSH (EVALSHA falls back to EVAL).
func TestLockRelease(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	c, _ := newCache(t, testRegistry(t), srv.Client(t), Options{})
	lock := LockPrefix + "config:global:x"
	admin.Set(ctx, lock, "someone-else", time.Minute)
	c.release(ctx, lock, "mine")
	if v := admin.Get(ctx, lock).Val(); v != "someone-else" {
		t.Fatalf("another holder's lock was released: %q", v)
	}
	admin.Set(ctx, lock, "mine", time.Minute)
	if err := admin.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	c.release(ctx, lock, "mine")
	if n := admin.Exists(ctx, lock).Val(); n != 0 {
		t.Fatalf("own lock not released after SCRIPT FLUSH")
	}
	// A miss leaves no lock behind, and the lock had the template's TTL.
	var ttl time.Duration
	_, err := c.Get(ctx, "config:global:y", func(ctx context.Context, key string) (string, error) {
		ttl = admin.PTTL(ctx, LockPrefix+key).Val()
		return "v", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if ttl <= 9*time.Second || ttl > 10*time.Second {
		t.Errorf("lock TTL during the load %v, want the lock template's 10s", ttl)
	}
	if n := admin.Exists(ctx, LockPrefix+"config:global:y").Val(); n != 0 {
		t.Errorf("lock left behind")
	}
}

// TestNoLocalTierNoChannel: a registry without local_ttl needs no
// channel and opens no subscription; the rest works.
func TestNoLocalTierNoChannel(t *testing.T) {
	reg, err := registry.Parse("plain.yaml", []byte(`version: 1
domains:
  config: {owner: ops-team}
  lock: {owner: ops-team}
keys:
  - key: "config:global:{name}"
    type: string
    ttl: 1h
    hot: {replicas: 3}
  - key: "lock:config:global:{name}"
    type: string
    ttl: 10s
`))
	if err != nil {
		t.Fatal(err)
	}
	srv := redistest.Start(t)
	c, _ := newCache(t, reg, srv.Client(t), Options{})
	ctx := context.Background()
	if v, err := c.Get(ctx, "config:global:a", (&loaderCount{value: "v"}).load); err != nil || v != "v" {
		t.Fatalf("Get = %q, %v", v, err)
	}
	if n := srv.Client(t).Exists(ctx, ReplicaKeys("config:global:a", 3)...).Val(); n != 3 {
		t.Errorf("%d of 3 copies written", n)
	}
	if subs := srv.Client(t).PubSubNumSub(ctx, DefaultChannel).Val()[DefaultChannel]; subs != 0 {
		t.Errorf("%d subscribers", subs)
	}
}
