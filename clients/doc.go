// Package clients holds keyguard's runtime for other languages, each in
// its own directory: python (package keyguard, redis-py), typescript
// (ioredis and node-redis) and java (a Guard over a script executor, with
// Jedis, Lettuce and Spring adapters). They implement the namespace guard,
// the registry's TTL policy and the writer records with the protocol and
// records of the Go packages guard, ttlpolicy and redishook.
//
// The guard's Lua script has one source, guard/guard.lua; go generate
// writes it (and the version, clients/VERSION) into each package, and
// TestGeneratedFresh fails when a copy is stale. The Go tests of this
// package run every language against real Redis servers and a Cluster:
// the interop matrix, a linearizability check of concurrent writers from
// two languages, the writer records read by keyguard writers and the
// second-writer alert rule, and the overhead benchmark. See docs/clients.md.
//
// Its Go code imports no package of this module.
package clients

//go:generate go run ../internal/codegen/clientgen -clients .
