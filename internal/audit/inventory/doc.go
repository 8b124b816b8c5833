// Package inventory turns classified per-key records, from a live SCAN
// (package audit) or an RDB file (package snapshot), into the audit
// report: groups per template and database and per inferred family of
// unregistered keys, top keys, and the findings of every key rule.
//
//	p := inventory.NewPipeline(reg, inventory.Options{}, 2)
//	cls := p.Classifier()                              // one per walker goroutine
//	p.Add(recs, classes, done)                         // classes[i] = cls.Classify(recs[i].Key)
//	rep := p.Close().Report(report.Meta{Complete: true})
//
// A key is classified once (Classifier, Class): its template or inferred
// family, whether to read the guard's __ns__, whether to read its field
// names. Add takes the record with its class; nothing asks again. A
// walker that holds every value anyway (an RDB decoder) reads all a
// class could ask for and sends the records unclassified (AddRead): the
// aggregators classify them.
//
// Memory does not grow with the number of keys: counters per group (at
// most Options.MaxGroups families, the rest in "(other)"), TTL quantiles
// from log buckets (p50 within 12.5%; min and max exact), capped lists of
// findings, top and hot keys, and per template a census of its values'
// field sets (at most 64 sets, the keys of rare sets kept up to 100,000 in
// all). Kept key names are cut at 1 KiB. Everything kept is a copy.
//
// Whatever the arrival order, the same records give the same report:
// capped lists keep the best ranked (findings by bytes, then a fixed hash
// of the key, so that among equal sizes the list is an even sample of a
// family), censuses and histograms add up, and Merge of aggregators gives
// what one would have given. Two offers of one key at one size keep the
// one that ranks first by what it carries, not the first to come. A
// Pipeline's aggregators share one top list and one hot list (each
// feeds it through a small buffer of its own, under the list's lock), so
// a long list is kept once, not once per aggregator and merged. The
// report's State carries all of it, so FromReport and MergeReports
// continue or combine reports.
//
// Rules decided here besides the name rules of registry.Checker: no-ttl,
// ttl-mismatch, type-mismatch, big-key, guard/ownerless,
// guard/foreign-owner, and at report time hot-key (LFU counters),
// mixed-schema and schema (schema.go: styles declared or learned per
// template, and the other owner's template whose fields a value holds).
// docs/rules.md describes each.
//
// It is pure (no network, no Redis client) and imports only package report
// and what report imports: the walkers (live, snapshot) feed it, it never
// imports them. The SDK must not import it.
package inventory
