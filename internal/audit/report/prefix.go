package report

import (
	"cmp"
	"slices"
	"strings"

	"github.com/keyguard/keyguard/keytmpl"
)

// Prefix is the keys and memory under one key prefix: the first Depth
// segments of the groups' templates, a placeholder segment written "*".
// Prefixes come from the groups, registered or not, so they cost nothing
// per key and stay bounded whatever the key count.
type Prefix struct {
	Prefix string `json:"prefix"`
	Depth  int    `json:"depth"`
	Keys   int64  `json:"keys"`
	Bytes  int64  `json:"bytes"`
	NoTTL  int64  `json:"no_ttl"`
	Groups int    `json:"groups"` // templates and families under it
}

// DefaultPrefixDepth is how many segments PrefixTree goes down by
// default.
const DefaultPrefixDepth = 3

// PrefixTree sums groups by their first 1..depth segments (separator
// sep), deepest level last: every node of the tree, parents before their
// children, siblings by memory.
func PrefixTree(groups []Group, sep byte, depth int) []Prefix {
	if depth <= 0 {
		return nil
	}
	// The nodes in one array, found by their prefix; a node's parent by
	// its index. A path is built in one buffer and becomes a string only
	// for a new node: a report of 10,000 families makes some 30,000.
	type node struct {
		Prefix
		parent int32 // -1: a first segment
	}
	nodes := make([]node, 0, len(groups)*min(depth, 4))
	index := make(map[string]int32, len(groups))
	var path []byte
	for _, g := range groups {
		segs := segmentsOf(g.Name, sep)
		path = path[:0]
		parent := int32(-1)
		for d := 1; d <= min(depth, len(segs)); d++ {
			if d > 1 {
				path = append(path, sep)
			}
			path = append(path, segs[d-1]...)
			i, ok := index[string(path)]
			if !ok {
				p := string(path)
				i = int32(len(nodes))
				nodes = append(nodes, node{Prefix: Prefix{Prefix: p, Depth: d}, parent: parent})
				index[p] = i
			}
			n := &nodes[i]
			n.Keys += g.Keys
			n.Bytes += g.Bytes
			n.NoTTL += g.NoTTL
			n.Groups++
			parent = i
		}
	}
	// Depth first: a node, then its children by memory. The nodes are
	// sorted by parent, then as siblings; children[p+1] is where the
	// children of node p begin (p = -1: the first segments).
	byParent := make([]int32, len(nodes))
	for i := range byParent {
		byParent[i] = int32(i)
	}
	slices.SortFunc(byParent, func(i, j int32) int {
		a, b := &nodes[i], &nodes[j]
		return cmp.Or(cmp.Compare(a.parent, b.parent), cmp.Compare(b.Bytes, a.Bytes), cmp.Compare(b.Keys, a.Keys), strings.Compare(a.Prefix.Prefix, b.Prefix.Prefix))
	})
	children := make([]int32, len(nodes)+2)
	for _, n := range nodes {
		children[n.parent+2]++
	}
	for i := 1; i < len(children); i++ {
		children[i] += children[i-1]
	}
	out := make([]Prefix, 0, len(nodes))
	var walk func(parent int32)
	walk = func(parent int32) {
		for _, i := range byParent[children[parent+1]:children[parent+2]] {
			out = append(out, nodes[i].Prefix)
			walk(i)
		}
	}
	walk(-1)
	return out
}

// segmentsOf splits a group's name (a template) into segments, each
// placeholder written "*"; a name that is not a template (the "(other)"
// group, an escaped binary family) is one segment.
func segmentsOf(name string, sep byte) []string {
	segments, err := keytmpl.Segments(name, sep)
	if err != nil {
		return []string{name}
	}
	segs := make([]string, 0, len(segments))
	for _, s := range segments {
		if len(s.Parts) == 1 && !s.Parts[0].IsPlaceholder() {
			segs = append(segs, s.Parts[0].Lit) // a literal segment: its text as it is
			continue
		}
		var b strings.Builder
		for i, p := range s.Parts {
			if p.IsPlaceholder() {
				if i == 0 || !s.Parts[i-1].IsPlaceholder() {
					b.WriteByte('*')
				}
			} else {
				b.WriteString(p.Lit)
			}
		}
		segs = append(segs, b.String())
	}
	return segs
}
