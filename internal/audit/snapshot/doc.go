// Package snapshot is the audit of RDB snapshots: it decodes files
// (several: the shards of one Cluster) with package rdb, classifies each
// key once, and feeds the same aggregation pipeline as the live audit, so
// both give the same report.
//
//	ins, err := snapshot.Open([]string{"dump.rdb"}, os.Stdin)
//	defer snapshot.Close(ins)
//	res, err := snapshot.Run(ctx, reg, ins, snapshot.Options{DB: -1})
package snapshot
