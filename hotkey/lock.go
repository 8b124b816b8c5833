package hotkey

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// loadLocked loads a key missing from Redis under its cluster-wide lock
// (LockPrefix + key, SET NX PX with the lock template's TTL): the holder
// checks Redis again, loads and stores; the others poll Redis until the
// value appears, taking the lock over if the holder gave it up, for at
// most LockWait, after which they load it themselves (still once per
// process: the caller deduplicates).
func (c *Cache) loadLocked(ctx context.Context, s *entState, key string, load Loader) (string, int64, error) {
	if s.lockTTL == 0 {
		return "", 0, &Error{Op: "get", Key: key, Template: s.tmpl, Err: ErrNoLock, Hint: s.lockErr}
	}
	lockKey := LockPrefix + key
	token := newID() + newID()
	deadline := time.Now().Add(c.opts.LockWait)
	pause := 5 * time.Millisecond
	for {
		ok, err := c.rdb.SetNX(ctx, lockKey, token, s.lockTTL).Result()
		if err != nil {
			return "", 0, fmt.Errorf("hotkey: lock %q: %w", clip(lockKey), err)
		}
		if ok {
			s.acquired.Inc()
			defer c.release(ctx, lockKey, token)
			// The holder before us may have stored it since our miss.
			if v, soft, found, err := c.read(ctx, s, key); err != nil || found {
				return v, soft, err
			}
			return c.loadStore(ctx, s, key, load)
		}
		if time.Now().After(deadline) {
			s.timeout.Inc()
			c.log.Warn("keyguard: load lock wait bound passed; loading without the lock", "template", s.tmpl, "wait", c.opts.LockWait)
			return c.loadStore(ctx, s, key, load)
		}
		// Sleep a jittered pause, doubling up to 100 ms.
		d := pause/2 + rand.N(pause)
		pause = min(2*pause, 100*time.Millisecond)
		select {
		case <-ctx.Done():
			return "", 0, fmt.Errorf("hotkey: waiting for the load of %q: %w", clip(key), ctx.Err())
		case <-time.After(d):
		}
		v, soft, found, err := c.read(ctx, s, key)
		if err != nil {
			return "", 0, err
		}
		if found {
			s.waited.Inc()
			return v, soft, nil
		}
	}
}

// loadStore calls the loader and stores what it returns. A store that
// fails is logged, not returned: the caller has its value, and the next
// miss loads again.
func (c *Cache) loadStore(ctx context.Context, s *entState, key string, load Loader) (string, int64, error) {
	v, err := load(ctx, key)
	if err != nil {
		s.loadErr.Inc()
		if errors.Is(err, ErrNotFound) {
			return "", 0, err
		}
		return "", 0, fmt.Errorf("hotkey: load %q: %w", clip(key), err)
	}
	s.loadOK.Inc()
	enc, soft := s.wrap(v)
	if err := c.store(ctx, s, key, enc); err != nil {
		c.log.Warn("keyguard: loaded value not stored", "template", s.tmpl, "err", err)
	}
	return v, soft, nil
}

// release deletes the lock if it still holds token (unlock.lua; EVALSHA,
// EVAL when the script is not cached).
func (c *Cache) release(ctx context.Context, lockKey, token string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if err := c.unlock.Run(ctx, c.rdb, []string{lockKey}, token).Err(); err != nil {
		c.log.Warn("keyguard: release load lock (it expires with its TTL)", "lock", clip(lockKey), "err", err)
	}
}

// refreshAsync refreshes a logically expired key in the background, once
// per process at a time; the caller does not wait.
func (c *Cache) refreshAsync(s *entState, key string, load Loader) {
	if _, busy := c.inflight.LoadOrStore(key, struct{}{}); busy {
		return
	}
	c.bgMu.Lock()
	if c.closed.Load() {
		c.bgMu.Unlock()
		c.inflight.Delete(key)
		return
	}
	c.wg.Add(1)
	c.bgMu.Unlock()
	go func() {
		defer c.wg.Done()
		defer c.inflight.Delete(key)
		ctx, cancel := context.WithTimeout(withoutDetection(c.bg), c.opts.LoadTimeout)
		defer cancel()
		if err := c.refresh(ctx, s, key, load); err != nil {
			s.refreshErr.Inc()
			c.log.Warn("keyguard: background refresh failed; the old value is served until the next try", "template", s.tmpl, "err", err)
		}
	}()
}

// refresh reloads key under its lock, once per cluster: a process that
// finds the lock taken leaves the refresh to its holder.
func (c *Cache) refresh(ctx context.Context, s *entState, key string, load Loader) error {
	if s.lockTTL == 0 {
		return &Error{Op: "refresh", Key: key, Template: s.tmpl, Err: ErrNoLock, Hint: s.lockErr}
	}
	lockKey, token := LockPrefix+key, newID()+newID()
	ok, err := c.rdb.SetNX(ctx, lockKey, token, s.lockTTL).Result()
	if err != nil {
		return fmt.Errorf("lock %q: %w", clip(lockKey), err)
	}
	if !ok {
		s.refreshSkip.Inc()
		return nil
	}
	defer c.release(ctx, lockKey, token)
	if _, soft, found, err := c.read(ctx, s, key); err == nil && found && soft > time.Now().UnixMilli() {
		s.refreshSkip.Inc() // refreshed by another process since we read it
		return nil
	}
	v, err := load(ctx, key)
	if errors.Is(err, ErrNotFound) {
		s.loadOK.Inc()
		return c.Delete(ctx, key)
	}
	if err != nil {
		s.loadErr.Inc()
		return fmt.Errorf("load %q: %w", clip(key), err)
	}
	s.loadOK.Inc()
	if err := c.set(ctx, s, key, v); err != nil {
		return err
	}
	s.refreshOK.Inc()
	return nil
}
