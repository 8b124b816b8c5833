// Package snapshot is the audit of RDB snapshots: it decodes files
// (several: the shards of one Cluster) with package rdb, classifies each
// key once, and feeds the same aggregation pipeline as the live audit, so
// both give the same report. It also runs the commands that read reports
// rather than Redis: keyguard rdb, diff (Diff) and merge (Merge). It must
// not be imported by the SDK, and talks to no Redis.
//
//	ins, err := snapshot.Open([]string{"dump.rdb"}, os.Stdin)
//	defer snapshot.Close(ins)
//	res, err := snapshot.Run(ctx, reg, ins, snapshot.Options{DB: -1})
package snapshot
