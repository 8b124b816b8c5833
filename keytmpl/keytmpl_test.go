package keytmpl

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		src     string
		segs    int
		places  string // names:kinds
		wantErr string
	}{
		{src: "order:order:{orderId:int}:base", segs: 4, places: "orderId:int"},
		{src: "auth:session:u{userId}", segs: 3, places: "userId:any"},
		{src: "verify:sms:{phone:hash}:{scene:enum(LOGIN,RESET_PWD,BIND)}", segs: 4, places: "phone:hash scene:enum"},
		{src: "{{order:{id}}}:items", segs: 3, places: "id:any"},
		{src: "geo:{code:region}:{day:date}:{u:uuid}:{h:hex}", segs: 5, places: "code:region day:date u:uuid h:hex"},
		{src: "seq:order:no", segs: 3},
		{src: "", wantErr: "empty template"},
		{src: "a::b", wantErr: "empty segment"},
		{src: ":a", wantErr: "empty segment"},
		{src: "a:", wantErr: "empty segment"},
		{src: "a:{id", wantErr: "unclosed placeholder"},
		{src: "a:id}", wantErr: "unmatched '}'"},
		{src: "a:{1id}", wantErr: "placeholder name"},
		{src: "a:{id:float}", wantErr: "unknown type \"float\""},
		{src: "a:{id}:{id}", wantErr: "appears twice"},
		{src: "a:{x}{y}", wantErr: "touch"},
		{src: "a:{x:enum()}", wantErr: "empty enum value"},
		{src: "a:{x:enum(A,A)}", wantErr: "listed twice"},
		{src: "a:{x:enum(A:B)}", wantErr: "may not contain the separator"},
	} {
		t.Run(tt.src, func(t *testing.T) {
			tpl, err := Parse(tt.src, ':')
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Parse(%q) error = %v, want containing %q", tt.src, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := len(tpl.Segments()); got != tt.segs {
				t.Errorf("segments = %d, want %d", got, tt.segs)
			}
			var ps []string
			for _, p := range tpl.Placeholders() {
				ps = append(ps, p.Name+":"+p.Kind.String())
			}
			if got := strings.Join(ps, " "); got != tt.places {
				t.Errorf("placeholders = %q, want %q", got, tt.places)
			}
		})
	}
}

func TestMatch(t *testing.T) {
	for _, tt := range []struct {
		tpl, key string
		want     string // "name=value ..." or "-" for no match
	}{
		{"order:order:{orderId:int}:base", "order:order:1001:base", "orderId=1001"},
		{"order:order:{orderId:int}:base", "order:order:-7:base", "orderId=-7"},
		{"order:order:{orderId:int}:base", "order:order:10a:base", "-"},
		{"order:order:{orderId:int}:base", "order:order:1001:base:x", "-"},
		{"order:order:{orderId:int}:base", "order:order::base", "-"},
		{"auth:session:u{userId}", "auth:session:u10086", "userId=10086"},
		{"auth:session:u{userId}", "auth:session:u", "-"},
		{"auth:session:u{userId}", "auth:session:x10086", "-"},
		{"{{order:{id}}}:items", "{order:1001}:items", "id=1001"},
		{"{{order:{id}}}:items", "order:1001:items", "-"},
		{"x:{d:date}", "x:20240229", "d=20240229"},
		{"x:{d:date}", "x:20241301", "-"},
		{"x:{d:date}", "x:20240132", "-"},
		{"x:{d:date}", "x:20240100", "-"},
		{"x:{r:region}", "x:110101", "r=110101"},
		{"x:{r:region}", "x:010101", "-"},
		{"x:{r:region}", "x:1101011", "-"},
		{"x:{u:uuid}", "x:123e4567-e89b-12d3-a456-426614174000", "u=123e4567-e89b-12d3-a456-426614174000"},
		{"x:{u:uuid}", "x:123e4567e89b12d3a456426614174000", "-"},
		{"x:{h:hash}", "x:9f86d081884c7d65", "h=9f86d081884c7d65"},
		{"x:{h:hash}", "x:9F86D081884C7D65", "-"},
		{"x:{e:enum(LOGIN,RESET_PWD)}:y", "x:RESET_PWD:y", "e=RESET_PWD"},
		{"x:{e:enum(LOGIN,RESET_PWD)}:y", "x:RESET:y", "-"},
		{"tmp:{d:date}{n:int}", "tmp:20240321150322", "d=20240321 n=150322"},
		{"bin:{x}", "bin:\x00\xff\n", "x=\x00\xff\n"},
	} {
		tpl := MustParse(tt.tpl, ':')
		caps, ok := tpl.Match(tt.key)
		got := "-"
		if ok {
			var parts []string
			for _, c := range caps {
				parts = append(parts, c.Name+"="+c.Value)
			}
			got = strings.Join(parts, " ")
		}
		if got != tt.want {
			t.Errorf("%q.Match(%q) = %q, want %q", tt.tpl, tt.key, got, tt.want)
		}
		if tpl.Matches(tt.key) != (tt.want != "-") {
			t.Errorf("%q.Matches(%q) disagrees with Match", tt.tpl, tt.key)
		}
	}
}

func TestRelate(t *testing.T) {
	for _, tt := range []struct {
		a, b    string
		want    Relation
		witness string // checked when not empty
	}{
		{"promo:{x}:1001", "promo:sku:{id:int}", Overlapping, "promo:sku:1001"},
		{"order:{id:int}:base", "order:{id:uuid}:base", Disjoint, ""},
		{"order:{id:int}:base", "order:{oid:int}:base", Equal, ""},
		{"order:{id:region}:base", "order:{id:int}:base", MoreSpecific, ""},
		{"order:{id}:base", "order:42:base", MoreGeneral, "order:42:base"},
		{"a:b", "a:b:c", Disjoint, ""},
		{"a:{x}", "b:{x}", Disjoint, ""},
		{"a:u{x}", "a:{y}0", Overlapping, ""},
		{"a:{x:hex}", "a:{y:int}", Overlapping, ""},
		{"a:{x:enum(A,B)}", "a:{y:enum(B,C)}", Overlapping, "a:B"},
		{"a:{x:enum(A,B)}", "a:{y:enum(C,D)}", Disjoint, ""},
		{"a:{d:date}", "a:{r:region}", Disjoint, ""},
		{"a:{d:date}", "a:{n:int}", MoreSpecific, ""},
		{"a:{h:hash}", "a:{x:hex}", MoreSpecific, ""},
		{"{{o:{id}}}:i", "{{o:{id:int}}}:i", MoreGeneral, ""},
	} {
		t.Run(tt.a+" vs "+tt.b, func(t *testing.T) {
			a, b := MustParse(tt.a, ':'), MustParse(tt.b, ':')
			e := Relate(a, b)
			if e.Relation != tt.want {
				t.Fatalf("Relate = %v (%s), want %v", e.Relation, e, tt.want)
			}
			if tt.witness != "" && e.Witness != tt.witness {
				t.Errorf("witness = %q, want %q", e.Witness, tt.witness)
			}
			checkExplanation(t, a, b, e)
			// The relation is symmetric up to direction.
			r := Relate(b, a)
			flip := map[Relation]Relation{Disjoint: Disjoint, Equal: Equal, Overlapping: Overlapping, MoreSpecific: MoreGeneral, MoreGeneral: MoreSpecific}
			if r.Relation != flip[e.Relation] {
				t.Errorf("Relate(b, a) = %v, want %v", r.Relation, flip[e.Relation])
			}
		})
	}
}

func checkExplanation(t *testing.T, a, b *Template, e Explanation) {
	t.Helper()
	if e.Relation == Disjoint {
		return
	}
	if !a.Matches(e.Witness) || !b.Matches(e.Witness) {
		t.Errorf("witness %q does not match both %q and %q", e.Witness, a, b)
	}
	if e.OnlyA != "" && (!a.Matches(e.OnlyA) || b.Matches(e.OnlyA)) {
		t.Errorf("OnlyA %q is not a key of %q alone", e.OnlyA, a)
	}
	if e.OnlyB != "" && (!b.Matches(e.OnlyB) || a.Matches(e.OnlyB)) {
		t.Errorf("OnlyB %q is not a key of %q alone", e.OnlyB, b)
	}
	wantA := e.Relation == Overlapping || e.Relation == MoreGeneral
	wantB := e.Relation == Overlapping || e.Relation == MoreSpecific
	if (e.OnlyA != "") != wantA || (e.OnlyB != "") != wantB {
		t.Errorf("%v: OnlyA=%q OnlyB=%q", e.Relation, e.OnlyA, e.OnlyB)
	}
}

func TestMatcherMostSpecificWins(t *testing.T) {
	srcs := []string{
		"promo:{x}:{y}",         // 0
		"promo:sku:{id}",        // 1
		"promo:sku:{id:int}",    // 2
		"promo:sku:{r:region}",  // 3 (⊂ 2 though scores tie)
		"promo:{x}:1001",        // 4
		"order:order:{id}:base", // 5
		"order:order:{id}:base", // 6 duplicate: first listed wins
		"a:{x:int}:b",           // 7
		"a:{y:hex}:{z}",         // 8
	}
	var ts []*Template
	for _, s := range srcs {
		ts = append(ts, MustParse(s, ':'))
	}
	m := Compile(ts)
	for _, tt := range []struct {
		key  string
		want int
	}{
		// promo:sku:{id:int} scores (4,4,1), promo:{x}:1001 (4,0,4): the
		// template whose earlier segment is literal wins.
		{"promo:sku:1001", 2},
		{"promo:sku:abc", 1},
		{"promo:sku:42", 2},
		{"promo:sku:110101", 3},
		{"promo:other:thing", 0},
		{"order:order:7:base", 5},
		{"a:12:b", 7},
		{"a:ff:b", 8},
		{"nothing", -1},
		{"", -1},
		{"promo:sku", -1},
	} {
		if got := m.Lookup(tt.key); got != tt.want {
			t.Errorf("Lookup(%q) = %d (%s), want %d", tt.key, got, nameOf(ts, got), tt.want)
		}
	}
	// Lookup agrees with a linear scan choosing by rank.
	for _, k := range []string{"promo:sku:1001", "promo:a:1001", "a:1:b", "a:1:c"} {
		i := m.Lookup(k)
		if i >= 0 && !ts[i].Matches(k) {
			t.Errorf("Lookup(%q) = %d which does not match", k, i)
		}
	}
}

func nameOf(ts []*Template, i int) string {
	if i < 0 {
		return "none"
	}
	return ts[i].String()
}

func TestOverlaps(t *testing.T) {
	var ts []*Template
	for _, s := range []string{"promo:{x}:1001", "promo:sku:{id:int}", "order:{id:int}:base", "order:{id:uuid}:base", "cache:{a}:{b}"} {
		ts = append(ts, MustParse(s, ':'))
	}
	ov := Compile(ts).Overlaps()
	if len(ov) != 1 || ov[0].A != 0 || ov[0].B != 1 || ov[0].Explanation.Witness != "promo:sku:1001" {
		t.Fatalf("Overlaps = %+v", ov)
	}
}

func TestExampleMatches(t *testing.T) {
	for _, s := range []string{"order:order:{orderId:int}:base", "verify:sms:{phone:hash}:{scene:enum(LOGIN,RESET_PWD,BIND)}", "x:{a:uuid}:{b:date}{c:int}:{r:region}:{h:hex}:u{x}"} {
		tpl := MustParse(s, ':')
		if ex := tpl.Example(); !tpl.Matches(ex) {
			t.Errorf("Example %q of %q does not match it", ex, s)
		}
	}
}

func TestLookupAllocs(t *testing.T) {
	var ts []*Template
	for _, s := range []string{"order:order:{orderId:int}:base", "promo:sku:{id:int}", "promo:{x}:1001", "auth:session:u{userId}"} {
		ts = append(ts, MustParse(s, ':'))
	}
	m := Compile(ts)
	allocs := testing.AllocsPerRun(100, func() {
		m.Lookup("order:order:1001:base")
		m.Lookup("auth:session:u42")
		m.Lookup("unknown:key:here")
	})
	if allocs != 0 {
		t.Errorf("Lookup allocates %v times per run, want 0", allocs)
	}
}

// TestEscapeLiteral: a text with braces, escaped, is a template that
// matches that text and nothing else.
func TestEscapeLiteral(t *testing.T) {
	for _, s := range []string{"", "plain:text", "a{b}c", "{", "}}", "{id:int}", "x{{y"} {
		esc := EscapeLiteral(s)
		if !strings.ContainsAny(s, "{}") && esc != s {
			t.Errorf("EscapeLiteral(%q) = %q, want it unchanged", s, esc)
		}
		if s == "" {
			continue
		}
		tmpl, err := Parse(esc, ':')
		if err != nil {
			t.Fatalf("Parse(EscapeLiteral(%q) = %q): %v", s, esc, err)
		}
		if len(tmpl.Placeholders()) != 0 {
			t.Errorf("EscapeLiteral(%q) = %q has placeholders", s, esc)
		}
		if _, ok := tmpl.Match(s); !ok {
			t.Errorf("%q does not match its own escape %q", s, esc)
		}
		if _, ok := tmpl.Match(s + "x"); ok {
			t.Errorf("%q matches %q", esc, s+"x")
		}
	}
}

// byteClasses numbers the classes as the signature of every byte (its
// membership in each set, classes numbered by first byte) does.
func TestByteClasses(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		sets := make([]bset, rng.IntN(6))
		for i := range sets {
			for range rng.IntN(4) {
				lo := byte(rng.IntN(256))
				sets[i].addRange(lo, lo+byte(rng.IntN(256-int(lo))))
			}
		}
		var want [256]uint16
		sig := map[string]uint16{}
		for b := range 256 {
			key := ""
			for _, s := range sets {
				if s.has(byte(b)) {
					key += "1"
				} else {
					key += "0"
				}
			}
			c, ok := sig[key]
			if !ok {
				c = uint16(len(sig))
				sig[key] = c
			}
			want[b] = c
		}
		var got [256]uint16
		n := byteClasses(sets, &got)
		if got != want || n != len(sig) {
			t.Fatalf("sets %v: classes %v (%d), want %v (%d)", sets, got, n, want, len(sig))
		}
	}
}

// literalDFA builds what buildDFA builds of one literal part.
func TestLiteralDFA(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	lits := []string{"", "a", "aba", "order", "\x00\xff", "v2", "fam5"}
	for range 500 {
		b := make([]byte, rng.IntN(12))
		for i := range b {
			b[i] = byte(rng.IntN(256))
			if rng.IntN(2) == 0 {
				b[i] = "abc01"[rng.IntN(5)]
			}
		}
		lits = append(lits, string(b))
	}
	for _, lit := range lits {
		got, want := literalDFA(lit), buildDFA([]Part{{Lit: lit}})
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: literalDFA %+v\nbuildDFA %+v", lit, got, want)
		}
	}
}
