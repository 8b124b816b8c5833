// Package pace is the one rate limiter of keyguard's walks: a token bucket
// (golang.org/x/time/rate) shared by every connection of a run, so that
// over any stretch of time the run does at most its rate plus one burst.
// What one unit is belongs to the work and its flag's help: a command for
// the audit and hot-key walks, a key for migrate and preheat.
//
//	lim := pace.New(5000, 500) // 5,000 units a second, bursts of 500
//	err := lim.Wait(ctx, 120)  // before sending 120 units
//
// It imports no package of this module.
package pace

import (
	"context"
	"math"

	"golang.org/x/time/rate"
)

// Limiter paces units of work. A nil Limiter, or one of rate <= 0, never
// waits.
type Limiter struct {
	l *rate.Limiter
}

// New paces perSecond units a second with bursts of up to burst units
// (at least 1). perSecond <= 0 is no limit.
func New(perSecond float64, burst int) *Limiter {
	if perSecond <= 0 || math.IsInf(perSecond, 1) || math.IsNaN(perSecond) {
		return nil
	}
	return &Limiter{l: rate.NewLimiter(rate.Limit(perSecond), max(burst, 1))}
}

// Wait blocks until n units may go, or ctx ends. n larger than the burst
// waits for several bursts in turn instead of failing.
func (l *Limiter) Wait(ctx context.Context, n int) error {
	if l == nil || n <= 0 {
		return ctx.Err()
	}
	b := l.l.Burst()
	for n > 0 {
		k := min(n, b)
		if err := l.l.WaitN(ctx, k); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		n -= k
	}
	return nil
}

// Burst is the most units that may go at once (0 for no limit).
func (l *Limiter) Burst() int {
	if l == nil {
		return 0
	}
	return l.l.Burst()
}

// Rate is the units per second (0 for no limit).
func (l *Limiter) Rate() float64 {
	if l == nil {
		return 0
	}
	return float64(l.l.Limit())
}
