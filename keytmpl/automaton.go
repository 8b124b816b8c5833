package keytmpl

import (
	"slices"
	"strings"
)

// Each segment (and each placeholder alone) is a regular language over
// bytes. It is built as an NFA from the parts, then determinised into a
// small DFA over byte classes. The matcher runs the DFA; Relate runs
// products of two DFAs, so matching and overlap analysis cannot disagree.

type bset [4]uint64

func (s *bset) add(b byte)      { s[b>>6] |= 1 << (b & 63) }
func (s *bset) has(b byte) bool { return s[b>>6]&(1<<(b&63)) != 0 }
func (s *bset) addRange(lo, hi byte) {
	for c := int(lo); c <= int(hi); c++ {
		s.add(byte(c))
	}
}

func setOf(chars string) bset {
	var s bset
	for i := 0; i < len(chars); i++ {
		s.add(chars[i])
	}
	return s
}

var (
	digits   = func() bset { var s bset; s.addRange('0', '9'); return s }()
	nonzero  = func() bset { var s bset; s.addRange('1', '9'); return s }()
	hexAny   = func() bset { s := digits; s.addRange('a', 'f'); s.addRange('A', 'F'); return s }()
	hexLower = func() bset { s := digits; s.addRange('a', 'f'); return s }()
)

type nedge struct {
	set bset
	to  int
}

type nfa struct {
	edges [][]nedge
	eps   [][]int
}

func (n *nfa) state() int {
	n.edges = append(n.edges, nil)
	n.eps = append(n.eps, nil)
	return len(n.edges) - 1
}

func (n *nfa) edge(from int, set bset, to int) { n.edges[from] = append(n.edges[from], nedge{set, to}) }

// one adds a transition on set from 'from' to a new state and returns it.
func (n *nfa) one(from int, set bset) int {
	to := n.state()
	n.edge(from, set, to)
	return to
}

func (n *nfa) times(from int, set bset, k int) int {
	for range k {
		from = n.one(from, set)
	}
	return from
}

func (n *nfa) plus(from int, set bset) int {
	to := n.one(from, set)
	n.edge(to, set, to)
	return to
}

func (n *nfa) lit(from int, s string) int {
	for i := 0; i < len(s); i++ {
		var b bset
		b.add(s[i])
		from = n.one(from, b)
	}
	return from
}

func (n *nfa) part(from int, p Part) int {
	if !p.IsPlaceholder() {
		return n.lit(from, p.Lit)
	}
	switch p.Kind {
	case Int:
		end := n.state()
		minus := n.one(from, setOf("-"))
		d1 := n.plus(from, digits)
		n.eps[d1] = append(n.eps[d1], end)
		d2 := n.plus(minus, digits)
		n.eps[d2] = append(n.eps[d2], end)
		return end
	case Hex:
		return n.plus(from, hexAny)
	case UUID:
		s := n.times(from, hexAny, 8)
		for _, k := range []int{4, 4, 4, 12} {
			s = n.one(s, setOf("-"))
			s = n.times(s, hexAny, k)
		}
		return s
	case Region:
		return n.times(n.one(from, nonzero), digits, 5)
	case Date:
		s := n.times(from, digits, 4)
		end := n.state()
		for _, m := range dateMonths() {
			n.eps[n.lit(s, m)] = []int{end}
		}
		end2 := n.state()
		n.eps[n.one(n.one(end, setOf("0")), nonzero)] = []int{end2}
		n.eps[n.one(n.one(end, setOf("12")), digits)] = []int{end2}
		n.eps[n.one(n.one(end, setOf("3")), setOf("01"))] = []int{end2}
		return end2
	case Enum:
		end := n.state()
		for _, v := range p.Enum {
			e := n.lit(from, v)
			n.eps[e] = append(n.eps[e], end)
		}
		return end
	case Hash:
		return n.times(from, hexLower, HashLen)
	default: // Any: every byte; the separator never reaches a segment
		return n.plus(from, allBytes)
	}
}

var allBytes = bset{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}

func dateMonths() []string {
	ms := make([]string, 12)
	for i := range ms {
		ms[i] = string([]byte{byte('0' + (i+1)/10), byte('0' + (i+1)%10)})
	}
	return ms
}

type dfa struct {
	class  [256]uint16
	ncls   int
	next   []int32 // state*ncls + class; state 0 is the start, state 1 is dead
	accept []bool
}

const deadState = 1

func (d *dfa) match(s string) bool {
	st := int32(0)
	for i := 0; i < len(s); i++ {
		st = d.next[int(st)*d.ncls+int(d.class[s[i]])]
		if st == deadState {
			return false
		}
	}
	return d.accept[st]
}

func (d *dfa) step(st int32, b byte) int32 { return d.next[int(st)*d.ncls+int(d.class[b])] }

// byteClasses partitions the bytes by their membership in every set: two
// bytes share a class when each set holds both or neither. Each set
// splits the classes so far in two, in and out of it; a class is numbered
// by its first byte, in byte order.
func byteClasses(sets []bset, class *[256]uint16) (n int) {
	n = 1
	remap := make([]int32, 0, 512)
	for _, set := range sets {
		remap = remap[:0]
		for range 2 * n {
			remap = append(remap, -1)
		}
		next := 0
		for b := 0; b < 256; b++ {
			k := 2 * int(class[b])
			if set.has(byte(b)) {
				k++
			}
			if remap[k] < 0 {
				remap[k] = int32(next)
				next++
			}
			class[b] = uint16(remap[k])
		}
		n = next
	}
	return n
}

// literalDFA is buildDFA of one literal part, built directly (the same
// classes, states and transitions): a chain of len(s)+1 states after the
// dead one. Most segments of most templates are literal.
func literalDFA(s string) *dfa {
	d := &dfa{}
	var sets []bset
	for i := 0; i < len(s); i++ {
		var b bset
		b.add(s[i])
		if !slices.Contains(sets, b) {
			sets = append(sets, b)
		}
	}
	d.ncls = byteClasses(sets, &d.class)
	state := func(i int) int32 { // the state after i bytes of s
		if i == 0 {
			return 0
		}
		return int32(i + 1)
	}
	n := len(s) + 2
	d.next = make([]int32, n*d.ncls)
	for i := range d.next {
		d.next[i] = deadState
	}
	d.accept = make([]bool, n)
	for i := 0; i < len(s); i++ {
		d.next[int(state(i))*d.ncls+int(d.class[s[i]])] = state(i + 1)
	}
	d.accept[state(len(s))] = true
	return d
}

// buildDFA determinises the NFA of a sequence of parts. Placeholders of
// kind Any take every byte: the separator never appears inside a segment,
// and Relate leaves it out when it searches for witnesses.
func buildDFA(parts []Part) *dfa {
	var n nfa
	start := n.state()
	end := start
	for _, p := range parts {
		end = n.part(end, p)
	}
	// Byte classes: bytes with the same membership in every edge set.
	var sets []bset
	for _, es := range n.edges {
		for _, e := range es {
			if !slices.Contains(sets, e.set) {
				sets = append(sets, e.set)
			}
		}
	}
	d := &dfa{}
	d.ncls = byteClasses(sets, &d.class)
	rep := make([]byte, d.ncls) // one byte per class
	for b := 255; b >= 0; b-- {
		rep[d.class[b]] = byte(b)
	}

	seen := make([]bool, len(n.eps)) // false between calls of closure
	closure := func(states []int) []int {
		stack := slices.Clone(states)
		for _, s := range states {
			seen[s] = true
		}
		for len(stack) > 0 {
			s := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, t := range n.eps[s] {
				if !seen[t] {
					seen[t] = true
					stack = append(stack, t)
					states = append(states, t)
				}
			}
		}
		for _, s := range states {
			seen[s] = false
		}
		slices.Sort(states)
		return slices.Compact(states)
	}
	keyOf := func(states []int) string {
		var b strings.Builder
		for _, s := range states {
			b.WriteString(string(rune(s + 1)))
		}
		return b.String()
	}
	ids := map[string]int32{}
	var queue [][]int
	addState := func(states []int) int32 {
		k := keyOf(states)
		if id, ok := ids[k]; ok {
			return id
		}
		id := int32(len(queue))
		ids[k] = id
		queue = append(queue, states)
		acc := slices.Contains(states, end)
		d.accept = append(d.accept, acc)
		d.next = append(d.next, make([]int32, d.ncls)...)
		return id
	}
	addState(closure([]int{start}))
	addState(nil) // dead
	for i := 0; i < len(queue); i++ {
		cur := queue[i]
		for c := 0; c < d.ncls; c++ {
			b := rep[c]
			var to []int
			for _, s := range cur {
				for _, e := range n.edges[s] {
					if e.set.has(b) {
						to = append(to, e.to)
					}
				}
			}
			var id int32 = deadState
			if len(to) > 0 {
				id = addState(closure(to))
			}
			d.next[i*d.ncls+c] = id
		}
	}
	return d
}
