// Package progress is the one progress updater of keyguard's long runs
// (audits, RDB reads, migrations): it calls an update function on a
// ticker while the run works, and once more, marked final, when the run
// stops, so that every display ends on the run's last figures.
//
//	stop := progress.Start(time.Second, func(final bool) { show(snapshot(), final) })
//	defer stop()
//
// It imports no package of this module.
package progress

import (
	"sync"
	"time"
)

// DefaultEvery is the interval when none is given.
const DefaultEvery = 250 * time.Millisecond

// Start calls update(false) every interval (DefaultEvery when every <= 0)
// until stop is called; stop then calls update(true) once and returns
// after it. update is never called twice at once. A nil update makes
// Start do nothing; stop may be called more than once.
func Start(every time.Duration, update func(final bool)) (stop func()) {
	if update == nil {
		return func() {}
	}
	if every <= 0 {
		every = DefaultEvery
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				update(false)
			case <-done:
				return
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			wg.Wait()
			update(true)
		})
	}
}
