package inventory

import (
	"sync"
	"sync/atomic"

	"golang.org/x/sys/cpu"
)

// findShare is the findings lists of a Pipeline's aggregators, one per
// rule, shared as the top and hot lists are (sharedList): each
// aggregator kept a list of 10,000 findings per rule of its own before,
// merged at the end, so that each list's threshold was its own half's
// n-th best, twice the entries were taken in and held (a 48-byte entry
// each, in memory written once: on a machine whose page faults are dear,
// a tenth of the audit's CPU was these lists), and the merge took n more.
// The findings an aggregator counts stay its own; the lists are shared.
type findShare struct {
	mu    sync.Mutex
	n     int
	lists map[string]*sharedFinds // by rule ID, made by the first aggregator that needs one
}

// sharedFinds is one rule's shared list. As in sharedList, bar (read
// for every finding offered) has a cache line of its own.
type sharedFinds struct {
	_    cpu.CacheLinePad
	bar  atomic.Pointer[listBar]
	_    cpu.CacheLinePad
	mu   sync.Mutex
	list findTop // under mu
	_    cpu.CacheLinePad
}

// list returns rule id's shared list, made if needed.
func (f *findShare) list(id string) *sharedFinds {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.lists[id]
	if s == nil {
		s = &sharedFinds{list: newFindTop(f.n)}
		f.lists[id] = s
	}
	return s
}

// findFeed is one aggregator's way into a rule's shared list: the
// findings it took in since it last pushed them, with their texts.
type findFeed struct {
	s    *sharedFinds
	ents []fentry
	dets []findDetail
}

// admits reports whether a finding of this score, for a key named ck,
// may beat the list's threshold, and the key's hash; a finding below the
// bar's score is turned away before the name is hashed (as
// listFeed.admits).
func (f *findFeed) admits(score int64, ck string) (uint64, bool) {
	return f.s.bar.Load().admits(score, ck)
}

// add takes e, with its texts d, in, and pushes the feed when it is full.
func (f *findFeed) add(e fentry, d findDetail) {
	f.ents = append(f.ents, e)
	f.dets = append(f.dets, d)
	if len(f.ents) >= feedAt {
		f.flush(len(f.ents) >= 16*feedAt)
	}
}

// flush pushes the feed's findings into the list, if the list is free
// or wait is set (then once it is).
func (f *findFeed) flush(wait bool) {
	if len(f.ents) == 0 {
		return
	}
	if !f.s.mu.TryLock() {
		if !wait {
			return
		}
		f.s.mu.Lock()
	}
	l := &f.s.list
	for i := range f.ents {
		l.push(f.ents[i], f.dets[i])
	}
	if l.cut {
		t := &l.thresh
		if b := f.s.bar.Load(); b == nil || b.score != t.score || b.hash != t.hash {
			f.s.bar.Store(&listBar{t.score, t.hash})
		}
	}
	f.s.mu.Unlock()
	clear(f.ents) // they hold keys and texts
	clear(f.dets)
	f.ents, f.dets = f.ents[:0], f.dets[:0]
}

// shareFindings gives the aggregators of a pipeline shared findings
// lists (takeFindings hands them back to the first).
func shareFindings(aggs []*Aggregator) {
	if len(aggs) < 2 {
		return
	}
	s := &findShare{n: aggs[0].opts.MaxFindings, lists: map[string]*sharedFinds{}}
	for _, a := range aggs {
		a.finds = s
		for id, rs := range a.rules {
			rs.feed = newFindFeed(s.list(id))
		}
	}
}

func newFindFeed(s *sharedFinds) *findFeed { return &findFeed{s: s} }

// takeFindings pushes every aggregator's feeds, and the findings any of
// them kept in a list of its own, into the shared lists, and makes those
// the first aggregator's: the others' lists are left empty, so that
// Merge adds their counts and nothing of their lists.
func takeFindings(aggs []*Aggregator) {
	if len(aggs) < 2 || aggs[0].finds == nil {
		return
	}
	share := aggs[0].finds
	for _, a := range aggs {
		for _, rs := range a.rules {
			if rs.feed != nil {
				rs.feed.flush(true)
			}
		}
		a.finds = nil
	}
	for _, a := range aggs {
		for id, rs := range a.rules {
			if rs.feed == nil {
				continue
			}
			rs.feed = nil
			if ents := rs.kept.kept(); len(ents) > 0 {
				// Kept before the lists were shared (a carried report).
				l := &share.lists[id].list
				for i := range ents {
					l.push(ents[i], rs.kept.details[ents[i].detail])
				}
			}
			rs.kept = newFindTop(a.opts.MaxFindings)
		}
	}
	first := aggs[0]
	for id, s := range share.lists {
		first.rule(id).kept = s.list
	}
}
