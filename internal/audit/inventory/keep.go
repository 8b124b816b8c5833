package inventory

import (
	"math"
	"strings"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/audit/report"
)

// ruleState is a rule's findings: how many, and the best MaxFindings.
type ruleState struct {
	count [3]int64 // by finding.Severity
	kept  findTop
	feed  *findFeed // while a pipeline's aggregators share the lists (shareFindings): the way into them
}

// keep counts a finding and keeps it when it ranks among the rule's top
// MaxFindings (by key bytes, then key).
func (a *Aggregator) keep(f *finding.Finding, r *Record, g *group) {
	g.findings++
	sev := min(f.Severity, finding.Error)
	a.t.sev[sev]++
	rs := a.rule(f.Rule)
	rs.count[sev]++
	if g.entry == nil {
		f.Template, f.Owner = g.name, g.owner // the family, not the (maybe long) inferred text
	}
	score, ck := r.Bytes, clip(r.Key, maxKeepKey)
	var hash uint64
	if rs.feed != nil {
		var ok bool
		if hash, ok = rs.feed.admits(score, ck); !ok {
			return
		}
	} else {
		if rs.kept.cut && score < rs.kept.thresh.score {
			return // the common case once the cap is reached: no hash needed
		}
		if hash = keyHash(ck); !rs.kept.admits(score, hash, ck) {
			return
		}
	}
	e := fentry{score: score, hash: hash, key: a.retainedKey(), keyLen: keyLen32(len(r.Key)), db: int32(r.DB), sev: sev}
	d := findDetail{template: clip(f.Template, maxGroupName), owner: f.Owner, message: clipText(f.Message), hint: clipText(f.Hint)}
	if f.Rule == finding.TTLMismatch && a.ttlArg.sec != 0 {
		e.setTTLSec(a.ttlArg.sec)
		d.tail = a.ttlArg.tail
	}
	if rs.feed != nil {
		rs.feed.add(e, d)
	} else {
		rs.kept.push(e, d)
	}
}

func keyLen32(n int) int32 { return int32(min(n, math.MaxInt32)) }

func (a *Aggregator) rule(id string) *ruleState {
	// The rule IDs are a few constants: a short list of the last ones
	// used answers without hashing the ID.
	for i := range a.recent {
		if r := &a.recent[i]; r.rs != nil && r.id == id {
			return r.rs
		}
	}
	rs := a.rules[id]
	if rs == nil {
		rs = &ruleState{kept: newFindTop(a.opts.MaxFindings)}
		if a.finds != nil {
			rs.feed = newFindFeed(a.finds.list(id))
		}
		a.rules[id] = rs
	}
	copy(a.recent[1:], a.recent[:])
	a.recent[0] = recentRule{id, rs}
	return rs
}

type recentRule struct {
	id string
	rs *ruleState
}

// retainedKey is the current record's key, cut and copied once, so that a
// kept key does not pin the walker's buffers.
func (a *Aggregator) retainedKey() string {
	if !a.keptKey {
		a.keepKey = strings.Clone(clip(a.rec.Key, maxKeepKey))
		a.keptKey = true
	}
	return a.keepKey
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func clipText(s string) string {
	if len(s) > maxKeepText {
		return strings.Clone(s[:maxKeepText]) + "…"
	}
	return s
}

// offerTop offers r to the top keys. Once the list is full, most keys
// rank below its root and are turned away before anything is copied.
func (a *Aggregator) offerTop(r *Record, g *group) {
	ck := clip(r.Key, maxKeepKey)
	var hash uint64
	var ok bool
	if a.topIn != nil {
		hash, ok = a.topIn.admits(r.Bytes, ck)
	} else {
		hash, ok = beats(&a.top, r.Bytes, ck)
	}
	if !ok {
		return
	}
	k := listKey{score: r.Bytes, hash: hash, keyLen: keyLen32(len(r.Key)), db: int32(r.DB)}
	v := topVal{elements: r.Elements, ttl: r.TTL, det: a.topDet.of(r.Type, clip(g.name, maxGroupName), r.Node)}
	if a.topIn != nil {
		a.topIn.add(k, ck, v)
	} else {
		a.top.push(k, ck, v)
	}
}

// offerHot offers a key to the hot list. A key whose counter is below
// the floor never becomes a hot-key finding, here or in a merge (its
// counter is its own), so it is not offered: in a keyspace that is
// mostly cold (every key starts at the server's LFU_INIT_VAL, 5) a list
// of --hot 100000 would otherwise be filled and settled with cold keys.
func (a *Aggregator) offerHot(r *Record, g *group) {
	if r.Freq < a.opts.HotFreqFloor {
		return
	}
	ck := clip(r.Key, maxKeepKey)
	var hash uint64
	var ok bool
	if a.hotIn != nil {
		hash, ok = a.hotIn.admits(int64(r.Freq), ck)
	} else {
		hash, ok = beats(&a.hot, int64(r.Freq), ck)
	}
	if !ok {
		return
	}
	k := listKey{score: int64(r.Freq), hash: hash, keyLen: keyLen32(len(r.Key)), db: int32(r.DB)}
	v := hotVal{bytes: r.Bytes, template: g.name, owner: g.owner, kind: g.kind, protected: g.entry != nil && g.entry.Hot != nil,
		node: a.retainedNode(r.Node)}
	if a.hotIn != nil {
		a.hotIn.add(k, ck, v)
	} else {
		a.hot.push(k, ck, v)
	}
}

// beats reports whether a key named ck of this score may beat the list's
// threshold, and its hash; a key below the threshold's score is turned
// away before its name is hashed. A key of the threshold's name is let
// through (push decides by database, and between two offers of one key).
func beats[V any](h *topBuf[V], score int64, ck string) (uint64, bool) {
	if !h.full() {
		return keyHash(ck), true
	}
	root, name := h.root()
	if score < root.score {
		return 0, false
	}
	hash := keyHash(ck)
	return hash, !findWorse(score, hash, ck, root.score, root.hash, name)
}

// retainedNode is a kept copy of a node's name, copied once per node: the
// records of a walk come from a few nodes, and a long top list kept a copy
// per key.
func (a *Aggregator) retainedNode(n string) string {
	if n != a.lastNode {
		a.lastNode = strings.Clone(n)
	}
	return a.lastNode
}

// retainType returns a kept copy of a type name: the known names are
// constants, others (module type names) are copied.
func retainType(t string) string {
	if i := typeIndex(t); i != typeModule && i != typeUnknown {
		return report.TypeNames[i]
	}
	return strings.Clone(t)
}
