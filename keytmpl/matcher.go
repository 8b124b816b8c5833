package keytmpl

import (
	"cmp"
	"container/heap"
	"slices"
)

// Matcher classifies concrete keys against a fixed set of templates. It is
// a trie of segments: literal segments are looked up in a map, segments
// with placeholders are tried through their automata, and identical
// segments of different templates share one edge. Lookup time depends on
// the key and on how many templates could match it, not on how many
// templates there are.
//
// When several templates match a key the most specific wins: a template
// whose keys are a subset of another's ranks before it; otherwise earlier
// segments that are literal beat typed placeholders, which beat {any};
// remaining ties go to the template listed first.
type Matcher struct {
	sep       byte
	root      *node
	templates []*Template
	rankOf    []int32 // template index → rank
	byRank    []int32 // rank → template index
	overlaps  []Overlap
}

// Overlap is a pair of templates that share at least one key.
type Overlap struct {
	A, B        int // template indexes, A < B
	Explanation Explanation
}

type node struct {
	// Literal children: a node with one literal child keeps it inline, which
	// saves a map probe on the common "entity:{id}:attr" chains.
	lit1    string
	lit1c   *node
	lits    map[string]*node // while building; then table, or lit1 when alone
	table   litTable
	pats    []patEdge
	term    []int32 // templates ending here
	best    int32   // lowest rank among term, or noRank
	minRank int32   // lowest rank in this subtree
}

type patEdge struct {
	canon string
	d     *dfa
	child *node
}

const noRank = int32(1<<31 - 1)

// Compile builds a matcher. All templates must share one separator.
func Compile(ts []*Template) *Matcher {
	m := &Matcher{root: newNode(), templates: ts}
	if len(ts) > 0 {
		m.sep = ts[0].sep
	}
	// Segments with the same language share one automaton, so the common
	// ones ({id:int}, {x}) stay in cache however many templates use them.
	dfas := map[string]*dfa{}
	for i, t := range ts {
		n := m.root
		for si := range t.segments {
			s := &t.segments[si]
			d := dfas[s.canon]
			if d == nil {
				d = s.dfa
				dfas[s.canon] = d
			}
			n = n.child(s, d)
		}
		n.term = append(n.term, int32(i))
	}
	m.inline(m.root)
	m.overlaps = m.findOverlaps()
	m.rank()
	m.fill(m.root)
	return m
}

func newNode() *node { return &node{best: noRank, minRank: noRank} }

func (n *node) child(s *Segment, d *dfa) *node {
	if lit, ok := s.Literal(); ok {
		if n.lits == nil {
			n.lits = map[string]*node{}
		}
		c := n.lits[lit]
		if c == nil {
			c = newNode()
			n.lits[lit] = c
		}
		return c
	}
	for _, e := range n.pats {
		if e.canon == s.canon {
			return e.child
		}
	}
	c := newNode()
	n.pats = append(n.pats, patEdge{canon: s.canon, d: d, child: c})
	return c
}

// inline freezes the literal children: kept inline when alone, otherwise
// moved into a litTable.
func (m *Matcher) inline(n *node) {
	for _, c := range n.lits {
		m.inline(c)
	}
	for _, e := range n.pats {
		m.inline(e.child)
	}
	if len(n.lits) == 1 {
		for k, c := range n.lits {
			n.lit1, n.lit1c = k, c
		}
	} else if len(n.lits) > 1 {
		n.table = newLitTable(n.lits)
	}
	n.lits = nil
}

// litTable is an open-addressing table of a node's literal children. It
// beats a Go map here because the keys are short and known up front: one
// FNV-1a pass, then usually one slot compared.
type litTable struct {
	mask  uint32
	slots []litSlot
}

type litSlot struct {
	h     uint32
	lit   string
	child *node // nil: empty slot
}

func newLitTable(lits map[string]*node) litTable {
	size := uint32(4)
	for size < uint32(2*len(lits)) {
		size <<= 1
	}
	t := litTable{mask: size - 1, slots: make([]litSlot, size)}
	for lit, c := range lits {
		h := litHash(lit)
		i := h & t.mask
		for t.slots[i].child != nil {
			i = (i + 1) & t.mask
		}
		t.slots[i] = litSlot{h: h, lit: lit, child: c}
	}
	return t
}

func (t *litTable) get(seg string) *node {
	if t.slots == nil {
		return nil
	}
	h := litHash(seg)
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		s := &t.slots[i]
		if s.child == nil {
			return nil
		}
		if s.h == h && s.lit == seg {
			return s.child
		}
	}
}

func litHash(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

// litChild returns the child for a literal segment.
func (n *node) litChild(seg string) *node {
	if n.lit1c != nil {
		if n.lit1 == seg {
			return n.lit1c
		}
		return nil
	}
	return n.table.get(seg)
}

// eachLit calls fn for every literal child.
func (n *node) eachLit(fn func(lit string, c *node)) {
	if n.lit1c != nil {
		fn(n.lit1, n.lit1c)
	}
	for _, sl := range n.table.slots {
		if sl.child != nil {
			fn(sl.lit, sl.child)
		}
	}
}

// Templates returns the templates in the order given to Compile.
func (m *Matcher) Templates() []*Template { return m.templates }

// Overlaps returns every pair of templates that share a key, with an
// explanation and witness keys.
func (m *Matcher) Overlaps() []Overlap { return m.overlaps }

// Lookup returns the index of the most specific template matching key, or
// -1. It does not allocate. Keys may hold any bytes.
func (m *Matcher) Lookup(key string) int {
	best := noRank
	m.walk(m.root, key, &best)
	if best == noRank {
		return -1
	}
	return int(m.byRank[best])
}

func (m *Matcher) walk(n *node, key string, best *int32) {
	seg, rest, last := cutSep(key, m.sep)
	if c := n.litChild(seg); c != nil {
		m.step(c, rest, last, best)
	}
	for i := range n.pats {
		e := &n.pats[i]
		if e.child.minRank < *best && e.d.match(seg) {
			m.step(e.child, rest, last, best)
		}
	}
}

func (m *Matcher) step(c *node, rest string, last bool, best *int32) {
	if last {
		if c.best < *best {
			*best = c.best
		}
		return
	}
	if c.minRank < *best {
		m.walk(c, rest, best)
	}
}

// fill computes best and minRank bottom up and orders pattern edges so the
// most promising subtree is searched first.
func (m *Matcher) fill(n *node) int32 {
	for _, t := range n.term {
		n.best = min(n.best, m.rankOf[t])
	}
	n.minRank = n.best
	n.eachLit(func(_ string, c *node) { n.minRank = min(n.minRank, m.fill(c)) })
	for _, e := range n.pats {
		n.minRank = min(n.minRank, m.fill(e.child))
	}
	slices.SortStableFunc(n.pats, func(a, b patEdge) int { return cmp.Compare(a.child.minRank, b.child.minRank) })
	return n.minRank
}

// segmentScore orders segments from most to least specific.
func segmentScore(s *Segment) int {
	if _, ok := s.Literal(); ok {
		return 4
	}
	score := 0
	for _, p := range s.Parts {
		switch {
		case !p.IsPlaceholder():
			return 3
		case p.Kind == Any:
		case p.Kind == Int || p.Kind == Hex:
			score = max(score, 1)
		default:
			score = max(score, 2)
		}
	}
	return score
}

// rank orders templates: strict subsets first (a topological order of the
// "more specific than" pairs), ties by segment scores from the left, then
// by position in the list.
func (m *Matcher) rank() {
	n := len(m.templates)
	scores := make([][]int, n)
	for i, t := range m.templates {
		for si := range t.segments {
			scores[i] = append(scores[i], segmentScore(&t.segments[si]))
		}
	}
	prefer := func(a, b int32) bool { // a before b, without subset knowledge
		if c := slices.Compare(scores[a], scores[b]); c != 0 {
			return c > 0
		}
		return a < b
	}
	after := make([][]int32, n) // edges: more specific → more general
	indeg := make([]int, n)
	for _, o := range m.overlaps {
		switch o.Explanation.Relation {
		case MoreSpecific:
			after[o.A] = append(after[o.A], int32(o.B))
			indeg[o.B]++
		case MoreGeneral:
			after[o.B] = append(after[o.B], int32(o.A))
			indeg[o.A]++
		}
	}
	h := &rankHeap{less: prefer}
	for i := range n {
		if indeg[i] == 0 {
			h.items = append(h.items, int32(i))
		}
	}
	heap.Init(h)
	m.rankOf = make([]int32, n)
	m.byRank = make([]int32, 0, n)
	for h.Len() > 0 {
		t := heap.Pop(h).(int32)
		m.rankOf[t] = int32(len(m.byRank))
		m.byRank = append(m.byRank, t)
		for _, u := range after[t] {
			if indeg[u]--; indeg[u] == 0 {
				heap.Push(h, u)
			}
		}
	}
}

type rankHeap struct {
	items []int32
	less  func(a, b int32) bool
}

func (h *rankHeap) Len() int           { return len(h.items) }
func (h *rankHeap) Less(i, j int) bool { return h.less(h.items[i], h.items[j]) }
func (h *rankHeap) Swap(i, j int)      { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *rankHeap) Push(x any)         { h.items = append(h.items, x.(int32)) }
func (h *rankHeap) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}

// findOverlaps walks the trie once per template, following every edge
// whose segment language meets the template's segment, so only templates
// that can share a key are compared.
func (m *Matcher) findOverlaps() []Overlap {
	var out []Overlap
	cache := map[[2]*dfa]bool{}
	meets := func(a, b *dfa) bool {
		k := [2]*dfa{a, b}
		if v, ok := cache[k]; ok {
			return v
		}
		_, ok := intersect(a, b, m.sep)
		cache[k] = ok
		return ok
	}
	for i, t := range m.templates {
		var found []int32
		var walk func(n *node, depth int)
		walk = func(n *node, depth int) {
			if depth == len(t.segments) {
				for _, j := range n.term {
					if int(j) > i {
						found = append(found, j)
					}
				}
				return
			}
			s := &t.segments[depth]
			if lit, ok := s.Literal(); ok {
				if c := n.litChild(lit); c != nil {
					walk(c, depth+1)
				}
				for _, e := range n.pats {
					if e.d.match(lit) {
						walk(e.child, depth+1)
					}
				}
				return
			}
			n.eachLit(func(lit string, c *node) {
				if s.dfa.match(lit) {
					walk(c, depth+1)
				}
			})
			for _, e := range n.pats {
				if e.canon == s.canon || meets(s.dfa, e.d) {
					walk(e.child, depth+1)
				}
			}
		}
		walk(m.root, 0)
		slices.Sort(found)
		for _, j := range slices.Compact(found) {
			e := Relate(t, m.templates[j])
			if e.Relation != Disjoint {
				out = append(out, Overlap{A: i, B: int(j), Explanation: e})
			}
		}
	}
	return out
}
