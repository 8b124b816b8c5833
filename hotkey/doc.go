// Package hotkey detects hot keys and protects them as the registry's
// hot: {replicas, local_ttl} declares: a local tier in front of Redis with
// invalidation broadcast to every instance, copies spread over Cluster
// slots, a miss loaded once per process and once per cluster, TTLs with
// the template's jitter, optional logical expiry, and preheating.
//
//	c, err := hotkey.New(ctx, reg, rdb, hotkey.Options{Service: "catalog-team", Registerer: prom})
//	v, err := c.Get(ctx, "cache:product:detail:P1001", loadFromDB) // local tier, copies, lock
//	err = c.Set(ctx, "cache:product:detail:P1001", v)              // every copy, then invalidate everywhere
//
// # Detection
//
// A Detector (hotkey/topk: a concurrent HeavyKeeper, no allocation per
// key) counts every key of every command through its go-redis hook and
// the Cache's reads; counts halve every Window. It exports the hottest
// rate and the number of top keys per template (never a raw key) and
// reports its top keys to a sorted set per instance under
// keyguard:{hotkeys}:, where 'keyguard hotkeys' merges every instance's
// report with OBJECT FREQ and, on request, a MONITOR sample.
//
// # Invalidation: Pub/Sub, not client tracking
//
// The local tier is invalidated through one registered Pub/Sub channel
// (DefaultChannel): a write through the SDK publishes the key, every
// instance drops it. RESP3 client tracking would also catch writes made
// around the SDK, but it tracks per connection and per node: on a
// Cluster every read would have to go through a tracked connection to
// the key's node, a replicated key's invalidations arrive for its copies,
// and BCAST mode on a hot template's prefix pushes every write of the
// template to every instance. Pub/Sub works the same on one server, on a
// Cluster (a classic PUBLISH reaches subscribers on every node) and on
// the embedded demo server, and costs one connection per instance. Its
// messages are fire-and-forget, so the Cache never trusts the local tier
// while the subscription is down: on a lost subscription the tier is
// emptied and bypassed until go-redis has resubscribed. Writes made
// around the SDK are seen by the other instances when their local copy
// expires, after at most local_ttl; keep it short (seconds).
//
// # Copies
//
// A template with replicas: N stores N copies, "key#j" (inside the hash
// tag when the key has one), where copy i takes the smallest j whose slot
// falls in the middle of the i-th of N equal slot ranges. The names depend
// on the key and N only, not on a Cluster's topology, so every client
// computes the same ones during a resharding; with masters owning equal
// slot ranges the copies spread over every master. Reads pick a copy at
// random; writes and deletes go to all copies in one pipeline with one
// TTL, and a partial failure is a *FanoutError.
//
// # Misses, locks and logical expiry
//
// A miss is loaded once per process (the local tier's loader, or
// singleflight) and once per cluster: under LockPrefix+key, whose
// template (lock:<template>) must be registered with a short TTL; the
// lock is released by unlock.lua only while it holds this caller's token.
// Waiters poll Redis for at most LockWait, then load themselves. With
// Options.Logical a template's values carry a soft deadline: past it,
// callers keep getting the old value while one caller in the cluster
// refreshes it in the background.
package hotkey
