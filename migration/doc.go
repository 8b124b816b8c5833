// Package migration checks a rename of keys from one registered template to
// another and maps each old key to its new key. It is pure (no Redis), so
// a service's dual writes (package dualwrite) and the migrate command's
// copy, verify and cleanup jobs share one plan.
//
//	p, err := migration.NewPlan(reg, "promo:sku:{skuId:int}", "order:sku:{skuId:int}:settle-preview", migration.PlanOptions{})
//	newKey, ok, err := p.Map("promo:sku:1001") // "order:sku:1001:settle-preview"
//
// It imports the registry and the key templates only; never a Redis
// client, nor a tool package.
package migration
