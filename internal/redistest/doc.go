// Package redistest starts real redis-server processes, standalone or as a
// Redis Cluster, on free loopback ports for integration tests.
//
// Happy path:
//
//	srv := redistest.Start(t)            // or Start(t, "maxmemory-policy allkeys-lfu")
//	rdb := srv.Client(t)                 // *redis.Client, closed at cleanup
//	rdb.Set(ctx, "k", "v", 0)            // talks to a real server
//
// and for Cluster:
//
//	c := redistest.StartCluster(t, 3)    // 3 masters, slots split evenly, state ok
//	cc := c.Client(t)                    // *redis.ClusterClient
//	rc := redistest.StartClusterWithReplicas(t, 3, 1) // + 1 replica each, in rc.Replicas, link up
//
// Each server gets its own temporary directory (Server.Dir, where SAVE writes
// dump.rdb), its config on stdin, no persistence unless asked for, and a log
// file read by Server.Log. Cleanup stops every server (SIGTERM, then SIGKILL
// after 3 s) and, when the test failed, logs the tail of the server log.
//
// The binary is found with exec.LookPath("redis-server"), or taken from
// KEYGUARD_REDIS_SERVER. When it is missing the test is skipped, unless
// KEYGUARD_REQUIRE_REDIS=1 (CI), in which case it fails.
//
// A test helper: it imports only internal/topology, and only tests import
// it.
package redistest
