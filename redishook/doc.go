// Package redishook is a go-redis v9 hook that makes key conflicts loud:
// it extracts every key of every command (single, pipelined or
// transactional), classifies it against the key registry, meters it per
// template, owner, service and access, records which service wrote which
// template, and in enforce mode refuses, before anything is sent, a write
// the registry does not allow.
//
//	h := redishook.New(reg, redishook.Options{Service: "order-team", Mode: redishook.Enforce, Registerer: promReg})
//	h.Install(rdb) // *redis.Client, *redis.ClusterClient or *redis.Ring
//	err := rdb.HSet(ctx, "promo:sku:1001", "x", 1).Err() // errors.Is(err, redishook.ErrDenied): promo-team owns it
//
// # What is refused (enforce) or logged (warn)
//
//   - a write to a key of a template whose owner is another service and
//     whose writers do not list this one (ReasonNotWriter);
//   - a write to a key that matches no template (ReasonUnregistered);
//   - a write that would leave a key of a TTL template without TTL: SET
//     without EX/PX/EXAT/PXAT/KEEPTTL, SETNX, GETSET, MSET, MSETNX, PERSIST,
//     GETEX PERSIST, RESTORE with ttl 0 — unless a later command of the same
//     pipeline or transaction gives the key a TTL (EXPIRE, PEXPIRE,
//     EXPIREAT, PEXPIREAT, SETEX, PSETEX, SET … EX) (ReasonNoTTL);
//   - a TTL given to a key of a persistent template (ReasonPersistent);
//   - FLUSHALL, FLUSHDB and SWAPDB (ReasonKeyspace);
//   - a command missing from the command table, unless listed in
//     Options.AllowUnknown (ReasonUnknownCommand);
//   - on a template that declares its value's fields (registry fields,
//     without fields_extra: allow), an HSET, HSETNX, HMSET, HINCRBY,
//     HINCRBYFLOAT or namespace-guard write (package guard) of a field it
//     does not declare; on a string template whose values are JSON objects,
//     a SET, SETNX, SETEX, PSETEX, GETSET, MSET or MSETNX value that is not
//     a JSON object or has a top-level key it does not declare, and an
//     in-place edit (APPEND, SETRANGE, INCR…, SETBIT, BITFIELD, BITOP) that
//     cannot be checked (ReasonSchema). These are counted in
//     keyguard_schema_writes_total in every mode. The guard's own owner
//     field (written by its script, or claimed by HSETNX in its best-effort
//     mode) is not a business field and passes.
//
// A refused pipeline or transaction is refused whole; every command in it
// carries the *DeniedError of the offending one. Reads are never refused.
//
// # Limits, honestly
//
// The hook sees commands, not the server's state, and never asks Redis
// anything. Field checks see the fields a command names: a value copied
// or restored whole (COPY, RENAME, RESTORE, SORT … STORE) or written by a
// script other than the guard's is not checked, and a JSON value is
// scanned (validated, not decoded) at most 256 levels deep. So HSET, SADD, INCR, APPEND… on a TTL template are let
// through: whether the key already exists with a TTL is unknown to it (write
// such keys through package ttlpolicy, which sends the write and its
// PEXPIRE in one transaction; 'keyguard audit' finds keys without TTL
// afterwards). Keys a Lua script or function touches without declaring them
// in KEYS, and SORT's BY/GET patterns, are invisible (rediscmd). Commands
// newer than Redis 7.0 and module commands are not in the table: they are
// counted in keyguard_unknown_commands_total and, in enforce mode, refused
// unless allowed; new subcommands of containers whose subcommands touch no
// keys (CLIENT SETINFO) pass. The command table is not completed at run
// time with COMMAND GETKEYSANDFLAGS: that would need a round trip inside the
// hook.
//
// # Cost
//
// Classification does not call Redis and does not allocate for string keys
// (BenchmarkClassify): a hash lookup of the command name, the key
// extraction, one registry lookup per key and one atomic add per counter
// (metric children are resolved once, in New). Recording writes costs an
// atomic load per write. Rate-limited log lines and refusals allocate. On a
// template that declares fields, each written field is compared with the
// declared ones, and a JSON value is scanned whole (BenchmarkFields: tens of
// nanoseconds for an HSET of 3 fields, about 2.5 ns a byte of JSON).
//
// # Cluster
//
// Install puts the hook on the ClusterClient, not on the node clients: see
// Install for why that counts each command once, and Hook.Watch for the one
// path (Watch callbacks) that needs help.
//
// # Second writers
//
// With Options.Recorder, writes are aggregated per template in memory and
// flushed by Recorder in the background to a sorted set per template
// (service → last write), trimmed to 24 hours; ReadWriters and 'keyguard
// writers' list them and mark writers the registry does not allow.
// NameConnections names the connections after the service for CLIENT LIST
// and MONITOR.
//
// It is part of the SDK: it imports guard, registry and the kernels
// jsonkeys and rediscmd, never a tool under internal/ (internal/layers
// holds the rule).
package redishook
