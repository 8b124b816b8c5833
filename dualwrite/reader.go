package dualwrite

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/migration"
)

// Source says where a Reader found a value.
type Source uint8

// Sources.
const (
	Miss     Source = iota // in neither key
	New                    // in the new key
	Fallback               // in the old key, the new one missing (rollout keys)
	Old                    // in the old key (keys outside the rollout)
)

func (s Source) String() string { return [...]string{"miss", "new", "fallback", "old"}[s] }

// Reader reads keys of a migration: keys in the rollout from the new key,
// falling back to the old key; the others from the old key only.
type Reader struct {
	rdb   redis.UniversalClient
	plan  *migration.Plan
	bp    atomic.Int64 // rollout in basis points, 0 to 10000
	reads *prometheus.CounterVec
	ratio prometheus.Gauge
}

// NewReader returns a Reader for plan's keys on rdb, with opts.Percent of
// the keys in the rollout.
func NewReader(rdb redis.UniversalClient, plan *migration.Plan, opts Options) (*Reader, error) {
	m, err := newMetrics(opts.Registerer)
	if err != nil {
		return nil, err
	}
	r := &Reader{rdb: rdb, plan: plan, reads: m.reads, ratio: m.rollout.WithLabelValues(plan.From, plan.To)}
	if err := r.SetPercent(opts.Percent); err != nil {
		return nil, err
	}
	return r, nil
}

// SetPercent sets the rollout, 0 to 100 in steps of 0.01. Keys in the
// rollout at one percentage stay in it at every higher one.
func (r *Reader) SetPercent(p float64) error {
	if !(p >= 0 && p <= 100) {
		return fmt.Errorf("dualwrite: rollout %v%%: give a percentage from 0 to 100", p)
	}
	bp := int64(math.Round(p * 100))
	r.bp.Store(bp)
	r.ratio.Set(float64(bp) / 10000)
	return nil
}

// InRollout reports whether oldKey is read from the new key first.
func (r *Reader) InRollout(oldKey string) bool {
	return int64(Cohort(oldKey)) < r.bp.Load()
}

// Cohort is a key's place in the rollout, 0 to 9999: a key is in the
// rollout when its cohort is below the percentage × 100. It is a hash of
// the key (FNV-1a, then a 64-bit finalizer), the same in every process.
func Cohort(key string) uint32 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(key); i++ {
		h ^= uint64(key[i])
		h *= 1099511628211
	}
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return uint32(h % 10000)
}

// ReadFunc reads key with c and says whether it found a value.
type ReadFunc func(ctx context.Context, c redis.Cmdable, key string) (found bool, err error)

// Read runs read against the new key and, when it finds nothing, against
// the old key (keys in the rollout), or against the old key only.
func (r *Reader) Read(ctx context.Context, oldKey string, read ReadFunc) (Source, error) {
	ks, err := keysOf(r.plan, oldKey)
	if err != nil {
		return Miss, err
	}
	src, err := r.read(ctx, ks, read)
	result := src.String()
	if err != nil {
		result = "error"
	}
	r.reads.WithLabelValues(r.plan.From, r.plan.To, result).Inc()
	return src, err
}

func (r *Reader) read(ctx context.Context, ks Keys, read ReadFunc) (Source, error) {
	if !r.InRollout(ks.Old) {
		found, err := read(ctx, r.rdb, ks.Old)
		if err != nil || !found {
			return Miss, err
		}
		return Old, nil
	}
	found, err := read(ctx, r.rdb, ks.New)
	if err != nil || found {
		return New, err
	}
	if found, err = read(ctx, r.rdb, ks.Old); err != nil || !found {
		return Miss, err
	}
	return Fallback, nil
}

// Get reads a string (GET).
func (r *Reader) Get(ctx context.Context, oldKey string) (string, Source, error) {
	var v string
	src, err := r.Read(ctx, oldKey, func(ctx context.Context, c redis.Cmdable, key string) (bool, error) {
		s, err := c.Get(ctx, key).Result()
		if err == redis.Nil {
			return false, nil
		}
		v = s
		return err == nil, err
	})
	return v, src, err
}

// HGetAll reads a whole hash (HGETALL); an empty hash is not found.
func (r *Reader) HGetAll(ctx context.Context, oldKey string) (map[string]string, Source, error) {
	var v map[string]string
	src, err := r.Read(ctx, oldKey, func(ctx context.Context, c redis.Cmdable, key string) (bool, error) {
		m, err := c.HGetAll(ctx, key).Result()
		v = m
		return len(m) > 0, err
	})
	return v, src, err
}

// HMGet reads hash fields (HMGET); found when any of them is there. With
// moved fields, read those: the old hash also holds another team's.
func (r *Reader) HMGet(ctx context.Context, oldKey string, fields ...string) ([]any, Source, error) {
	var v []any
	src, err := r.Read(ctx, oldKey, func(ctx context.Context, c redis.Cmdable, key string) (bool, error) {
		vals, err := c.HMGet(ctx, key, fields...).Result()
		v = vals
		for _, x := range vals {
			if x != nil {
				return true, err
			}
		}
		return false, err
	})
	return v, src, err
}
