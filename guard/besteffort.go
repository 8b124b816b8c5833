package guard

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// Best-effort mode (Options.BestEffort): the same checks with plain commands
// for servers that refuse EVAL. Two pipelined round trips per write:
//
//	1. EXISTS key; HSETNX key __ns__ <ns>; HGET key __ns__   claim, read the owner
//	2. HSET key f v …; PEXPIRE key <ms> NX                    only when the owner is us
//
// Not atomic: between 1 and 2 the key can be deleted or expire and be
// claimed by another namespace, and we then write into its hash; a reader
// can see the owner without the fields. It catches the ordinary collision
// (a second service writing an owned key), not a race. No MULTI is used,
// so it also runs behind proxies that refuse transactions.

// claimCmds are the phase-1 commands of one write.
type claimCmds struct {
	exists *redis.IntCmd
	setnx  *redis.BoolCmd
	owner  *redis.StringCmd
}

func queueClaim(ctx context.Context, pipe redis.Pipeliner, key, ns string) claimCmds {
	return claimCmds{
		exists: pipe.Exists(ctx, key),
		setnx:  pipe.HSetNX(ctx, key, ReservedField, ns),
		owner:  pipe.HGet(ctx, key, ReservedField),
	}
}

// check reads the phase-1 replies: the claim flags, or a conflict/error.
func (g *Guard) checkClaim(ctx context.Context, key string, c claimCmds) (Result, error) {
	claimed, err := c.setnx.Result()
	if err != nil {
		return Result{}, g.readErr(ctx, "set", key, err)
	}
	owner, err := c.owner.Result()
	if errors.Is(err, redis.Nil) {
		return Result{}, fmt.Errorf("guard: set %q: the key vanished between claim and check (deleted or expired concurrently); best-effort mode is not atomic, retry the write", key)
	}
	if err != nil {
		return Result{}, g.readErr(ctx, "set", key, err)
	}
	if owner != g.ns {
		return Result{}, &ConflictError{Key: key, Owner: owner, Namespace: g.ns, Op: "set"}
	}
	return Result{Claimed: claimed, Adopted: claimed && c.exists.Val() == 1}, nil
}

// writeCmds are the phase-2 commands of one write.
type writeCmds struct {
	hset   *redis.IntCmd
	expire *redis.Cmd // nil when no TTL applies
}

func queueWrite(ctx context.Context, pipe redis.Pipeliner, key string, ttlMS any, pairs []any) writeCmds {
	w := writeCmds{hset: pipe.HSet(ctx, key, pairs...)}
	if ttlMS.(int64) > 0 {
		w.expire = pipe.Do(ctx, "pexpire", key, ttlMS, "nx")
	}
	return w
}

func (g *Guard) finishWrite(key string, r Result, distinct int, w writeCmds) (Result, error) {
	added, err := w.hset.Result()
	if err != nil {
		return Result{}, g.wrapRedis("set", key, err)
	}
	r.Added, r.Updated = int(added), distinct-int(added)
	if w.expire != nil {
		n, err := w.expire.Int64()
		if err != nil {
			return Result{}, g.wrapRedis("set", key, fmt.Errorf("fields written, TTL not set: %w", err))
		}
		r.TTLSet = n == 1
	}
	return r, nil
}

// setBestEffort writes pairs (field, value, …) after args[:3] of the script
// call ("set", ns, ttl).
func (g *Guard) setBestEffort(ctx context.Context, key string, args []any) (Result, error) {
	pipe := g.c.Pipeline()
	c := queueClaim(ctx, pipe, key, g.ns)
	_, _ = pipe.Exec(ctx)
	r, err := g.checkClaim(ctx, key, c)
	if err != nil {
		return Result{}, err
	}
	pipe = g.c.Pipeline()
	w := queueWrite(ctx, pipe, key, args[2], args[3:])
	_, _ = pipe.Exec(ctx)
	return g.finishWrite(key, r, (len(args)-3)/2, w)
}

func (g *Guard) setPipelinedBestEffort(ctx context.Context, ops []SetOp, args [][]any, results []SetResult) {
	claims := make([]claimCmds, len(ops))
	pipe := g.c.Pipeline()
	for i, op := range ops {
		if args[i] != nil {
			claims[i] = queueClaim(ctx, pipe, op.Key, g.ns)
		}
	}
	_, _ = pipe.Exec(ctx)

	writes := make([]writeCmds, len(ops))
	pipe = g.c.Pipeline()
	for i, op := range ops {
		if args[i] == nil {
			continue
		}
		if results[i].Result, results[i].Err = g.checkClaim(ctx, op.Key, claims[i]); results[i].Err == nil {
			writes[i] = queueWrite(ctx, pipe, op.Key, args[i][2], args[i][3:])
		}
	}
	if pipe.Len() == 0 {
		return
	}
	_, _ = pipe.Exec(ctx)
	for i, op := range ops {
		if writes[i].hset != nil {
			results[i].Result, results[i].Err = g.finishWrite(op.Key, results[i].Result, (len(args[i])-3)/2, writes[i])
		}
	}
}

// deleteBestEffort: HGET the owner, then DEL. Not atomic: the key can change
// hands in between.
func (g *Guard) deleteBestEffort(ctx context.Context, key string) (bool, error) {
	owner, err := g.Owner(ctx, key)
	if err != nil {
		var ce *ConflictError
		if errors.As(err, &ce) {
			ce.Op = "delete"
		}
		return false, err
	}
	if owner != "" && owner != g.ns {
		return false, &ConflictError{Key: key, Owner: owner, Namespace: g.ns, Op: "delete"}
	}
	n, err := g.c.Del(ctx, key).Result()
	if err != nil {
		return false, g.wrapRedis("delete", key, err)
	}
	return n == 1, nil
}
