// Package live walks every database of a live Redis with SCAN, or every
// slot of every master of a Redis Cluster with CLUSTER GETKEYSINSLOT,
// probes each key in pipelines (TYPE, PTTL, MEMORY USAGE, element
// count, LFU counter, guard namespace, sampled field names) and feeds the
// records to package inventory, which classifies them against the registry
// and builds the report.
//
//	t := live.Target{Conn: opt, Cluster: true, Seeds: []string{"10.0.0.1:6379"}, Display: "redis://10.0.0.1:6379"}
//	res, err := live.Run(ctx, reg, t, live.Options{Rate: 20000})
//	err = res.Report.WriteJSON(os.Stdout) // res.Complete is false unless every key was counted once; Report.Coverage says what was
//
// Walk is the same walk for the other tools (investigate's key search,
// migrate): it hands batches of keys, each with a connection to its node,
// to the caller's Visit, and returns the coverage block (walk.go).
//
// # Safety
//
// The walker only reads: SCAN (never KEYS), TYPE, PTTL, MEMORY USAGE,
// STRLEN/HLEN/LLEN/SCARD/ZCARD/XLEN, OBJECT FREQ (when the eviction policy
// is LFU), HGET key __ns__ (guarded templates), HRANDFIELD and GETRANGE
// (a bounded sample of keys per template, for mixed-schema), INFO, SELECT,
// CLUSTER NODES and CLUSTER GETKEYSINSLOT, and CLIENT SETNAME / CLIENT NO-TOUCH (Redis 7.2+, so the audit
// does not refresh every key's LRU/LFU clock). docs/audit-acl.md has the
// exact ACL. A missing essential permission fails the run before it
// starts (PermissionError); a missing optional one turns its rule off with
// a note in the report.
//
// # Faults
//
// Every node (and database) is walked by its own goroutines with its own
// connections. A node that stops answering is retried for
// Options.RetryFor, then given up: its NodeStop in the report says why and
// the SCAN cursor (or the Cluster slots) to resume from; the other nodes
// finish. A server that restarts during its walk (a new run_id) stops it:
// SCAN cursors do not hold across a restart. A Cluster slot is counted
// whole on the node that serves it when its keys are listed; slots a
// failover, a migration or a lost node keep from being counted are walked
// again on their owner after the topology is read again (slots.go), or
// listed as not covered. Cancelling ctx (Ctrl-C, --timeout) stops
// every node at a batch boundary and still returns a report, with
// Complete false and a resume cursor per node (Options.Resume continues
// from them). Keys that vanish between SCAN and the probes are skipped
// and counted in a note.
//
// # Speed
//
// Per node one connection runs the SCAN and probe pipeline, one round trip
// per batch: the probes of batch n, the SCAN for batch n+1 among them (the
// last quarter of the probes after it), and the count stage of an earlier
// batch travel together. The prober writes the next pipeline as soon as
// SCAN's reply is read, while the server still works on the probes after
// it, and reads their replies afterwards, so the server does not wait for
// the client between round trips; it classifies the listed keys as it
// writes their probes, and the first 32 KiB go out before the rest is
// encoded. What the prober keeps of a template (the memory model's
// trust, the field names its values showed) is looked up once per key,
// and a Cluster node's CLUSTER NODES, read after every chunk of slots, is
// parsed again only when a field the check reads changed. A second
// goroutine hands the probed batches, in SCAN order, to the aggregation.
// The protocol is spoken directly (internal/resp).
// Options.Rate caps commands per second across all nodes with one token
// bucket.
//
// It imports inventory, the kernels (resp, jsonkeys, rdb, pace, progress),
// cli and redisconn; the tools that walk with it (investigate, migrate, hotkeys,
// dashboard) import it, never the reverse, and the SDK must not import it.
package live
