package keytmpl

import "strings"

// Relation is how the key sets of two templates relate.
type Relation uint8

// Relations, from the point of view of the first template.
const (
	Disjoint     Relation = iota // no key matches both
	Equal                        // exactly the same keys
	MoreSpecific                 // every key of a matches b, not the reverse
	MoreGeneral                  // every key of b matches a, not the reverse
	Overlapping                  // some keys match both, each has keys the other lacks
)

func (r Relation) String() string {
	return [...]string{"disjoint", "equal", "more specific", "more general", "overlapping"}[r]
}

// Explanation is the result of Relate: the relation and keys that show it,
// in the manner of net/http's pattern conflicts.
type Explanation struct {
	Relation Relation
	Witness  string // a key both templates match (empty when disjoint)
	OnlyA    string // a key only a matches (empty when a ⊆ b)
	OnlyB    string // a key only b matches (empty when b ⊆ a)
}

// String explains the relation in one sentence.
func (e Explanation) String() string {
	switch e.Relation {
	case Disjoint:
		return "no key matches both"
	case Equal:
		return "both match exactly the same keys, e.g. " + quote(e.Witness)
	case MoreSpecific:
		return "every key of the first matches the second, e.g. " + quote(e.Witness) + "; only the second matches " + quote(e.OnlyB)
	case MoreGeneral:
		return "every key of the second matches the first, e.g. " + quote(e.Witness) + "; only the first matches " + quote(e.OnlyA)
	default:
		return "both match " + quote(e.Witness) + "; only the first matches " + quote(e.OnlyA) + "; only the second matches " + quote(e.OnlyB)
	}
}

func quote(s string) string { return "\"" + s + "\"" }

// witnessOrder lists bytes in the order witnesses prefer them, so that
// witness keys read like real keys ("1001", "abc") when they can.
var witnessOrder = func() []byte {
	var out []byte
	seen := [256]bool{}
	add := func(s string) {
		for i := 0; i < len(s); i++ {
			if !seen[s[i]] {
				seen[s[i]] = true
				out = append(out, s[i])
			}
		}
	}
	add("1234567890abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_.")
	for b := 0; b < 256; b++ {
		if !seen[b] {
			out = append(out, byte(b))
		}
	}
	return out
}()

// search explores the product of two DFAs breadth first, never stepping on
// the separator, and returns the shortest string leading to a pair state
// for which goal is true.
func search(a, b *dfa, sep byte, goal func(sa, sb int32) bool) (string, bool) {
	type pair struct{ a, b int32 }
	type visit struct {
		from pair
		by   byte
	}
	reps := make([]byte, 0, 16)
	// One representative byte per pair of classes, the first in
	// witnessOrder; pairs are numbered a's class × b's count + b's class
	// (a map of the pairs was most of a search's time).
	var small [1024]bool
	seenCls := small[:]
	if n := a.ncls * b.ncls; n > len(small) {
		seenCls = make([]bool, n)
	}
	for _, c := range witnessOrder {
		if c == sep {
			continue
		}
		if k := int(a.class[c])*b.ncls + int(b.class[c]); !seenCls[k] {
			seenCls[k] = true
			reps = append(reps, c)
		}
	}
	start := pair{0, 0}
	prev := map[pair]visit{start: {}}
	queue := []pair{start}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if goal(p.a, p.b) {
			var out []byte
			for q := p; q != start; q = prev[q].from {
				out = append(out, prev[q].by)
			}
			for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
				out[i], out[j] = out[j], out[i]
			}
			return string(out), true
		}
		for _, c := range reps {
			n := pair{a.step(p.a, c), b.step(p.b, c)}
			if _, ok := prev[n]; ok {
				continue
			}
			prev[n] = visit{p, c}
			queue = append(queue, n)
		}
	}
	return "", false
}

func intersect(a, b *dfa, sep byte) (string, bool) {
	return search(a, b, sep, func(x, y int32) bool { return a.accept[x] && b.accept[y] })
}

// difference returns a string a accepts and b rejects.
func difference(a, b *dfa, sep byte) (string, bool) {
	return search(a, b, sep, func(x, y int32) bool { return a.accept[x] && !b.accept[y] })
}

// Relate tells how the keys of a and b relate, with example keys. Both
// must use the same separator. The answer is exact: each segment is a
// regular language and the comparison runs on their automata.
func Relate(a, b *Template) Explanation {
	if len(a.segments) != len(b.segments) || a.sep != b.sep {
		return Explanation{Relation: Disjoint}
	}
	n := len(a.segments)
	both := make([]string, n)
	aSub, bSub := true, true // a ⊆ b, b ⊆ a
	onlyA, onlyB := -1, -1
	var onlyAseg, onlyBseg string
	for i := range a.segments {
		// Two literal segments: equal or disjoint, without automata (the
		// first segments of two templates mostly differ).
		la, okA := a.segments[i].Literal()
		lb, okB := b.segments[i].Literal()
		if okA && okB {
			if la != lb {
				return Explanation{Relation: Disjoint}
			}
			both[i] = la
			continue
		}
		sa, sb := a.segments[i].dfa, b.segments[i].dfa
		w, ok := intersect(sa, sb, a.sep)
		if !ok {
			return Explanation{Relation: Disjoint}
		}
		both[i] = w
		if aSub {
			if d, ok := difference(sa, sb, a.sep); ok {
				aSub, onlyA, onlyAseg = false, i, d
			}
		}
		if bSub {
			if d, ok := difference(sb, sa, a.sep); ok {
				bSub, onlyB, onlyBseg = false, i, d
			}
		}
	}
	sep := string(a.sep)
	e := Explanation{Witness: strings.Join(both, sep)}
	if onlyA >= 0 {
		e.OnlyA = replaceAt(both, onlyA, onlyAseg, sep)
	}
	if onlyB >= 0 {
		e.OnlyB = replaceAt(both, onlyB, onlyBseg, sep)
	}
	switch {
	case aSub && bSub:
		e.Relation = Equal
	case aSub:
		e.Relation = MoreSpecific
	case bSub:
		e.Relation = MoreGeneral
	default:
		e.Relation = Overlapping
	}
	return e
}

func replaceAt(segs []string, i int, s, sep string) string {
	c := append([]string(nil), segs...)
	c[i] = s
	return strings.Join(c, sep)
}
