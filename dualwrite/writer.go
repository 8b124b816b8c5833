package dualwrite

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/keyslot"
	"github.com/keyguard/keyguard/migration"
)

// Options configure a Writer or a Reader.
type Options struct {
	// TTL is given to both keys by every write (default: the new
	// template's TTL; none when it is persistent). Jitter adds one random
	// duration in [0, Jitter] per write, the same for both keys (default:
	// the new template's ttl_jitter).
	TTL, Jitter time.Duration
	// Percent is the Reader's rollout: the share of keys, 0 to 100, read
	// from the new key first. A key's cohort is fixed by a hash of the key,
	// so raising Percent only adds keys.
	Percent float64
	// Registerer receives the metrics; nil counts without exporting.
	Registerer prometheus.Registerer
}

// Keys are the two keys of one write or read.
type Keys struct{ Old, New string }

// ErrCrossSlot is an Update whose old and new keys are in two Cluster slots:
// the new key cannot be seeded from the old one in the same transaction.
var ErrCrossSlot = errors.New("dualwrite: the old and new keys are in different Cluster slots")

// PartialError is a write that reached one key and not the other. The
// key that failed holds its previous value; writing again (Replace is
// idempotent) repairs it.
type PartialError struct {
	Keys     Keys
	Old, New error // the failure of each side; nil for the side written
}

func (e *PartialError) Error() string {
	if e.Old != nil {
		return fmt.Sprintf("dualwrite: %q written, the old key %q not: %v", e.Keys.New, e.Keys.Old, e.Old)
	}
	return fmt.Sprintf("dualwrite: %q written, the new key %q not: %v", e.Keys.Old, e.Keys.New, e.New)
}

// Writer writes the old and the new key of a migration together, with one
// TTL, in one round trip.
type Writer struct {
	rdb        redis.UniversalClient
	plan       *migration.Plan
	cluster    bool
	ttl        time.Duration
	jitter     time.Duration
	persistent bool
	writes     *prometheus.CounterVec
}

// NewWriter returns a Writer for plan's keys on rdb.
func NewWriter(rdb redis.UniversalClient, plan *migration.Plan, opts Options) (*Writer, error) {
	m, err := newMetrics(opts.Registerer)
	if err != nil {
		return nil, err
	}
	w := &Writer{rdb: rdb, plan: plan, writes: m.writes, ttl: opts.TTL, jitter: opts.Jitter}
	_, w.cluster = rdb.(*redis.ClusterClient)
	if opts.TTL == 0 {
		e := plan.ToEntry
		w.ttl, w.jitter, w.persistent = e.TTL, e.TTLJitter, e.Persistent
	}
	return w, nil
}

// Write is what a Writer does to each key, in the order old then new: add
// the commands to p for key. Both calls must write the same thing.
type Write func(p redis.Pipeliner, key string)

// Replace writes a whole value to both keys: each key is emptied first
// (with moved fields: those fields of the old hash; the new key entirely),
// write fills it, and both get the TTL. In one slot (or on a standalone
// server) it is one MULTI/EXEC; across slots, one MULTI/EXEC per key, sent
// at once. Use it for values written whole (SET, a full HSET).
func (w *Writer) Replace(ctx context.Context, oldKey string, write Write) (Keys, error) {
	return w.do(ctx, oldKey, write, false)
}

// Update applies an incremental change (HINCRBY, RPUSH, HSET of one field)
// to both keys. Before it, in the same transaction, a new key that does
// not exist yet is seeded from the old key (COPY, or the moved fields), so
// it never holds just the change. That needs both keys on one node: on a
// Cluster their templates must share a hash tag, otherwise ErrCrossSlot.
func (w *Writer) Update(ctx context.Context, oldKey string, write Write) (Keys, error) {
	return w.do(ctx, oldKey, write, true)
}

func (w *Writer) do(ctx context.Context, oldKey string, write Write, update bool) (Keys, error) {
	ks, err := keysOf(w.plan, oldKey)
	if err != nil {
		return ks, err
	}
	ttl := w.ttl
	if w.jitter >= time.Millisecond {
		ttl += time.Duration(rand.Int64N(int64(w.jitter/time.Millisecond)+1)) * time.Millisecond
	}
	same := !w.cluster || keyslot.Slot(ks.Old) == keyslot.Slot(ks.New)
	if update && !same {
		w.count("failed")
		return ks, fmt.Errorf("%w: %q and %q (give both templates one hash tag, or write whole values with Replace)", ErrCrossSlot, ks.Old, ks.New)
	}
	var oldErr, newErr error
	if same {
		var nSeed, nOld int
		cmds, err := w.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			if update {
				w.seed(ctx, p, ks)
			}
			nSeed = p.Len()
			w.queue(ctx, p, ks.Old, true, ttl, update, write)
			nOld = p.Len() - nSeed
			w.queue(ctx, p, ks.New, false, ttl, update, write)
			return nil
		})
		if err != nil && !isReply(err) {
			w.count("failed")
			return ks, fmt.Errorf("dualwrite %q, %q: %w", ks.Old, ks.New, err)
		}
		oldErr = firstErr(cmds[nSeed : nSeed+nOld])
		newErr = errors.Join(firstErr(cmds[:nSeed]), firstErr(cmds[nSeed+nOld:]))
	} else {
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, newErr = w.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
				w.queue(ctx, p, ks.New, false, ttl, false, write)
				return nil
			})
		}()
		_, oldErr = w.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			w.queue(ctx, p, ks.Old, true, ttl, false, write)
			return nil
		})
		wg.Wait()
	}
	switch {
	case oldErr == nil && newErr == nil:
		w.count("ok")
		return ks, nil
	case oldErr != nil && newErr != nil:
		w.count("failed")
		return ks, fmt.Errorf("dualwrite %q, %q: %w", ks.Old, ks.New, errors.Join(oldErr, newErr))
	}
	w.count("partial")
	return ks, &PartialError{Keys: ks, Old: oldErr, New: newErr}
}

// firstErr is the first error of cmds, a nil reply not counted.
func firstErr(cmds []redis.Cmder) error {
	for _, c := range cmds {
		if err := c.Err(); err != nil && err != redis.Nil {
			return err
		}
	}
	return nil
}

// queue adds one key's commands: empty it (Replace), write, set the TTL.
func (w *Writer) queue(ctx context.Context, p redis.Pipeliner, key string, old bool, ttl time.Duration, update bool, write Write) {
	fields := w.plan.Fields
	if !update {
		switch {
		case fields != nil && old:
			p.HDel(ctx, key, fields...)
		default:
			p.Del(ctx, key)
		}
	}
	write(p, key)
	switch {
	case w.persistent || ttl <= 0:
	case fields != nil && old:
		// The old hash is its template owner's: give it a TTL only if it has none.
		p.Do(ctx, "pexpire", key, ttl.Milliseconds(), "nx")
	default:
		p.PExpire(ctx, key, ttl)
	}
}

// seed copies the old key to a new key that does not exist yet, in the
// Update's transaction.
func (w *Writer) seed(ctx context.Context, p redis.Pipeliner, ks Keys) {
	if w.plan.Fields == nil {
		p.Do(ctx, "copy", ks.Old, ks.New)
		return
	}
	args := make([]any, len(w.plan.Fields))
	for i, f := range w.plan.Fields {
		args[i] = f
	}
	p.Eval(ctx, seedFieldsSrc, []string{ks.Old, ks.New}, args...)
}

// seedFieldsSrc is sent with EVAL (not EVALSHA) because it runs inside
// MULTI, where a NOSCRIPT would fail that command only and let the
// transaction write a new key that was never seeded.
const seedFieldsSrc = `-- KEYS[1] old hash, KEYS[2] new hash, ARGV the moved fields
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
local v = redis.call('HMGET', KEYS[1], unpack(ARGV))
local args = {}
for i = 1, #ARGV do
  if v[i] then args[#args + 1] = ARGV[i]; args[#args + 1] = v[i] end
end
if #args == 0 then return 0 end
redis.call('HSET', KEYS[2], unpack(args))
return 1`

func (w *Writer) count(result string) {
	w.writes.WithLabelValues(w.plan.From, w.plan.To, result).Inc()
}

func keysOf(plan *migration.Plan, oldKey string) (Keys, error) {
	newKey, ok, err := plan.Map(oldKey)
	ks := Keys{Old: oldKey, New: newKey}
	switch {
	case !ok:
		return ks, fmt.Errorf("dualwrite: %q is not a key of %s", oldKey, plan.From)
	case err != nil:
		return ks, fmt.Errorf("dualwrite: %w", err)
	}
	return ks, nil
}

func isReply(err error) bool {
	var re redis.Error
	return errors.As(err, &re)
}
