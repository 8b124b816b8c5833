// Package ttlpolicy applies the registry's TTL policy to writes: a key of a
// TTL template is always written with the template's TTL (plus a random
// jitter when the template has ttl_jitter), and a key of a persistent
// template never gets one.
//
//	p := ttlpolicy.New(reg, ttlpolicy.Options{})
//	err := p.Set(ctx, rdb, "lock:order:pay:A1", token)             // SET … PX 30000
//	_, err = p.HSet(ctx, rdb, "order:order:1001:base", "amount", 99) // MULTI HSET PEXPIRE EXEC
//
// Every write of a TTL template (re)sets the key's TTL, the way SET … EX
// does: a key that is written keeps living for one TTL after its last
// write. The namespace guard (package guard) has the other semantics, the
// TTL set once by the write that creates the key; use it for guarded
// hashes.
//
// There is no way through this package to write a key of a TTL template
// without a TTL: the write and its PEXPIRE go in one MULTI/EXEC, and a
// template that declares neither ttl nor persistent (a registry lint error)
// cannot be written at all. Nor does Set, SetNX or HSet write what breaks a
// template's declared fields (registry fields, without fields_extra:
// allow): a hash field it does not declare, or a string that is not a JSON
// object of its fields; they return ErrSchema and send nothing. Do's
// commands are not checked. Writes that bypass the SDK are the redishook
// package's business (its enforce mode refuses SET without expiry, PERSIST
// on TTL templates and writes that break declared fields).
package ttlpolicy

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/jsonkeys"
	"github.com/keyguard/keyguard/internal/rediscmd"
	"github.com/keyguard/keyguard/registry"
)

// Errors, matched with errors.Is. Nothing is sent to Redis when one is returned.
var (
	// ErrUnregistered: the key matches no template of the registry.
	ErrUnregistered = errors.New("ttlpolicy: key matches no registered template")
	// ErrNoPolicy: the template declares neither a ttl nor persistent: true.
	ErrNoPolicy = errors.New("ttlpolicy: template has no TTL policy")
	// ErrType: the helper writes a Redis type the template does not declare.
	ErrType = errors.New("ttlpolicy: template declares another type")
	// ErrSchema: the write breaks the template's declared fields: a hash
	// field it does not declare, or a string value that is not a JSON
	// object (or holds keys it does not declare).
	ErrSchema = errors.New("ttlpolicy: the write breaks the template's declared fields")
)

// Error is a refused write. It matches its Err (one of the sentinels above)
// with errors.Is.
type Error struct {
	Op       string // "set", "hset", "do", "expire", "ttl"
	Key      string
	Template string // "" when unregistered
	Err      error
	Hint     string
	// Undeclared lists the fields the write names that the template does
	// not declare (ErrSchema; at most 16). Empty when the value is not a
	// JSON object.
	Undeclared []string
}

func (e *Error) Error() string {
	tmpl := ""
	if e.Template != "" {
		tmpl = fmt.Sprintf(" (template %q)", e.Template)
	}
	return fmt.Sprintf("%s %q%s: %v; %s", e.Op, clip(e.Key), tmpl, e.Err, e.Hint)
}

func (e *Error) Unwrap() error { return e.Err }

// Options configures a Policy.
type Options struct {
	// Seed seeds the jitter source. Zero seeds from the clock; tests pass a
	// fixed seed to get repeatable TTLs.
	Seed uint64
}

// Policy turns registry entries into TTLs. It is safe for concurrent use.
type Policy struct {
	reg *registry.Registry
	mu  sync.Mutex
	rnd *rand.Rand // per instance: no global random state
}

// New returns the policy of reg.
func New(reg *registry.Registry, opts Options) *Policy {
	seed := opts.Seed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	return &Policy{reg: reg, rnd: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// TTL returns the TTL a write gives a key of e: e.TTL plus a uniform random
// jitter in [0, e.TTLJitter], at millisecond precision. It is 0 for a
// persistent entry and for an entry without policy (check with Entry).
func (p *Policy) TTL(e *registry.Entry) time.Duration {
	if e.Persistent || e.TTL <= 0 {
		return 0
	}
	ttl := e.TTL
	if j := e.TTLJitter.Milliseconds(); j > 0 {
		p.mu.Lock()
		n := p.rnd.Int64N(j + 1)
		p.mu.Unlock()
		ttl += time.Duration(n) * time.Millisecond
	}
	return ttl.Truncate(time.Millisecond)
}

// Entry returns the registry entry of key, or an *Error when the key is not
// registered or its template has no TTL policy.
func (p *Policy) Entry(key string) (*registry.Entry, error) {
	return p.entry("ttl", key, "")
}

func (p *Policy) entry(op, key, typ string) (*registry.Entry, error) {
	e := p.reg.Lookup(key)
	if e == nil {
		return nil, &Error{Op: op, Key: key, Err: ErrUnregistered,
			Hint: "register the key's template in " + p.reg.File + " (keyguard check KEY shows the nearest template)"}
	}
	if !e.Persistent && e.TTL <= 0 {
		return nil, &Error{Op: op, Key: key, Template: e.Key, Err: ErrNoPolicy,
			Hint: "give the template a ttl, or persistent: true if the key must never expire"}
	}
	if typ != "" && e.Type != "" && e.Type != typ {
		return nil, &Error{Op: op, Key: key, Template: e.Key, Err: ErrType,
			Hint: fmt.Sprintf("the template declares type %s; use the helper for that type (Do works for any command)", e.Type)}
	}
	return e, nil
}

// Set writes a string key: SET key value PX ttl, or SET key value for a
// persistent template.
func (p *Policy) Set(ctx context.Context, c redis.Cmdable, key string, value any) error {
	e, err := p.entry("set", key, "string")
	if err != nil {
		return err
	}
	if err := checkValue("set", key, e, value); err != nil {
		return err
	}
	return c.Set(ctx, key, value, p.TTL(e)).Err()
}

// SetNX writes a string key only if it does not exist (SET key value NX PX
// ttl) and reports whether it did.
func (p *Policy) SetNX(ctx context.Context, c redis.Cmdable, key string, value any) (bool, error) {
	e, err := p.entry("set", key, "string")
	if err != nil {
		return false, err
	}
	if err := checkValue("set", key, e, value); err != nil {
		return false, err
	}
	return c.SetNX(ctx, key, value, p.TTL(e)).Result()
}

// HSet sets hash fields (HSET key field value …, the values go-redis's
// HSet takes) and the template's TTL in one MULTI/EXEC. It returns the
// number of fields added.
func (p *Policy) HSet(ctx context.Context, c redis.Cmdable, key string, values ...any) (int64, error) {
	var hset *redis.IntCmd
	_, err := p.do(ctx, "hset", "hash", c, key, func(pipe redis.Pipeliner, e *registry.Entry) error {
		hset = pipe.HSet(ctx, key, values...)
		return checkFields(key, e, hset.Args())
	})
	if err != nil {
		return 0, err
	}
	return hset.Val(), nil
}

// Do runs the commands fn queues on key in one MULTI/EXEC followed by
// PEXPIRE key ttl (nothing for a persistent template), for any type:
//
//	p.Do(ctx, rdb, key, func(pipe redis.Pipeliner) error { pipe.SAdd(ctx, key, "a"); return nil })
//
// fn should queue commands on key only: on Redis Cluster every key of a
// transaction must be in one slot. It returns the queued commands (without
// the PEXPIRE).
func (p *Policy) Do(ctx context.Context, c redis.Cmdable, key string, fn func(pipe redis.Pipeliner) error) ([]redis.Cmder, error) {
	return p.do(ctx, "do", "", c, key, func(pipe redis.Pipeliner, _ *registry.Entry) error { return fn(pipe) })
}

// do is Do for op, with the helper's type, giving fn the key's entry.
func (p *Policy) do(ctx context.Context, op, typ string, c redis.Cmdable, key string, fn func(redis.Pipeliner, *registry.Entry) error) ([]redis.Cmder, error) {
	e, err := p.entry(op, key, typ)
	if err != nil {
		return nil, err
	}
	ttl := p.TTL(e)
	pipe := c.TxPipeline()
	if err := fn(pipe, e); err != nil {
		pipe.Discard()
		return nil, err
	}
	n := pipe.Len()
	if ttl > 0 {
		pipe.PExpire(ctx, key, ttl)
	}
	cmds, err := pipe.Exec(ctx)
	if len(cmds) > n {
		cmds = cmds[:n]
	}
	if err != nil {
		return cmds, fmt.Errorf("%s %q: %w", op, clip(key), err)
	}
	return cmds, nil
}

// Expire gives an existing key its template's TTL (PEXPIRE key ttl); for a
// persistent template it does nothing. It reports whether the key exists.
func (p *Policy) Expire(ctx context.Context, c redis.Cmdable, key string) (bool, error) {
	e, err := p.entry("expire", key, "")
	if err != nil {
		return false, err
	}
	if e.Persistent {
		n, err := c.Exists(ctx, key).Result()
		return n == 1, err
	}
	return c.PExpire(ctx, key, p.TTL(e)).Result()
}

// maxUndeclared bounds the fields an Error lists.
const maxUndeclared = 16

// checkValue refuses a string write to a template whose values are JSON
// objects of declared fields when value is not such an object.
func checkValue(op, key string, e *registry.Entry, value any) error {
	if !e.JSONFields() {
		return nil
	}
	var u undeclared
	s, ok := rediscmd.ArgText(value)
	if !ok || !jsonkeys.Valid(s, func(k string) { u.add(e, k) }) {
		return &Error{Op: op, Key: key, Template: e.Key, Err: ErrSchema,
			Hint: fmt.Sprintf("its values are JSON objects of the fields %q and this value is not one; write a JSON object of those fields", e.Fields)}
	}
	if len(u) == 0 {
		return nil
	}
	return schemaError(op, key, e, u)
}

// checkFields refuses an HSET (args as go-redis sends them: hset, key,
// then field and value pairs) of a field the template does not declare.
func checkFields(key string, e *registry.Entry, args []any) error {
	if e.Type != "hash" || len(e.Fields) == 0 || e.FieldsExtra {
		return nil
	}
	var u undeclared
	for i := 2; i < len(args); i += 2 {
		if f, ok := rediscmd.ArgText(args[i]); ok {
			u.add(e, f)
		}
	}
	if len(u) == 0 {
		return nil
	}
	return schemaError("hset", key, e, u)
}

func schemaError(op, key string, e *registry.Entry, u undeclared) error {
	return &Error{Op: op, Key: key, Template: e.Key, Err: ErrSchema, Undeclared: u,
		Hint: fmt.Sprintf("it declares the fields %q, not %q; write only declared fields (the generated constants name them), or add them to the template's fields in the registry", e.Fields, []string(u))}
}

// undeclared collects the distinct fields a write names that its template
// does not declare, at most maxUndeclared.
type undeclared []string

func (u *undeclared) add(e *registry.Entry, f string) {
	if e.FieldsExtra || len(*u) >= maxUndeclared || e.HasField(f) || slices.Contains(*u, f) {
		return
	}
	*u = append(*u, f)
}

// clip keeps error messages readable for huge or binary keys.
func clip(s string) string {
	const max = 200
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}
