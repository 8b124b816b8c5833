package live

import (
	"context"
	"time"

	"github.com/keyguard/keyguard/internal/pace"
)

// limiter paces the run's commands (--rate is commands per second): one
// bucket shared by every connection, with bursts of a quarter second's
// commands (at least 8). A pipeline of n commands waits before it is sent.
type limiter struct{ p *pace.Limiter }

func newLimiter(rate float64) *limiter {
	return &limiter{p: pace.New(rate, int(max(rate/4, 8)))}
}

// wait takes n commands' worth of the rate, or returns ctx's error.
func (l *limiter) wait(ctx context.Context, n int) error {
	if l == nil {
		return nil
	}
	return l.p.Wait(ctx, n)
}

// limits reports whether a rate is set.
func (l *limiter) limits() bool { return l != nil && l.p != nil }

// batchKeys caps the keys per pipeline so that one pipeline costs at most
// the burst: with --rate 200 a batch is a handful of keys, not a thousand
// keys waiting 20 seconds.
func (l *limiter) batchKeys(count, perKey, nodes int) int {
	if l == nil || l.p == nil {
		return count
	}
	k := l.p.Burst() / (perKey * max(nodes, 1))
	return max(1, min(count, k))
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
