// Package investigate finds who overwrites whose key: it walks the chain an
// engineer walks by hand when data is silently overwritten — find every key
// around an entity ID, look at the values' field styles, read the slow log,
// watch the TTLs jump, capture the writers with a bounded MONITOR and map
// them to services with CLIENT LIST — and says what it found in a short
// narrative, with the fix the registry implies.
//
//	opts := investigate.Options{Target: investigate.Target{ID: "1001"}, Watch: 10 * time.Second, Monitor: 10 * time.Second}
//	rep, err := investigate.Run(ctx, reg, client, opts) // client: *redis.Client or *redis.ClusterClient
//	err = rep.WriteText(os.Stdout)                      // or WriteJSON; rep.Findings are the evidence
//
// The pure steps stand alone and are tested without a server: Attributor
// (writes to clients, scripts to their caller, MULTI blocks to their
// client) on lines parsed by internal/monitor, ParseClientList, the TTL
// analysis, the style grouping and the narrative. MONITOR runs on a
// connection of keyguard's own RESP client (internal/resp, over the
// client's network, credentials and TLS), bounded in time, lines and
// bytes, and closed on every path; it is never started unless
// Options.Monitor asks for it.
//
// It walks with live.Walk and reads MONITOR with package monitor; no other
// tool imports it, and the SDK must not.
package investigate
