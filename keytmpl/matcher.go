package keytmpl

import (
	"cmp"
	"container/heap"
	"maps"
	"math/bits"
	"slices"

	"github.com/keyguard/keyguard/internal/swar"
)

// Matcher classifies concrete keys against a fixed set of templates. It is
// a trie of segments: literal segments are looked up in a hash table,
// segments with placeholders are tried through their automata, and
// identical segments of different templates share one edge. Lookup time
// depends on the key and on how many templates could match it, not on how
// many templates there are.
//
// When several templates match a key the most specific wins: a template
// whose keys are a subset of another's ranks before it; otherwise earlier
// segments that are literal beat typed placeholders, which beat {any};
// remaining ties go to the template listed first.
type Matcher struct {
	sep       byte
	templates []*Template
	rankOf    []int32 // template index → rank
	byRank    []int32 // rank → template index
	overlaps  []Overlap

	// The trie, flattened for Lookup (see flatten): nodes are numbers, the
	// root is 0, and only the automata hold pointers.
	root  target    // the walk starts here
	slots []litSlot // every literal edge in one open-addressing table
	shift uint      // slot index = hash >> shift
	pats  []patEdge // pattern edges, grouped by parent node
	runs  []run     // one automaton per distinct segment language
	arena string    // literal bytes past the first 8, all edges
}

// Overlap is a pair of templates that share at least one key.
type Overlap struct {
	A, B        int // template indexes, A < B
	Explanation Explanation
}

// node is the trie while Compile builds it; flatten turns it into arrays.
type node struct {
	lits    map[string]*node
	pats    []patBuild
	term    []int32 // templates ending here
	best    int32   // lowest rank among term, or noRank
	minRank int32   // lowest rank in this subtree
	id      uint32  // after flatten
}

type patBuild struct {
	canon string
	d     *dfa
	child *node
}

const noRank = int32(1<<31 - 1)

// Compile builds a matcher. All templates must share one separator.
func Compile(ts []*Template) *Matcher {
	m := &Matcher{templates: ts}
	root := newNode()
	if len(ts) > 0 {
		m.sep = ts[0].sep
	}
	// Segments with the same language share one automaton, so the common
	// ones ({id:int}, {x}) stay in cache however many templates use them.
	dfas := map[string]*dfa{}
	for i, t := range ts {
		n := root
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
	m.overlaps = m.findOverlaps(root)
	m.rank()
	m.fill(root)
	m.flatten(root)
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
	n.pats = append(n.pats, patBuild{canon: s.canon, d: d, child: c})
	return c
}

// Templates returns the templates in the order given to Compile.
func (m *Matcher) Templates() []*Template { return m.templates }

// Overlaps returns every pair of templates that share a key, with an
// explanation and witness keys.
func (m *Matcher) Overlaps() []Overlap { return m.overlaps }

// The flattened trie. Lookup reads about one cache line per segment of
// the key: the slot of a literal edge (all literal edges are in one
// open-addressing table keyed by parent and segment) or a pattern edge
// (the pattern edges of a node are consecutive in one array). Either
// carries a target: what the walk needs of the child, so the child itself
// is never read. A child whose subtree is a single chain ending in a
// template (as in "entity:{id:int}:attr" below "entity") carries the
// chain as a tail, and the rest of the key is checked against it without
// reading anything else. Literals of up to 8 bytes are compared inside
// the slot or the tail.

// target is what the walk needs to know of a node.
type target struct {
	child   uint32 // node number; 0 is the root
	best    int32  // lowest rank of the templates ending here, or noRank
	minRank int32  // lowest rank in the subtree
	pats    uint32 // 1 + index in Matcher.pats of the first pattern edge; 0: none
	lens    uint32 // bit min(len, 31) set for the length of every literal child
	off     uint32 // in a slot of a literal over 8 bytes: its bytes past 8 in Matcher.arena
	tail    tail
}

// tail is a chain of up to four segments, at most two literal (of up to
// 8 bytes) and two patterns, ending in a template of rank minRank.
type tail struct {
	ops  [4]uint8 // 0: end; 1..9: literal of length op-1; patOp: pattern
	runs [2]uint16
	lits [2]uint64 // little-endian, zero padded
}

const patOp = 10

// litSlot is a literal edge; 64 bytes, one cache line.
type litSlot struct {
	word   uint64 // the literal's first 8 bytes, little-endian, zero padded
	parent uint32
	n      uint32 // literal length
	target        // target.child == 0: empty slot (the root is no one's child)
}

// patEdge is a pattern edge; the edges of a node are consecutive, in
// order of minRank, the last has more == false.
type patEdge struct {
	run  uint16 // index in Matcher.runs
	more bool
	target
}

// run is a dfa laid out for matching: byte classes in one byte, states
// premultiplied by the number of classes. A state that loops on a set of
// bytes (the digits of {id:int}, any byte of {x}) skips a run of them
// with independent table reads instead of one dependent transition each.
type run struct {
	class  [256]uint8
	next   []int32
	accept []bool  // indexed by premultiplied state
	loop   []*loop // indexed by premultiplied state: bytes that stay in it
	dead   int32
}

type loop struct {
	set  [256]bool
	kind uint8 // loopAll, loopDigits or 0
}

const (
	loopAll = 1 + iota
	loopDigits
)

func newRun(d *dfa) run {
	n := len(d.next)
	r := run{next: make([]int32, n), accept: make([]bool, n), loop: make([]*loop, n), dead: deadState * int32(d.ncls)}
	for b, c := range d.class {
		r.class[b] = uint8(c) // at most 256 classes
	}
	for i, s := range d.next {
		r.next[i] = s * int32(d.ncls)
	}
	for s, a := range d.accept {
		r.accept[s*d.ncls] = a
	}
	for s := range d.accept {
		if s == deadState {
			continue
		}
		var l loop
		var set bset
		for b, c := range d.class {
			if d.next[s*d.ncls+int(c)] == int32(s) {
				l.set[b] = true
				set.add(byte(b))
			}
		}
		switch set {
		case bset{}:
			continue
		case allBytes:
			l.kind = loopAll
		case digits:
			l.kind = loopDigits
		}
		r.loop[s*d.ncls] = &l
	}
	return r
}

func (r *run) match(s string) bool {
	st := int32(0)
	for i := 0; i < len(s); {
		st = r.next[st+int32(r.class[s[i]])]
		i++
		if st == r.dead {
			return false
		}
		if l := r.loop[st]; l != nil {
			switch l.kind {
			case loopAll: // a segment holds no separator: the rest stays here
				i = len(s)
			case loopDigits:
				for i+8 <= len(s) && digits8(swar.Load(s, i)) {
					i += 8
				}
			}
			for i < len(s) && l.set[s[i]] {
				i++
			}
		}
	}
	return r.accept[st]
}

// digits8 reports whether the 8 bytes of x are all ASCII digits.
func digits8(x uint64) bool {
	return x&0xf0f0f0f0f0f0f0f0|(x+0x0606060606060606)&0xf0f0f0f0f0f0f0f0>>4 == 0x3333333333333333
}

// flatten numbers the nodes the walk visits and builds the slot table,
// the pattern edges and the automata Lookup uses.
func (m *Matcher) flatten(root *node) {
	runOf := map[*dfa]uint16{}
	runIndex := func(d *dfa) int {
		r, ok := runOf[d]
		if !ok {
			if len(m.runs) > 1<<16-1 {
				return -1
			}
			r = uint16(len(m.runs))
			runOf[d] = r
			m.runs = append(m.runs, newRun(d))
		}
		return int(r)
	}
	// The nodes the walk enters, breadth first; the others are leaves or
	// the heads of tails. Node numbers and pattern edge positions first.
	walked := func(n *node) bool { return len(n.lits)+len(n.pats) > 0 && !tailOf(n, m.sep, runIndex).ok }
	order := []*node{root}
	npats, nlits := 0, 0
	patAt := map[*node]int{}
	for i := 0; i < len(order); i++ {
		n := order[i]
		n.id = uint32(i)
		if len(n.pats) > 0 {
			patAt[n] = npats
			npats += len(n.pats)
		}
		for _, lit := range slices.Sorted(maps.Keys(n.lits)) {
			if uint64(len(lit)) <= maxLit {
				nlits++
			}
			if c := n.lits[lit]; walked(c) {
				order = append(order, c)
			}
		}
		for _, e := range n.pats {
			if walked(e.child) {
				order = append(order, e.child)
			}
		}
	}
	nextID := uint32(len(order))
	targetOf := func(c *node) target {
		if c.id == 0 && c != root { // not walked: numbered only to tell slots apart
			c.id = nextID
			nextID++
		}
		t := target{child: c.id, best: c.best, minRank: c.minRank}
		if tl := tailOf(c, m.sep, runIndex); tl.ok {
			t.tail = tl.tail
			return t
		}
		if i, ok := patAt[c]; ok {
			t.pats = uint32(i) + 1
		}
		for lit := range c.lits {
			t.lens |= 1 << min(len(lit), 31)
		}
		return t
	}
	m.root = targetOf(root)

	// At most half full: a slot is a cache line, so every probe past the
	// first costs a line.
	size, bitsN := 4, 2
	for size < 2*nlits {
		size <<= 1
		bitsN++
	}
	m.slots = make([]litSlot, size)
	m.shift = uint(64 - bitsN)
	mask := uint64(size - 1)
	var arena []byte
	for _, n := range order {
		for _, lit := range slices.Sorted(maps.Keys(n.lits)) {
			if uint64(len(lit)) > maxLit {
				continue // no key reaches it; see maxLit
			}
			_, w, h := scan(lit, m.sep, seedOf(n.id))
			s := litSlot{word: w, parent: n.id, n: uint32(len(lit)), target: targetOf(n.lits[lit])}
			if len(lit) > 8 {
				s.off = uint32(len(arena))
				arena = append(arena, lit[8:]...)
			}
			for i := h >> m.shift; ; i = (i + 1) & mask {
				if m.slots[i].child == 0 {
					m.slots[i] = s
					break
				}
			}
		}
		for i, e := range n.pats {
			m.pats = append(m.pats, patEdge{run: uint16(runIndex(e.d)), more: i+1 < len(n.pats), target: targetOf(e.child)})
		}
	}
	m.arena = string(arena)
}

// maxLit is the longest literal segment the matcher handles (a slot holds
// the length in 32 bits); no key is matched against a longer one.
const maxLit = 1<<32 - 1

type tailResult struct {
	tail tail
	ok   bool
}

// tailOf returns the tail of c: the chain below c when c is not a
// template's end and its subtree is one chain that fits a tail.
func tailOf(c *node, sep byte, runIndex func(*dfa) int) tailResult {
	var t tail
	nl, np := 0, 0
	n := c
	for i := 0; ; i++ {
		if len(n.lits)+len(n.pats) == 0 {
			return tailResult{t, i > 0}
		}
		if i == len(t.ops) || n.best != noRank || len(n.lits)+len(n.pats) != 1 {
			return tailResult{}
		}
		if len(n.pats) == 1 {
			r := runIndex(n.pats[0].d)
			if np == len(t.runs) || r < 0 {
				return tailResult{}
			}
			t.runs[np], t.ops[i] = uint16(r), patOp
			np++
			n = n.pats[0].child
			continue
		}
		for lit, next := range n.lits {
			if nl == len(t.lits) || len(lit) > 8 {
				return tailResult{}
			}
			_, t.lits[nl], _ = scan(lit, sep, 0)
			t.ops[i] = uint8(len(lit) + 1)
			nl++
			n = next
		}
	}
}

const mul = 0x9e3779b97f4a7c15

// seedOf starts the hash of a segment below parent: the product spreads
// node numbers over the top bits, which index the slot table.
func seedOf(parent uint32) uint64 { return (uint64(parent) + 1) * 0xbf58476d1ce4e5b9 }

// scan finds the end of the segment that starts key (the first sep, or
// the end of key) 8 bytes at a time, and hashes the segment into h on the
// way. It returns the segment length, its first 8 bytes (little-endian,
// zero padded) and the hash.
func scan(key string, sep byte, h uint64) (n int, word, hash uint64) {
	sepw := swar.Lo * uint64(sep)
	for i := 0; ; i += 8 {
		var c uint64
		avail := len(key) - i
		switch {
		case avail >= 8:
			c = swar.Load(key, i)
		case len(key) >= 8:
			c = swar.Load(key, len(key)-8) >> (64 - 8*uint(avail))
		default:
			for j := len(key) - 1; j >= i; j-- {
				c = c<<8 | uint64(key[j])
			}
		}
		x := c ^ sepw
		z := (x - swar.Lo) &^ x & swar.Hi // swar.Eq(c, sep): every byte equal to sep, maybe bytes after one
		if avail < 8 {
			z &= 1<<(8*uint(avail)) - 1
		}
		if z != 0 { // the lowest flag is the first separator
			k := bits.TrailingZeros64(z) >> 3
			c &= 1<<(8*uint(k)) - 1
			avail = k
		}
		h = (h ^ c) * mul // the top bits, the slot index, depend on every bit
		if i == 0 {
			word = c
		}
		if avail < 8 {
			return i + avail, word, h
		}
		h ^= h >> 32
	}
}

// Lookup returns the index of the most specific template matching key, or
// -1. It does not allocate. Keys may hold any bytes.
func (m *Matcher) Lookup(key string) int {
	best := noRank
	m.walk(&m.root, key, &best)
	if best == noRank {
		return -1
	}
	return int(m.byRank[best])
}

// walk matches key below t. Chains of literal edges are followed in a
// loop; a node with pattern edges tries its literal child first, then the
// pattern edges in order, skipping subtrees that cannot beat best.
func (m *Matcher) walk(t *target, key string, best *int32) {
	for {
		if t.tail.ops[0] != 0 {
			m.matchTail(t, key, best)
			return
		}
		if t.lens == 0 && t.pats == 0 {
			return // no edge below t (an empty matcher's root): no segment to read
		}
		k, w, h := scan(key, m.sep, seedOf(t.child))
		seg, rest, last := key[:k], "", k == len(key)
		if !last {
			rest = key[k+1:]
		}
		var s *litSlot
		if t.lens&(1<<min(k, 31)) != 0 {
			s = m.find(t.child, seg, w, h)
		}
		if t.pats == 0 {
			if s == nil {
				return
			}
			if last {
				*best = min(*best, s.best)
				return
			}
			if s.minRank >= *best {
				return
			}
			t, key = &s.target, rest
			continue
		}
		if s != nil {
			m.step(&s.target, rest, last, best)
		}
		for i := int(t.pats - 1); i < len(m.pats); i++ {
			e := &m.pats[i]
			if e.minRank >= *best { // the edges are in order of minRank
				break
			}
			if m.runs[e.run].match(seg) {
				m.step(&e.target, rest, last, best)
			}
			if !e.more {
				break
			}
		}
		return
	}
}

func (m *Matcher) step(t *target, rest string, last bool, best *int32) {
	if last {
		*best = min(*best, t.best)
		return
	}
	if t.minRank < *best {
		m.walk(t, rest, best)
	}
}

// matchTail matches key, the segments below t, against t's tail.
func (m *Matcher) matchTail(t *target, key string, best *int32) {
	nl, np := 0, 0
	for i, op := range t.tail.ops {
		k, w, _ := scan(key, m.sep, 0)
		if op == patOp {
			if !m.runs[t.tail.runs[np&1]].match(key[:k]) {
				return
			}
			np++
		} else {
			if k != int(op)-1 || w != t.tail.lits[nl&1] {
				return
			}
			nl++
		}
		end := i == len(t.tail.ops)-1 || t.tail.ops[i+1] == 0
		if k == len(key) || end {
			if k == len(key) && end {
				*best = min(*best, t.minRank)
			}
			return
		}
		key = key[k+1:]
	}
}

// find returns the slot of the literal edge n → seg, or nil.
func (m *Matcher) find(n uint32, seg string, w, h uint64) *litSlot {
	mask := uint64(len(m.slots) - 1)
	for i := h >> m.shift; ; i = (i + 1) & mask {
		s := &m.slots[i]
		if s.child == 0 {
			return nil
		}
		if s.word == w && s.parent == n && uint64(s.n) == uint64(len(seg)) {
			if len(seg) <= 8 || m.arena[s.off:s.off+s.n-8] == seg[8:] {
				return s
			}
		}
	}
}

// fill computes best and minRank bottom up and orders pattern edges so the
// most promising subtree is searched first.
func (m *Matcher) fill(n *node) int32 {
	for _, t := range n.term {
		n.best = min(n.best, m.rankOf[t])
	}
	n.minRank = n.best
	for _, c := range n.lits {
		n.minRank = min(n.minRank, m.fill(c))
	}
	for _, e := range n.pats {
		n.minRank = min(n.minRank, m.fill(e.child))
	}
	slices.SortStableFunc(n.pats, func(a, b patBuild) int { return cmp.Compare(a.child.minRank, b.child.minRank) })
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
func (m *Matcher) findOverlaps(root *node) []Overlap {
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
				if c := n.lits[lit]; c != nil {
					walk(c, depth+1)
				}
				for _, e := range n.pats {
					if e.d.match(lit) {
						walk(e.child, depth+1)
					}
				}
				return
			}
			for lit, c := range n.lits {
				if s.dfa.match(lit) {
					walk(c, depth+1)
				}
			}
			for _, e := range n.pats {
				if e.canon == s.canon || meets(s.dfa, e.d) {
					walk(e.child, depth+1)
				}
			}
		}
		walk(root, 0)
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
