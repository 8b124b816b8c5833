// Package inventory turns a stream of per-key records — from a live SCAN
// (package audit) or an RDB file (package rdb) — into the audit report of
// SPEC §5: groups per registry template and per inferred family of
// unregistered keys, top keys by memory, findings for every key rule of
// SPEC §3 except the code rules, and text, JSON, CSV and HTML renderings.
//
//	agg := inventory.New(reg, inventory.Options{})
//	for r := range records { agg.Add(r) }            // one goroutine; Merge per-node aggregators
//	rep := agg.Report(report.Meta{Source: report.Source{Kind: "redis", Target: url, Nodes: 1}, Complete: true})
//
// # Memory
//
// Memory does not grow with the number of keys: counters live per registry
// template and per inferred family (at most Options.MaxGroups families; the
// rest are counted in one group named "(other)" and the report says so),
// TTL quantiles come from a fixed log-bucket histogram per group (p50 is
// approximate, within 12.5%; min and max are exact), top keys, hot keys and
// findings are bounded lists, and mixed-schema works from a bounded sample
// of field names per template (NeedsFields remembers at most 4,096 keys it
// asked for until they are added). Retained key names are cut at 1 KiB (the
// report then carries key_len). Everything kept is a copy: a walker may
// hand out keys and names that are slices of its own larger buffers.
//
// A walker that looks keys up in the registry itself (to answer NeedsNS
// on its own goroutine) passes the Entry to NeedsFieldsEntry and AddEntry,
// so that each key is matched against the templates once.
//
// # Determinism
//
// Whatever the arrival order, the same records give the same report:
// capped lists keep the largest keys (findings: by bytes, then by a fixed
// hash of the key, so that among the many equal-sized keys of a family the
// list is an even sample rather than the keys that sort first; hot keys:
// by LFU counter; the report lists what was kept by bytes, then key), the
// field-name sample is a bottom-k sample by a
// fixed hash of the key, and TTL histograms add up. So Merge of per-node
// aggregators gives the report one aggregator would have given (as long as
// the inferred-family cap was not reached).
//
// # Groups
//
// Registered keys are grouped by template (kind "template"). Unregistered
// keys are grouped by the template naming.Infer derives from them (kind
// "prefix", the SPEC §5 word; the name is the inferred template, e.g.
// "user_{id:int}_token"), ranked by memory, each with a registry entry to
// paste (Group.Suggested).
//
// # Rules decided here
//
// Name rules (unregistered, domain, naming/*, pii) come from
// registry.Checker. Then, with the matched entry: no-ttl (error for a
// template that declares a TTL; warning for unregistered keys when the
// policy requires TTLs), ttl-mismatch (remaining TTL above ttl+ttl_jitter
// plus 1 s and 1%: an error, someone else set it; or any TTL on a
// persistent template: a warning), type-mismatch, big-key (policy bytes or
// elements), guard/ownerless and guard/foreign-owner (from the probed
// __ns__ field; a namespace belongs to a service when it equals the
// service's name or starts with "name:"), and at Report time hot-key (the
// Options.HotKeys highest LFU counters at or above Options.HotFreqFloor)
// and mixed-schema (field names of a bounded random sample of keys per
// hash or string template are clustered by co-occurrence into writer
// styles; a key holding two established styles is reported — details in
// schema.go).
//
// When a rule's list is capped, the largest keys are kept and the report
// says how many were left out (findings_omitted); Summary.ByRule counts
// all.
//
// # Duplicates
//
// Records are counted as given: a key given twice counts twice in the
// totals, groups and Summary.ByRule, while the lists (findings, top keys,
// hot keys, field samples) hold it once. An RDB file holds each key once,
// but SCAN may return a key twice when the node's key table shrinks during
// the walk, and the live walker cannot remember every key it saw in
// bounded memory: it tells a shrink from the SCAN cursors and the report
// then says in a note that a few keys may be counted twice. Walkers skip
// keys that vanished between SCAN and the probes (package audit counts
// them in a note) or had expired when the snapshot was taken (package rdb).
//
// # Field samples
//
// NeedsFields asks the walker for field names only as far as the bounded
// sample needs them, and stops asking for a template or family whose
// values hold none (plain strings, counters): see its documentation.
package inventory
