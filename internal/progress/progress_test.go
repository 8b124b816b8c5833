package progress

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Ticks arrive while the run works, the final update comes last and once,
// and no update overlaps another.
func TestStartTicksThenFinal(t *testing.T) {
	var mu sync.Mutex
	var calls []bool
	var busy atomic.Bool
	ticked := make(chan struct{}, 1)
	stop := Start(time.Millisecond, func(final bool) {
		if !busy.CompareAndSwap(false, true) {
			t.Error("two updates at once")
		}
		defer busy.Store(false)
		mu.Lock()
		calls = append(calls, final)
		mu.Unlock()
		if !final {
			select {
			case ticked <- struct{}{}:
			default:
			}
		}
	})
	<-ticked // at least one tick, however slow the machine
	stop()
	stop()
	mu.Lock()
	defer mu.Unlock()
	if len(calls) < 2 || !calls[len(calls)-1] {
		t.Fatalf("calls %v: want ticks then one final", calls)
	}
	for _, f := range calls[:len(calls)-1] {
		if f {
			t.Fatalf("calls %v: a final update before the last", calls)
		}
	}
	if Start(time.Millisecond, nil) == nil {
		t.Fatal("nil update: stop is nil")
	}
}
