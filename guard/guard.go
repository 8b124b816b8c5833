package guard

import (
	"context"
	"crypto/sha1"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/redis/go-redis/v9"
)

// ReservedField is the hash field holding the owner's namespace. It is never
// written as a business field and never returned by GetAll.
const ReservedField = "__ns__"

//go:embed guard.lua
var scriptSrc string

// Script returns the Lua source of the guard (guard.lua), e.g. to load it by
// hand or review it. Its header documents KEYS, ARGV and the replies.
func Script() string { return scriptSrc }

// ScriptSHA returns the SHA-1 digest EVALSHA uses for Script.
func ScriptSHA() string {
	sum := sha1.Sum([]byte(scriptSrc))
	return hex.EncodeToString(sum[:])
}

// Options is the write policy of one guarded key template.
type Options struct {
	// TTL is given to a key by the write that finds it without a TTL
	// (normally the write that creates it). Later writes never renew it.
	// Required unless Persistent is set.
	TTL time.Duration
	// Jitter adds a random duration in [0, Jitter] to TTL, drawn per write,
	// so keys created together do not expire together.
	Jitter time.Duration
	// Persistent keys never get a TTL from the guard (registry
	// `persistent: true`). TTL and Jitter must be zero.
	Persistent bool
	// BestEffort replaces the Lua script with plain commands (seed 002
	// 写法二: HSETNX of the owner, HGET to check it, HSET, PEXPIRE … NX) for
	// managed servers that refuse EVAL. It is NOT atomic: two namespaces
	// racing on a key that is deleted or expires between the check and the
	// write can both believe they own it, and a reader can see the owner
	// field before the business fields. Use it only where the Lua mode is
	// impossible.
	BestEffort bool
}

// Result describes what one guarded write did.
type Result struct {
	Added   int  // fields that did not exist before
	Updated int  // existing fields that were overwritten
	Claimed bool // the key had no owner and is now ours
	Adopted bool // Claimed, and the hash already existed without an owner (written around the guard)
	TTLSet  bool // this write set the key's TTL (it had none)
}

// Guard writes and reads hashes owned by one namespace. It is safe for
// concurrent use. Build one per guarded key template.
type Guard struct {
	c     redis.UniversalClient
	ns    string
	opts  Options
	sha   string
	ttlMS int64 // TTL in ms without jitter; 0 when Persistent
	err   error // configuration error, returned by every call

	// Script arguments boxed once: boxing a string or an int64 into an
	// interface allocates, and these go out with every call.
	nsArg, ttlArgFixed any
}

// New returns a guard writing as namespace (e.g. "order-service:order")
// through client (*redis.Client, *redis.ClusterClient, *redis.Ring…). It
// does not contact Redis. An invalid namespace or policy is reported by every
// call of the returned Guard (and by Err), so that New can be used in
// variable initialisers.
func New(client redis.UniversalClient, namespace string, opts Options) *Guard {
	g := &Guard{c: client, ns: namespace, opts: opts, sha: ScriptSHA()}
	g.err = g.validate()
	if !opts.Persistent {
		g.ttlMS = opts.TTL.Milliseconds()
	}
	g.nsArg, g.ttlArgFixed = g.ns, g.ttlMS
	return g
}

func (g *Guard) validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("guard: invalid configuration for namespace %q: "+format, append([]any{g.ns}, a...)...)
	}
	if g.c == nil {
		return bad("nil Redis client; pass a *redis.Client or *redis.ClusterClient")
	}
	if err := validNamespace(g.ns); err != nil {
		return bad("%v", err)
	}
	o := g.opts
	switch {
	case o.Persistent && (o.TTL != 0 || o.Jitter != 0):
		return bad("Persistent with TTL %v and Jitter %v; a persistent key gets no TTL, set both to 0", o.TTL, o.Jitter)
	case !o.Persistent && o.TTL < time.Millisecond:
		return bad("TTL %v; give a TTL of at least 1ms, or set Persistent for a key that must never expire", o.TTL)
	case o.Jitter < 0:
		return bad("negative Jitter %v", o.Jitter)
	}
	return nil
}

func validNamespace(ns string) error {
	if ns == "" {
		return errors.New(`empty namespace; name the owner such as "order-service:order"`)
	}
	if ns == ReservedField {
		return errors.New("the namespace cannot be the reserved field name " + ReservedField)
	}
	if len(ns) > 200 {
		return fmt.Errorf("namespace of %d bytes; keep it under 200", len(ns))
	}
	for i := 0; i < len(ns); i++ {
		if ns[i] <= ' ' || ns[i] > '~' {
			return fmt.Errorf("namespace byte %#x at %d; use printable ASCII without spaces", ns[i], i)
		}
	}
	return nil
}

// Err returns the configuration error of the guard, or nil.
func (g *Guard) Err() error { return g.err }

// Namespace returns the namespace the guard writes as.
func (g *Guard) Namespace() string { return g.ns }

// ttlArg is the TTL in ms (an int64) for the next write, jitter included;
// 0 = none.
func (g *Guard) ttlArg() any {
	if g.opts.Jitter <= 0 || g.ttlMS == 0 {
		return g.ttlArgFixed
	}
	return g.ttlMS + rand.Int64N(g.opts.Jitter.Milliseconds()+1)
}

// Set writes one field of the hash at key: it claims the key when it has no
// owner, refuses with a *ConflictError when another namespace owns it or it
// is not a hash, and sets the TTL only when the key has none. value may be
// any type go-redis accepts as an argument (string, []byte, numbers, bool,
// time.Time, encoding.BinaryMarshaler).
func (g *Guard) Set(ctx context.Context, key, field string, value any) (Result, error) {
	if g.err != nil {
		return Result{}, g.err
	}
	if field == ReservedField {
		return Result{}, ErrReservedField
	}
	args := []any{"set", g.nsArg, g.ttlArg(), field, value}
	if g.opts.BestEffort {
		return g.setBestEffort(ctx, key, args)
	}
	return g.parseSet(key, g.evalsha(ctx, key, args))
}

// SetMany writes several fields of the hash at key in one atomic step, with
// the semantics of Set.
func (g *Guard) SetMany(ctx context.Context, key string, fields map[string]any) (Result, error) {
	if g.err != nil {
		return Result{}, g.err
	}
	args, err := g.setArgs(key, fields)
	if err != nil {
		return Result{}, err
	}
	if g.opts.BestEffort {
		return g.setBestEffort(ctx, key, args)
	}
	return g.parseSet(key, g.evalsha(ctx, key, args))
}

func (g *Guard) setArgs(key string, fields map[string]any) ([]any, error) {
	if len(fields) == 0 {
		return nil, fmt.Errorf("guard: set %q: no fields given; pass at least one field", key)
	}
	args := make([]any, 3, 3+2*len(fields))
	args[0], args[1], args[2] = "set", g.nsArg, g.ttlArg()
	for f, v := range fields {
		if f == ReservedField {
			return nil, ErrReservedField
		}
		args = append(args, f, v)
	}
	return args, nil
}

// evalsha runs the script by digest and falls back to EVAL (which also
// caches it on that node) when the server lost it: SCRIPT FLUSH, restart,
// failover, a new Cluster node.
func (g *Guard) evalsha(ctx context.Context, key string, args []any) *redis.Cmd {
	keys := []string{key}
	cmd := g.c.EvalSha(ctx, g.sha, keys, args...)
	if isNoScript(cmd.Err()) {
		cmd = g.c.Eval(ctx, scriptSrc, keys, args...)
	}
	return cmd
}

func (g *Guard) parseSet(key string, cmd *redis.Cmd) (Result, error) {
	v, err := cmd.Result()
	if err != nil {
		if serr := g.scriptError("set", key, err); serr != nil {
			return Result{}, serr
		}
		return Result{}, g.wrapRedis("set", key, err)
	}
	vals, ok := v.([]any)
	if !ok || len(vals) != 4 {
		return Result{}, fmt.Errorf("guard: set %q: unexpected script reply %v; is the server running guard.lua %s?", key, v, g.sha)
	}
	var n [4]int64
	for i, x := range vals {
		if n[i], ok = x.(int64); !ok {
			return Result{}, fmt.Errorf("guard: set %q: unexpected script reply %v", key, v)
		}
	}
	return Result{
		Added:   int(n[0]),
		Updated: int(n[1]),
		Claimed: n[2] != 0,
		Adopted: n[2] == 2,
		TTLSet:  n[3] == 1,
	}, nil
}

// Get reads one field with HMGET of the owner field and the field (one
// atomic command, no script). found is false when the field or the key does
// not exist. A key owned by another namespace or holding another type gives
// a *ConflictError: reading another team's data by accident is the same
// collision as writing it. A hash without owner is read as is.
func (g *Guard) Get(ctx context.Context, key, field string) (value string, found bool, err error) {
	if g.err != nil {
		return "", false, g.err
	}
	if field == ReservedField {
		return "", false, ErrReservedField
	}
	vals, err := g.c.HMGet(ctx, key, ReservedField, field).Result()
	if err != nil {
		return "", false, g.readErr(ctx, "get", key, err)
	}
	if owner, ok := vals[0].(string); ok && owner != g.ns {
		return "", false, &ConflictError{Key: key, Owner: owner, Namespace: g.ns, Op: "get"}
	}
	value, found = vals[1].(string)
	return value, found, nil
}

// GetAll reads the business fields of the hash with one HGETALL; the owner
// field is checked and removed. A missing key gives an empty map.
func (g *Guard) GetAll(ctx context.Context, key string) (map[string]string, error) {
	if g.err != nil {
		return nil, g.err
	}
	m, err := g.c.HGetAll(ctx, key).Result()
	if err != nil {
		return nil, g.readErr(ctx, "getall", key, err)
	}
	if owner, ok := m[ReservedField]; ok {
		if owner != g.ns {
			return nil, &ConflictError{Key: key, Owner: owner, Namespace: g.ns, Op: "getall"}
		}
		delete(m, ReservedField)
	}
	return m, nil
}

// Owner returns the namespace that owns key, or "" when the key does not
// exist or has no owner. A key of another type gives a *ConflictError with
// FoundType.
func (g *Guard) Owner(ctx context.Context, key string) (string, error) {
	if g.err != nil {
		return "", g.err
	}
	owner, err := g.c.HGet(ctx, key, ReservedField).Result()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	if err != nil {
		return "", g.readErr(ctx, "owner", key, err)
	}
	return owner, nil
}

// readErr turns WRONGTYPE into a *ConflictError carrying the type found by
// a follow-up TYPE (reads are plain commands, so this diagnosis is a second
// round trip, taken only on this error path).
func (g *Guard) readErr(ctx context.Context, op, key string, err error) error {
	if !isWrongType(err) {
		return g.wrapRedis(op, key, err)
	}
	typ, terr := g.c.Type(ctx, key).Result()
	if terr != nil || typ == "hash" || typ == "none" {
		typ = "value of another type"
	}
	return &ConflictError{Key: key, FoundType: typ, Namespace: g.ns, Op: op}
}

// Delete removes key when this namespace owns it (or it has no owner), in
// one atomic step. deleted is false when the key did not exist. A key of
// another namespace or type is left alone and gives a *ConflictError.
func (g *Guard) Delete(ctx context.Context, key string) (deleted bool, err error) {
	if g.err != nil {
		return false, g.err
	}
	if g.opts.BestEffort {
		return g.deleteBestEffort(ctx, key)
	}
	n, err := g.evalsha(ctx, key, []any{"del", g.nsArg}).Int64()
	if err != nil {
		if serr := g.scriptError("delete", key, err); serr != nil {
			return false, serr
		}
		return false, g.wrapRedis("delete", key, err)
	}
	return n == 1, nil
}

// ForceDelete removes key whoever owns it and whatever its type: plain DEL.
// It is for an operator who has confirmed the ownership by hand, so that
// the right namespace can claim the key again.
func (g *Guard) ForceDelete(ctx context.Context, key string) (deleted bool, err error) {
	if g.err != nil {
		return false, g.err
	}
	n, err := g.c.Del(ctx, key).Result()
	if err != nil {
		return false, g.wrapRedis("force-delete", key, err)
	}
	return n == 1, nil
}

// ExpireNX sets a TTL on key only when it has none (EXPIRE key seconds NX,
// Redis 7.0+), for a writer that does not own the key: it can never shorten
// or extend the owner's lifecycle. set is false when the key already has a
// TTL or does not exist; when you expected true, someone else is managing
// this key. ttl is rounded down to whole seconds, minimum 1s.
func (g *Guard) ExpireNX(ctx context.Context, key string, ttl time.Duration) (set bool, err error) {
	if g.err != nil {
		return false, g.err
	}
	if ttl < time.Second {
		ttl = time.Second
	}
	set, err = g.c.ExpireNX(ctx, key, ttl).Result()
	if err != nil {
		return false, g.wrapRedis("expire-nx", key, err)
	}
	return set, nil
}
