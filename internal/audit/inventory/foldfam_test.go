package inventory

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/registry"
)

// TestFamiliesFoldedBySize: past Options.MaxGroups, a report lists the
// families with the most keys and counts the others in "(other)", the
// same whatever order the keys came in and however two aggregators split
// them (a pipeline's do, in no fixed order). The first families to come
// made the list before: one file's reports differed run to run, and a
// family of thousands of keys that came late was folded while families
// of one key were listed. Past the walk's cap (twice MaxGroups) the note
// says the list may depend on the order.
func TestFamiliesFoldedBySize(t *testing.T) {
	reg, err := registry.Parse("r.yaml", []byte("version: 1\ndomains: {order: {owner: o}}\nkeys:\n  - {key: \"order:order:{id:int}:base\", type: hash, ttl: 1h}\n"))
	if err != nil {
		t.Fatal(err)
	}
	const maxGroups = 50
	type key struct {
		name  string
		bytes int64
	}
	keyspace := func(families int) []key {
		var ks []key
		for f := range families {
			name := string(letters([]byte("f"), f))
			// Counts 1 to 12 in a pattern, so that many families tie on
			// keys and are told apart by bytes, then by name.
			for i := range 1 + (f*7)%12 {
				ks = append(ks, key{fmt.Sprintf("%s:item:%d", name, i), int64(100 + f%3)})
			}
		}
		return ks
	}
	type fam struct {
		name        string
		keys, bytes int64
	}
	run := func(ks []key, seed uint64) (*report.Report, []fam) {
		rng := rand.New(rand.NewPCG(seed, 1))
		ks = slices.Clone(ks)
		rng.Shuffle(len(ks), func(i, j int) { ks[i], ks[j] = ks[j], ks[i] })
		aggs := []*Aggregator{New(reg, Options{MaxGroups: maxGroups}), New(reg, Options{MaxGroups: maxGroups})}
		for _, k := range ks {
			a := aggs[rng.IntN(2)]
			r := &Record{Key: k.name, Type: "string", Bytes: k.bytes, TTL: -1, Freq: -1}
			a.Add(r, a.Classify(r.Key))
		}
		aggs[0].Merge(aggs[1])
		rep := aggs[0].Report(report.Meta{Source: report.Source{Kind: "redis"}, Complete: true})
		var fams []fam
		for _, g := range rep.Groups {
			if g.Kind == report.KindPrefix && g.Name != report.OtherGroup {
				fams = append(fams, fam{g.Name, g.Keys, g.Bytes})
			}
		}
		slices.SortFunc(fams, func(a, b fam) int { return strings.Compare(a.name, b.name) })
		return rep, fams
	}
	other := func(rep *report.Report) int64 {
		for _, g := range rep.Groups {
			if g.Name == report.OtherGroup {
				return g.Keys
			}
		}
		return 0
	}
	note := func(rep *report.Report) string {
		for _, n := range rep.Notes {
			if strings.Contains(n, "inferred families") {
				return n
			}
		}
		return ""
	}

	// 90 families: more than MaxGroups, fewer than the walk's cap.
	ks := keyspace(90)
	// The families a report must list: by keys, then bytes, then name.
	all := map[string]*fam{}
	var order []*fam
	for _, k := range ks {
		name := k.name[:strings.IndexByte(k.name, ':')] + ":item:{id:int}"
		f := all[name]
		if f == nil {
			f = &fam{name: name}
			all[name] = f
			order = append(order, f)
		}
		f.keys++
		f.bytes += k.bytes
	}
	slices.SortFunc(order, func(a, b *fam) int {
		return cmp.Or(cmp.Compare(b.keys, a.keys), cmp.Compare(b.bytes, a.bytes), strings.Compare(a.name, b.name))
	})
	var want []fam
	var rest int64
	for i, f := range order {
		if i < maxGroups {
			want = append(want, *f)
		} else {
			rest += f.keys
		}
	}
	slices.SortFunc(want, func(a, b fam) int { return strings.Compare(a.name, b.name) })
	for seed := range uint64(6) {
		rep, got := run(ks, seed)
		if len(got) > 0 && !strings.HasSuffix(got[0].name, ":item:{id:int}") {
			t.Fatalf("families inferred as %q: the test expects NAME:item:{id:int}", got[0].name)
		}
		if !slices.Equal(got, want) {
			t.Errorf("order %d: families listed\n%v\nwant the %d with the most keys\n%v", seed, got, maxGroups, want)
		}
		if other(rep) != rest {
			t.Errorf("order %d: %d keys in %s, want the other families' %d", seed, other(rep), report.OtherGroup, rest)
		}
		if n := note(rep); !strings.Contains(n, "the 50 with the most keys are listed") || strings.Contains(n, "order") {
			t.Errorf("order %d: note %q", seed, n)
		}
	}

	// 300 families: past the walk's cap, the note says the list may
	// depend on the order; the counts still add up.
	ks = keyspace(300)
	rep, got := run(ks, 1)
	var listed int64
	for _, f := range got {
		listed += f.keys
	}
	if len(got) != maxGroups || listed+other(rep) != int64(len(ks)) {
		t.Errorf("300 families: %d listed with %d keys, %d in %s, want %d and %d keys in all", len(got), listed, other(rep), report.OtherGroup, maxGroups, len(ks))
	}
	if n := note(rep); !strings.Contains(n, "may depend on the order the keys came in") {
		t.Errorf("300 families: note %q", n)
	}
}
