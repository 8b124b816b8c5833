package hotkey

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/maypok86/otter/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/singleflight"

	"github.com/keyguard/keyguard/registry"
	"github.com/keyguard/keyguard/ttlpolicy"
)

// Cache defaults.
const (
	DefaultChannel     = "channel:keyguard:invalidate"
	DefaultLocalSize   = 10_000
	DefaultLockWait    = 3 * time.Second
	DefaultLoadTimeout = 10 * time.Second
	// LockPrefix is put before a key to name its load lock; the lock's
	// template is LockPrefix + the key's template and must be registered.
	LockPrefix = "lock:"
)

// Loader loads the value of key from the source of truth (a database, a
// service). It returns ErrNotFound when there is none.
type Loader func(ctx context.Context, key string) (string, error)

// Options configures a Cache.
type Options struct {
	// Service names this process in hot-key reports. Required.
	Service string
	// Channel is the Pub/Sub channel of local-tier invalidations; it must
	// match a registered template (DefaultChannel when empty).
	Channel string
	// LocalSize bounds the local tier in entries (DefaultLocalSize).
	LocalSize int
	// PromoteAbove, when positive, keeps a key of a hot template in the
	// local tier only once this process reads it more than PromoteAbove
	// times a second (the Detector's estimate); zero puts every key of a
	// hot template there. Replicas do not depend on it: they follow the
	// registry, so every instance agrees on the copies.
	PromoteAbove float64
	// LockWait bounds how long a miss waits for another process's load
	// (DefaultLockWait); after it this process loads the key itself.
	LockWait time.Duration
	// LoadTimeout bounds a load shared by callers: reading Redis, the
	// lock, the Loader and the write (DefaultLoadTimeout).
	LoadTimeout time.Duration
	// Logical gives templates (as written in the registry) logical
	// expiry: values carry a soft deadline this long after their write;
	// past it, one caller in the cluster refreshes the value in the
	// background while every caller keeps getting the old one. The key
	// keeps its registry TTL as a safety net, which must be longer.
	Logical map[string]time.Duration
	// Detector receives every key read; nil makes one, reporting to the
	// Cache's client, started by New and stopped by Close.
	Detector *Detector
	// NoReports keeps the Detector New makes from reporting to Redis (a
	// tool that writes keys, as keyguard preheat, is not a service).
	NoReports bool
	// Registerer receives the metrics; nil counts without exporting.
	Registerer prometheus.Registerer
	// Logger receives background errors; nil discards.
	Logger *slog.Logger
	// Seed seeds the TTL jitter; zero seeds from the clock.
	Seed uint64
}

// Cache reads and writes the string keys of registered templates with the
// protection the registry declares (hot: {replicas, local_ttl}): a local
// tier in front of Redis with invalidation broadcast to every instance,
// copies spread over Cluster slots, a miss loaded once per process and
// once per cluster, TTLs with the template's jitter, and optional logical
// expiry.
type Cache struct {
	reg      *registry.Registry
	rdb      redis.UniversalClient
	opts     Options
	ents     []entState
	det      *Detector
	ownDet   bool
	ttl      *ttlpolicy.Policy
	m        *metrics
	log      *slog.Logger
	local    *otter.Cache[string, localValue]
	clock    *otter.CoarseClock
	ps       *redis.PubSub
	up       atomic.Bool // the subscription is live: the local tier may be used
	sf       singleflight.Group
	unlock   *redis.Script
	inflight sync.Map // key → struct{}: logical refreshes running in this process
	id       string   // this Cache's id in invalidation messages

	bg     context.Context
	cancel context.CancelFunc
	bgMu   sync.Mutex // orders wg.Add of background work against Close
	wg     sync.WaitGroup
	closed atomic.Bool
}

// localValue is a local-tier entry.
type localValue struct {
	v    string
	soft int64 // unix ms soft deadline (logical expiry), 0 when none
	ttl  time.Duration
	s    *entState // the key's template: a hit needs no registry lookup
}

// entState is what the Cache needs about one registry entry, resolved at New.
type entState struct {
	e        *registry.Entry
	tmpl     string
	stringOK bool
	replicas int
	localTTL time.Duration
	soft     time.Duration
	lockTTL  time.Duration // 0: no usable lock template
	lockErr  string        // why not, for the error's hint

	hit, miss, loadOK, loadErr, acquired, waited, timeout, stale, fanout prometheus.Counter
	refreshOK, refreshErr, refreshSkip                                   prometheus.Counter
}

//go:embed unlock.lua
var unlockSrc string

// New returns a Cache over rdb for the templates of reg and subscribes to
// the invalidation channel; it returns once the subscription is confirmed
// (ctx bounds the wait). Close releases it.
func New(ctx context.Context, reg *registry.Registry, rdb redis.UniversalClient, opts Options) (*Cache, error) {
	if reg == nil || rdb == nil {
		return nil, fmt.Errorf("hotkey: New needs a registry and a Redis client")
	}
	if opts.Service == "" {
		return nil, fmt.Errorf("hotkey: Options.Service is empty; name the service as the registry's owner field does")
	}
	if opts.Channel == "" {
		opts.Channel = DefaultChannel
	}
	if hasLocalTier(reg) && reg.Lookup(opts.Channel) == nil {
		return nil, fmt.Errorf("hotkey: the invalidation channel %q matches no template of %s\n\tTry: declare it (hotkey.RecordRegistry has the entry) or set Options.Channel to a registered channel name", opts.Channel, reg.File)
	}
	if opts.LocalSize <= 0 {
		opts.LocalSize = DefaultLocalSize
	}
	if opts.LockWait <= 0 {
		opts.LockWait = DefaultLockWait
	}
	if opts.LoadTimeout <= 0 {
		opts.LoadTimeout = DefaultLoadTimeout
	}
	m, err := newMetrics(opts.Registerer)
	if err != nil {
		return nil, fmt.Errorf("hotkey: register metrics: %w (another collector uses a keyguard_hotkey_ name)", err)
	}
	c := &Cache{reg: reg, rdb: rdb, opts: opts, m: m, log: opts.Logger, id: newID(),
		ttl: ttlpolicy.New(reg, ttlpolicy.Options{Seed: opts.Seed}), unlock: redis.NewScript(unlockSrc)}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if err := c.resolve(); err != nil {
		return nil, err
	}
	c.det = opts.Detector
	if c.det == nil {
		c.det, err = NewDetector(reg, DetectorOptions{Service: opts.Service, Registerer: opts.Registerer, Logger: opts.Logger})
		if err != nil {
			return nil, err
		}
		c.ownDet = true
	}
	// A clock read every 10 ms instead of at each read: reading the time
	// is a large part of a local hit, and local_ttl is seconds.
	c.clock = otter.NewCoarseClock(10 * time.Millisecond)
	c.local, err = otter.New(&otter.Options[string, localValue]{
		MaximumSize:      opts.LocalSize,
		ExpiryCalculator: otter.ExpiryWritingFunc(func(e otter.Entry[string, localValue]) time.Duration { return e.Value.ttl }),
		Clock:            c.clock,
		Logger:           otterLogger{c.log},
	})
	if err != nil {
		c.clock.Stop()
		return nil, fmt.Errorf("hotkey: local tier: %w", err)
	}
	c.bg, c.cancel = context.WithCancel(context.WithoutCancel(ctx))
	if hasLocalTier(reg) {
		if err := c.subscribe(ctx); err != nil {
			c.cancel()
			c.local.StopAllGoroutines()
			c.clock.Stop()
			return nil, err
		}
	}
	if c.ownDet && !opts.NoReports {
		c.det.Start(c.bg, rdb)
	}
	return c, nil
}

// resolve fills ents from the registry and checks Options.Logical.
func (c *Cache) resolve() error {
	c.ents = make([]entState, len(c.reg.Entries))
	for i, e := range c.reg.Entries {
		s := &c.ents[i]
		s.e, s.tmpl = e, e.Template.String()
		s.stringOK = e.Type == "" || e.Type == "string"
		if e.Hot != nil {
			s.replicas = min(max(e.Hot.Replicas, 1), MaxReplicas)
			s.localTTL = e.Hot.LocalTTL
		}
		switch le := c.reg.EntryByKey(LockPrefix + e.Key); {
		case le == nil:
			s.lockErr = fmt.Sprintf("register %q with a short ttl (the longest a load may take) in %s", LockPrefix+e.Key, c.reg.File)
		case le.Persistent || le.TTL <= 0:
			s.lockErr = fmt.Sprintf("give the lock template %q a ttl: a lock must expire if its holder dies", le.Key)
		default:
			s.lockTTL = le.TTL
		}
		t := s.tmpl
		s.hit = c.m.local.WithLabelValues(t, "hit")
		s.miss = c.m.local.WithLabelValues(t, "miss")
		s.loadOK = c.m.loads.WithLabelValues(t, "ok")
		s.loadErr = c.m.loads.WithLabelValues(t, "error")
		s.acquired = c.m.lock.WithLabelValues(t, "acquired")
		s.waited = c.m.lock.WithLabelValues(t, "waited")
		s.timeout = c.m.lock.WithLabelValues(t, "timeout")
		s.stale = c.m.stale.WithLabelValues(t)
		s.fanout = c.m.fanout.WithLabelValues(t)
		s.refreshOK = c.m.refresh.WithLabelValues(t, "ok")
		s.refreshErr = c.m.refresh.WithLabelValues(t, "error")
		s.refreshSkip = c.m.refresh.WithLabelValues(t, "skipped")
	}
	for t, soft := range c.opts.Logical {
		e := c.reg.EntryByKey(t)
		if e == nil {
			return fmt.Errorf("hotkey: Options.Logical names %q, which is not a template of %s (write the template as the registry does)", t, c.reg.File)
		}
		if soft <= 0 || (!e.Persistent && e.TTL > 0 && soft >= e.TTL) {
			return fmt.Errorf("hotkey: Options.Logical[%q] = %v: give a positive soft TTL shorter than the template's ttl %s (the safety net)", t, soft, registry.FormatTTL(e.TTL))
		}
		c.ents[e.Index].soft = soft
	}
	return nil
}

// hasLocalTier reports whether some template declares hot.local_ttl:
// without one there is nothing to invalidate and no subscription.
func hasLocalTier(reg *registry.Registry) bool {
	for _, e := range reg.Entries {
		if e.Hot != nil && e.Hot.LocalTTL > 0 {
			return true
		}
	}
	return false
}

// otterLogger sends the local tier's own messages to Options.Logger
// (otter logs to the default slog logger otherwise).
type otterLogger struct{ log *slog.Logger }

func (l otterLogger) Warn(ctx context.Context, msg string, err error) {
	l.log.WarnContext(ctx, "keyguard: local tier: "+msg, "err", err)
}

func (l otterLogger) Error(ctx context.Context, msg string, err error) {
	l.log.ErrorContext(ctx, "keyguard: local tier: "+msg, "err", err)
}

// Detector returns the detector the Cache feeds.
func (c *Cache) Detector() *Detector { return c.det }

// state returns the entry state of key, or an *Error.
func (c *Cache) state(op, key string) (*entState, error) {
	if c.closed.Load() {
		return nil, ErrClosed
	}
	e := c.reg.Lookup(key)
	if e == nil {
		return nil, &Error{Op: op, Key: key, Err: ErrUnregistered,
			Hint: "register the key's template in " + c.reg.File + " (keyguard check KEY shows the nearest template)"}
	}
	s := &c.ents[e.Index]
	if !s.stringOK {
		return nil, &Error{Op: op, Key: key, Template: s.tmpl, Err: ErrType,
			Hint: "the Cache stores string values; the template declares " + e.Type}
	}
	return s, nil
}

// useLocal reports whether key goes through the local tier.
func (c *Cache) useLocal(s *entState, key string) bool {
	if s.localTTL <= 0 || !c.up.Load() {
		return false
	}
	return c.opts.PromoteAbove <= 0 || c.det.Rate(key) >= c.opts.PromoteAbove
}

// Get returns the value of key: from the local tier for a hot template,
// else from Redis (a random copy for a replicated template), else from
// load, called once per process and, under the template's lock:
// template, once per cluster, and stored with the template's TTL and
// jitter (on every copy).
func (c *Cache) Get(ctx context.Context, key string, load Loader) (string, error) {
	// The hot path: a key in the local tier is of a hot template already.
	if c.up.Load() {
		if lv, ok := c.local.GetIfPresent(key); ok {
			lv.s.hit.Inc()
			c.det.Observe(key)
			return c.served(lv.s, key, lv.v, lv.soft, load), nil
		}
	}
	s, err := c.state("get", key)
	if err != nil {
		return "", err
	}
	c.det.Observe(key)
	if c.useLocal(s, key) {
		s.miss.Inc()
		lv, err := c.local.Get(ctx, key, otter.LoaderFunc[string, localValue](func(lctx context.Context, key string) (localValue, error) {
			v, soft, err := c.fetch(lctx, s, key, load)
			return localValue{v: v, soft: soft, ttl: s.localTTL, s: s}, err
		}))
		if err != nil {
			return "", err
		}
		return c.served(s, key, lv.v, lv.soft, load), nil
	}
	ch := c.sf.DoChan(key, func() (any, error) {
		v, soft, err := c.fetch(ctx, s, key, load)
		return localValue{v: v, soft: soft}, err
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return "", r.Err
		}
		lv := r.Val.(localValue)
		return c.served(s, key, lv.v, lv.soft, load), nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// served starts a background refresh when the value is past its soft
// deadline, and returns it either way.
func (c *Cache) served(s *entState, key, v string, soft int64, load Loader) string {
	if s.soft > 0 && soft <= time.Now().UnixMilli() {
		s.stale.Inc()
		c.refreshAsync(s, key, load)
	}
	return v
}

// fetch reads key from Redis and loads it on a miss. It runs once per
// key at a time in this process (singleflight or the local tier's
// loader), detached from the caller's cancellation and bounded by
// LoadTimeout.
func (c *Cache) fetch(ctx context.Context, s *entState, key string, load Loader) (string, int64, error) {
	ctx, cancel := context.WithTimeout(withoutDetection(context.WithoutCancel(ctx)), c.opts.LoadTimeout)
	defer cancel()
	v, soft, ok, err := c.read(ctx, s, key)
	if err != nil || ok {
		return v, soft, err
	}
	return c.loadLocked(ctx, s, key, load)
}

// read gets key, or a random copy of it.
func (c *Cache) read(ctx context.Context, s *entState, key string) (string, int64, bool, error) {
	name := key
	if s.replicas > 1 {
		name = ReplicaKey(key, rand.IntN(s.replicas), s.replicas)
	}
	v, err := c.rdb.Get(ctx, name).Result()
	if errors.Is(err, redis.Nil) {
		return "", 0, false, nil
	}
	if err != nil {
		return "", 0, false, fmt.Errorf("hotkey: get %q: %w", clip(name), err)
	}
	if s.soft > 0 {
		v, soft, _ := decodeLogical(v)
		return v, soft, true, nil
	}
	return v, 0, true, nil
}

// Set writes key (every copy, one TTL with the template's jitter for
// all) and invalidates it in every instance's local tier. A partial
// failure of the copies is a *FanoutError; a failed broadcast a
// *BroadcastError.
func (c *Cache) Set(ctx context.Context, key, value string) error {
	s, err := c.state("set", key)
	if err != nil {
		return err
	}
	return c.set(withoutDetection(ctx), s, key, value)
}

func (c *Cache) set(ctx context.Context, s *entState, key, value string) error {
	_, err := c.setSoft(ctx, s, key, value)
	return err
}

// setSoft is set, returning the soft deadline written (unix ms, 0 when
// the template has no logical expiry).
func (c *Cache) setSoft(ctx context.Context, s *entState, key, value string) (int64, error) {
	value, soft := s.wrap(value)
	return soft, c.invalidateAfter(ctx, s, key, c.store(ctx, s, key, value))
}

// wrap puts v in a logical-expiry envelope when the template has one, and
// returns what to store and its soft deadline (unix ms, 0 when none).
func (s *entState) wrap(v string) (string, int64) {
	if s.soft <= 0 {
		return v, 0
	}
	t := time.Now().Add(s.soft)
	return encodeLogical(v, t), t.UnixMilli()
}

// invalidateAfter invalidates key after a write or delete that reached
// Redis: err is the write's, returned as is when no copy was written, and
// joined with the broadcast's when some were (a *FanoutError).
func (c *Cache) invalidateAfter(ctx context.Context, s *entState, key string, err error) error {
	var fe *FanoutError
	if err != nil && !errors.As(err, &fe) {
		return err
	}
	return errors.Join(err, c.invalidate(ctx, s, key))
}

// store writes value to key or to all its copies, pipelined.
func (c *Cache) store(ctx context.Context, s *entState, key, value string) error {
	ttl := c.ttl.TTL(s.e)
	if s.replicas <= 1 {
		if err := c.rdb.Set(ctx, key, value, ttl).Err(); err != nil {
			return fmt.Errorf("hotkey: set %q: %w", clip(key), err)
		}
		return nil
	}
	names := ReplicaKeys(key, s.replicas)
	cmds, _ := c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, n := range names {
			p.Set(ctx, n, value, ttl)
		}
		return nil
	})
	return c.fanoutResult(s, "set", key, names, cmds)
}

// fanoutResult turns the replies of a copy fan-out into nil, a
// *FanoutError (some copies failed) or a plain error (all failed).
func (c *Cache) fanoutResult(s *entState, op, key string, names []string, cmds []redis.Cmder) error {
	fe := &FanoutError{Op: op, Key: key, Total: len(names)}
	for i, cmd := range cmds {
		if err := cmd.Err(); err != nil && !errors.Is(err, redis.Nil) {
			fe.Failed = append(fe.Failed, names[i])
			if fe.Err == nil {
				fe.Err = err
			}
		}
	}
	switch {
	case len(fe.Failed) == 0 && len(cmds) == len(names):
		return nil
	case len(fe.Failed) == len(names) || len(cmds) != len(names):
		if fe.Err == nil {
			fe.Err = errors.New("no reply")
		}
		return fmt.Errorf("hotkey: %s %q: %w", op, clip(key), fe.Err)
	}
	s.fanout.Add(float64(len(fe.Failed)))
	c.log.Warn("keyguard: some copies of a hot key were not written", "op", op, "template", s.tmpl, "failed", len(fe.Failed), "copies", len(names), "err", fe.Err)
	return fe
}

// Delete removes key (every copy) and invalidates it everywhere.
func (c *Cache) Delete(ctx context.Context, key string) error {
	s, err := c.state("delete", key)
	if err != nil {
		return err
	}
	ctx = withoutDetection(ctx)
	return c.invalidateAfter(ctx, s, key, c.remove(ctx, s, key))
}

// remove deletes key or all its copies, pipelined.
func (c *Cache) remove(ctx context.Context, s *entState, key string) error {
	if s.replicas <= 1 {
		if err := c.rdb.Del(ctx, key).Err(); err != nil {
			return fmt.Errorf("hotkey: delete %q: %w", clip(key), err)
		}
		return nil
	}
	names := ReplicaKeys(key, s.replicas)
	// One DEL per copy: the copies are in different slots.
	cmds, _ := c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, n := range names {
			p.Del(ctx, n)
		}
		return nil
	})
	return c.fanoutResult(s, "delete", key, names, cmds)
}

// Close stops the subscription, the background refreshes and the
// detector New made, and empties the local tier.
func (c *Cache) Close() error {
	c.bgMu.Lock()
	was := c.closed.Swap(true)
	c.bgMu.Unlock()
	if was {
		return nil
	}
	c.cancel()
	var err error
	if c.ps != nil {
		err = c.ps.Close()
	}
	c.wg.Wait()
	if c.ownDet {
		c.det.Close()
	}
	c.local.InvalidateAll()
	c.local.StopAllGoroutines()
	c.clock.Stop()
	return err
}
