package hotkey

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/registry"
)

func testRegistry(t testing.TB) *registry.Registry {
	t.Helper()
	reg, err := registry.Load("testdata/keyguard.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// newCache opens a Cache on rdb, closed at cleanup, with its own metrics
// registry.
func newCache(t testing.TB, reg *registry.Registry, rdb redis.UniversalClient, opts Options) (*Cache, *prometheus.Registry) {
	t.Helper()
	if opts.Service == "" {
		opts.Service = "catalog-team"
	}
	pr := prometheus.NewRegistry()
	if opts.Registerer == nil {
		opts.Registerer = pr
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := New(ctx, reg, rdb, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, pr
}

// counter sums the series of a metric whose labels include labels.
func counter(t testing.TB, pr *prometheus.Registry, name string, labels ...string) float64 {
	t.Helper()
	mfs, err := pr.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			for i := 0; i+1 < len(labels); i += 2 {
				found := false
				for _, l := range m.GetLabel() {
					if l.GetName() == labels[i] && l.GetValue() == labels[i+1] {
						found = true
					}
				}
				if !found {
					continue next
				}
			}
			if m.GetCounter() != nil {
				sum += m.GetCounter().GetValue()
			} else {
				sum += m.GetGauge().GetValue()
			}
		}
	}
	return sum
}

var _ = testutil.ToFloat64 // keep the import for tests that read single collectors

// loaderCount is a Loader that counts its calls and returns value.
type loaderCount struct {
	mu    sync.Mutex
	calls int
	value string
	delay time.Duration
	gate  chan struct{} // when set, each call waits for it
}

func (l *loaderCount) load(ctx context.Context, key string) (string, error) {
	l.mu.Lock()
	l.calls++
	v := l.value
	l.mu.Unlock()
	if l.gate != nil {
		select {
		case <-l.gate:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	if l.delay > 0 {
		time.Sleep(l.delay)
	}
	return v, nil
}

func (l *loaderCount) n() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls
}

// eventually polls f until it is true or 10 s pass (a bound for a broken
// build, not a speed requirement).
func eventually(t testing.TB, what string, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !f() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10 s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// commandCalls returns cmdstat_<name> calls of one server.
func commandCalls(t testing.TB, c *redis.Client, name string) int {
	t.Helper()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		line = strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(line, "cmdstat_"+name+":calls="); ok {
			n := 0
			for _, ch := range rest {
				if ch < '0' || ch > '9' {
					break
				}
				n = n*10 + int(ch-'0')
			}
			return n
		}
	}
	return 0
}
