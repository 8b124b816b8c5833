// Package guard is the namespace guard: a hash key records its
// owner namespace in the reserved field __ns__, and every write checks and
// claims it atomically, so a second service writing the same key fails loudly
// with a *ConflictError naming the owner instead of silently overwriting.
//
// Happy path:
//
//	g := guard.New(rdb, "order-service:order", guard.Options{TTL: time.Hour})
//	res, err := g.Set(ctx, "order:order:1001:base", "amount", "99") // claims the key, sets the TTL once
//	if errors.Is(err, guard.ErrConflict) { /* another namespace owns the key: do not retry */ }
//
// Writes run guard.lua (embedded; its header documents KEYS, ARGV and the
// replies) with EVALSHA, falling back to EVAL when the server lost the script
// (SCRIPT FLUSH, restart, failover), also inside SetPipelined, where go-redis
// itself does not fall back. The script checks the owner, claims a key without
// one, refuses a key of another namespace or of another type (WRONGTYPE becomes
// a conflict carrying the type found, never retried), writes the fields, and
// sets the TTL only when the key has none: a write never renews it. Every call
// touches one key, so it works on Redis Cluster without hash tags.
//
// Reads are plain commands, each a single atomic command: Get is HMGET of the
// owner field and the field, GetAll is HGETALL with the owner field checked and
// removed, Owner is HGET. Delete runs the script (owner check and DEL in one
// step); ForceDelete is a plain DEL for operators.
//
// Options.BestEffort replaces the script with plain commands
// for managed servers that refuse EVAL. That mode is not atomic; see Options.
//
// The guard takes plain values (namespace, key, TTL policy): the registry
// layer maps key templates to Guards. It does not know a template's declared
// fields either: on a client with package redishook's hook, a guarded write
// of a field the template does not declare is refused by the hook like an
// HSET of it (SetPairs reads the fields out of the script call), and the
// owner field the script writes is never a business field.
//
// It is part of the SDK and imports no package of this module.
package guard
