package report

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// prefixTreeRef is PrefixTree written plainly: nodes by their path,
// children by their parent's path, a walk from the first segments.
func prefixTreeRef(groups []Group, sep byte, depth int) []Prefix {
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
	children := map[string][]*node{}
	for _, n := range nodes {
		children[n.parent] = append(children[n.parent], n)
	}
	var out []Prefix
	var walk func(parent string)
	walk = func(parent string) {
		c := children[parent]
		slices.SortFunc(c, func(a, b *node) int {
			return cmp.Or(cmp.Compare(b.Bytes, a.Bytes), cmp.Compare(b.Keys, a.Keys), strings.Compare(a.Prefix.Prefix, b.Prefix.Prefix))
		})
		for _, n := range c {
			out = append(out, n.Prefix)
			walk(n.Prefix.Prefix)
		}
	}
	walk("")
	return out
}

// TestPrefixTreeAsReference: the tree of groups with shared and distinct
// prefixes, placeholders, escaped braces, names that are not templates
// and equal sizes (siblings ordered by name) is the plain version's, at
// every depth.
func TestPrefixTreeAsReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	words := []string{"order", "user", "{id:int}", "{{x}}", "cache", "a{n:int}b", "{r:region}", "x"}
	var groups []Group
	for i := range 3000 {
		var name string
		switch i % 10 {
		case 0:
			name = OtherGroup
		case 1:
			name = fmt.Sprintf("bad::name%d", i%5) // not a template: one segment
		default:
			var segs []string
			for range 1 + rng.IntN(5) {
				segs = append(segs, words[rng.IntN(len(words))]+[]string{"", "1", "2"}[rng.IntN(3)])
			}
			name = strings.Join(segs, ":")
		}
		groups = append(groups, Group{Name: name, Keys: int64(rng.IntN(4)), Bytes: int64(rng.IntN(3) * 100), NoTTL: int64(rng.IntN(2))})
	}
	for depth := range 6 {
		got, want := PrefixTree(groups, ':', depth), prefixTreeRef(groups, ':', depth)
		if depth == 0 {
			want = nil
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("depth %d: %d prefixes, the plain version %d; first: %v / %v", depth, len(got), len(want), got[:min(3, len(got))], want[:min(3, len(want))])
		}
	}
}
