package keytmpl

import (
	"slices"
	"strings"
	"testing"
)

func FuzzParse(f *testing.F) {
	for _, s := range []string{"order:order:{orderId:int}:base", "{{o:{id}}}:i", "a:{x:enum(A,B)}", "a:{d:date}{n:int}", "a:{", "}", "{x:uuid}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		tpl, err := Parse(src, ':')
		// Segments reads the same syntax: the same error, or the same
		// segments without the automata.
		segs, serr := Segments(src, ':')
		if (err == nil) != (serr == nil) || err != nil && err.Error() != serr.Error() {
			t.Fatalf("Parse(%q) error %v, Segments error %v", src, err, serr)
		}
		if err != nil {
			return
		}
		if len(segs) != len(tpl.Segments()) {
			t.Fatalf("Segments(%q): %d segments, Parse %d", src, len(segs), len(tpl.Segments()))
		}
		for i, s := range tpl.Segments() {
			if !slices.EqualFunc(s.Parts, segs[i].Parts, func(a, b Part) bool {
				return a.Lit == b.Lit && a.Name == b.Name && a.Kind == b.Kind && slices.Equal(a.Enum, b.Enum)
			}) {
				t.Fatalf("Segments(%q) segment %d: %+v, Parse %+v", src, i, segs[i].Parts, s.Parts)
			}
		}
		if ex := tpl.Example(); !tpl.Matches(ex) {
			t.Fatalf("Example %q of %q does not match", ex, src)
		}
		if e := Relate(tpl, tpl); e.Relation != Equal {
			t.Fatalf("Relate(t, t) = %v", e.Relation)
		}
	})
}

var fuzzTemplates = []string{
	"order:order:{orderId:int}:base", "promo:sku:{id:int}", "promo:{x}:1001", "promo:{x}:{y}",
	"auth:session:u{userId}", "{{order:{id}}}:items", "x:{d:date}{n:int}", "x:{u:uuid}",
	"verify:sms:{phone:hash}:{scene:enum(LOGIN,RESET_PWD,BIND)}", "geo:{r:region}", "geo:{h:hex}", "{a}",
}

func FuzzLookup(f *testing.F) {
	var ts []*Template
	for _, s := range fuzzTemplates {
		ts = append(ts, MustParse(s, ':'))
		f.Add(ts[len(ts)-1].Example())
	}
	f.Add("\x00:\xff\n")
	f.Add(strings.Repeat("a:", 100))
	m := Compile(ts)
	f.Fuzz(func(t *testing.T, key string) {
		got := m.Lookup(key)
		var matching []int
		for i, tpl := range ts {
			if tpl.Matches(key) {
				matching = append(matching, i)
			}
			// AppendCaptures answers as AppendMatch, with the same
			// captures, for every template and key.
			want, wok := tpl.AppendMatch([]Capture{{"pre", "x"}}, key)
			have, hok := tpl.AppendCaptures([]Capture{{"pre", "x"}}, key)
			if wok != hok || !slices.Equal(want, have) {
				t.Fatalf("%s: AppendCaptures(%q) = %v, %v; AppendMatch %v, %v", tpl, key, have, hok, want, wok)
			}
		}
		if got < 0 {
			if len(matching) > 0 {
				t.Fatalf("Lookup(%q) = -1 but %v match", key, matching)
			}
			return
		}
		if !ts[got].Matches(key) {
			t.Fatalf("Lookup(%q) = %d which does not match", key, got)
		}
		for _, i := range matching {
			if m.rankOf[i] < m.rankOf[got] {
				t.Fatalf("Lookup(%q) = %d but %d ranks higher and matches", key, got, i)
			}
		}
		if _, ok := ts[got].Match(key); !ok {
			t.Fatalf("Match(%q) disagrees with Matches", key)
		}
	})
}

func FuzzRelate(f *testing.F) {
	for i := range fuzzTemplates {
		f.Add(fuzzTemplates[i], fuzzTemplates[(i+1)%len(fuzzTemplates)])
	}
	f.Fuzz(func(t *testing.T, sa, sb string) {
		a, err := Parse(sa, ':')
		if err != nil {
			return
		}
		b, err := Parse(sb, ':')
		if err != nil {
			return
		}
		checkExplanation(t, a, b, Relate(a, b))
	})
}
