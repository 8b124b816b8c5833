package live

import (
	"context"
	"sync"
	"time"
)

// limiter is a token bucket shared by every connection of one run: Wait(n)
// takes n tokens and, when the bucket runs dry, sleeps until the debt is
// paid, so that over any stretch of time the run sends at most rate
// commands per second plus one burst. A pipeline of n commands waits
// before it is sent.
type limiter struct {
	rate  float64 // tokens per second; <= 0 unlimited
	burst float64

	mu     sync.Mutex
	tokens float64
	last   time.Time

	now   func() time.Time
	sleep func(context.Context, time.Duration) error
}

func newLimiter(rate float64) *limiter {
	l := &limiter{rate: rate, now: time.Now, sleep: sleepCtx}
	if rate > 0 {
		// A quarter second of commands; at least one pipeline of one key.
		l.burst = max(rate/4, 8)
		l.tokens = l.burst
		l.last = l.now()
	}
	return l
}

// wait takes n tokens, sleeping while the bucket is in debt. It returns
// ctx's error when ctx ends first.
func (l *limiter) wait(ctx context.Context, n int) error {
	if l == nil || l.rate <= 0 || n <= 0 {
		return nil
	}
	l.mu.Lock()
	now := l.now()
	l.tokens = min(l.burst, l.tokens+now.Sub(l.last).Seconds()*l.rate)
	l.last = now
	l.tokens -= float64(n)
	debt := -l.tokens
	l.mu.Unlock()
	if debt <= 0 {
		return nil
	}
	return l.sleep(ctx, time.Duration(debt/l.rate*float64(time.Second)))
}

// batchKeys caps the keys per pipeline so that one pipeline costs at most
// the burst: with --rate 200 a batch is a handful of keys, not a thousand
// keys waiting 20 seconds.
func (l *limiter) batchKeys(count, perKey, nodes int) int {
	if l == nil || l.rate <= 0 {
		return count
	}
	k := int(l.burst) / (perKey * max(nodes, 1))
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
