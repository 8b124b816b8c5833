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
	type node struct {
		Prefix
		parent string
	}
	nodes := map[string]*node{}
	for _, g := range groups {
		segs := segmentsOf(g.Name, sep)
		path := ""
		for d := 1; d <= min(depth, len(segs)); d++ {
			parent := path
			if d > 1 {
				path += string(sep)
			}
			path += segs[d-1]
			n := nodes[path]
			if n == nil {
				n = &node{Prefix: Prefix{Prefix: path, Depth: d}, parent: parent}
				nodes[path] = n
			}
			n.Keys += g.Keys
			n.Bytes += g.Bytes
			n.NoTTL += g.NoTTL
			n.Groups++
		}
	}
	// Depth first: a node, then its children by memory.
	children := map[string][]*node{}
	for _, n := range nodes {
		children[n.parent] = append(children[n.parent], n)
	}
	for _, c := range children {
		slices.SortFunc(c, func(a, b *node) int {
			return cmp.Or(cmp.Compare(b.Bytes, a.Bytes), cmp.Compare(b.Keys, a.Keys), strings.Compare(a.Prefix.Prefix, b.Prefix.Prefix))
		})
	}
	out := make([]Prefix, 0, len(nodes))
	var walk func(parent string)
	walk = func(parent string) {
		for _, n := range children[parent] {
			out = append(out, n.Prefix)
			walk(n.Prefix.Prefix)
		}
	}
	walk("")
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
	var segs []string
	for _, s := range segments {
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
