package investigate

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/keyguard/keyguard/internal/redistest"
	"github.com/keyguard/keyguard/registry"
)

// TestMissingKey: --key of a key that does not exist finds no key and
// says the key does not exist, not "1 key found" and "nothing
// suspicious"; the same key created during the watch is investigated.
func TestMissingKey(t *testing.T) {
	reg, err := registry.Parse("keyguard.yaml", []byte(storyRegistry))
	if err != nil {
		t.Fatal(err)
	}
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	rep, err := Run(ctx, reg, c, Options{Target: Target{Key: "nothere:1"}, Watch: 300 * time.Millisecond, WatchEvery: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	rep.WriteText(&text)
	out := text.String()
	for _, want := range []string{"Keys (0 found, 1 key named but not in Redis)", `"nothere:1"  does not exist`, `"nothere:1"  did not exist while watched`, `"nothere:1" does not exist, so there was nothing to investigate`} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	for _, bad := range []string{"1 key found", "nothing suspicious", "none", "values hidden"} {
		if strings.Contains(out, bad) {
			t.Errorf("%q in\n%s", bad, out)
		}
	}

	go func() {
		time.Sleep(150 * time.Millisecond)
		c.Set(context.Background(), "nothere:1", "v", time.Hour)
	}()
	rep, err = Run(ctx, reg, c, Options{Target: Target{Key: "nothere:1"}, Watch: 600 * time.Millisecond, WatchEvery: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if s := strings.Join(rep.Conclusion, "\n"); strings.Contains(s, "does not exist") {
		t.Errorf("the key was created during the watch, yet:\n%s", s)
	}
}

// TestWatchStoppedEarly: an investigation stopped during its TTL watch
// reports the span it watched and the one asked for, never the one asked
// for alone.
func TestWatchStoppedEarly(t *testing.T) {
	reg, err := registry.Parse("keyguard.yaml", []byte(storyRegistry))
	if err != nil {
		t.Fatal(err)
	}
	srv := redistest.Start(t)
	c := srv.Client(t)
	if err := c.Set(context.Background(), "promo:sku:1001", "x", time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const asked = 30 * time.Second
	go func() {
		time.Sleep(1200 * time.Millisecond)
		cancel()
	}()
	rep, err := Run(ctx, reg, c, Options{Target: Target{ID: "1001"}, Watch: asked, WatchEvery: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Watch == nil || time.Duration(rep.Watch.Planned) != asked || rep.Watch.Duration <= 0 || time.Duration(rep.Watch.Duration) >= asked {
		t.Fatalf("watch %+v: want the span watched, under the %s asked", rep.Watch, asked)
	}
	var text strings.Builder
	rep.WriteText(&text)
	out := text.String()
	if strings.Contains(out, "TTL watch (30s") || !strings.Contains(out, "of the 30s asked: stopped early") {
		t.Errorf("the watch stopped after %s reads:\n%s", time.Duration(rep.Watch.Duration), out)
	}
}
