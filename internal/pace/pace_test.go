package pace

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestNilNeverWaits(t *testing.T) {
	var l *Limiter
	if New(0, 10) != nil || New(-1, 10) != nil {
		t.Fatal("a limiter of rate <= 0 is not nil")
	}
	if err := l.Wait(context.Background(), 1<<30); err != nil || l.Burst() != 0 || l.Rate() != 0 {
		t.Fatalf("nil limiter: %v", err)
	}
}

// The rate holds over a run: 400 units at 2,000 a second with bursts of 50
// take at least (400-50)/2000 s. Measured against the limiter's own clock
// arithmetic, not against a fixed deadline: only a lower bound is checked.
func TestRateHolds(t *testing.T) {
	l := New(2000, 50)
	start := time.Now()
	for range 40 {
		if err := l.Wait(context.Background(), 10); err != nil {
			t.Fatal(err)
		}
	}
	if el, min := time.Since(start), time.Duration(float64(400-50)/2000*float64(time.Second)); el < min*9/10 {
		t.Errorf("400 units in %v, the rate allows no less than %v", el, min)
	}
}

func TestOverBurstSplitsAndCancels(t *testing.T) {
	l := New(1000, 5)
	if err := l.Wait(context.Background(), 12); err != nil {
		t.Fatalf("n over the burst: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := New(1, 1).Wait(ctx, 5); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}
