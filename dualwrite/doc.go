// Package dualwrite is the service side of a key migration (package
// migrate): a Writer that writes the old and the new key together, with
// one TTL, in one round trip, and a Reader that reads the new key first and
// falls back to the old one, for a share of the keys that only grows.
//
//	plan, err := migration.NewPlan(reg, "promo:sku:{skuId:int}", "order:sku:{skuId:int}:settle-preview", migration.PlanOptions{})
//	w, err := dualwrite.NewWriter(rdb, plan, dualwrite.Options{Registerer: prometheus.DefaultRegisterer})
//	_, err = w.Replace(ctx, "promo:sku:1001", func(p redis.Pipeliner, key string) { p.HSet(ctx, key, "promoTotal", 30) })
//
// The order of a migration: deploy the Writer (both keys written), run
// keyguard migrate copy (old keys the writer has not touched), raise the
// Reader's percentage while keyguard_migrate_reads_total{result="fallback"}
// falls to zero, run keyguard migrate verify, then cleanup after a full
// business cycle. docs/migrate.md has the whole procedure.
//
// Replace writes whole values; Update writes increments and seeds a
// missing new key from the old one in the same transaction, which needs
// both keys in one Cluster slot. Metrics carry the two templates as
// labels, never keys.
//
// It is part of the SDK: it imports package migration (the Plan it shares
// with keyguard migrate) and internal/keyslot, never a tool under internal/
// (internal/layers holds the rule).
package dualwrite
