// Package migrate moves keys from one registered template to another
// without losing data: a migration.Plan (old captures → new key), then Copy,
// Verify and Cleanup on a live Redis or every master of a Redis Cluster.
//
//	p, err := migrate.NewPlan(reg, "promo:sku:{skuId:int}", "order:sku:{skuId:int}:settle-preview", migrate.PlanOptions{})
//	res, err := p.Copy(ctx, rdb, migrate.Options{CursorFile: "copy.cursor", Rate: 5000})
//	res, err = p.Verify(ctx, rdb, migrate.Options{}) // res.Mismatches; then p.Cleanup
//
// Copy never overwrites a new key that exists (a dual-writing service may
// have newer data there, see package dualwrite) unless Options.Overwrite,
// and the check is atomic with the write: COPY on one node, a RESTORE
// script on another. Expiries are copied as absolute deadlines (COPY, or
// PEXPIRETIME then RESTORE … ABSTTL), so old and new keys expire together.
// Copy and Cleanup resume from a cursor file; every run is rate-limited
// and can be a dry run. docs/migrate.md is the user's guide.
//
// It imports the SDK's migration.Plan and the audit's walker (live.Walk);
// the SDK must not import it (dualwrite shares only package migration).
package migrate
