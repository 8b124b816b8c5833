package keyshape

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/keytmpl"
	"github.com/keyguard/keyguard/registry"
)

// Verdict is what a shape is to the registry.
type Verdict struct {
	// Rule is finding.RawKey when the shape is, or may be, a key of a
	// registered template, finding.UnregisteredCode when it cannot be.
	Rule string
	// Fits are the entries that hold every key the shape builds, provided
	// each hole's value fits its placeholder; most specific first.
	Fits []*registry.Entry
	// Possible are the entries the shape may build when its last hole is a
	// suffix of several segments; set only when Fits is empty.
	Possible []*registry.Entry
	// Opaque: the whole key is one value the scan cannot follow.
	Opaque bool
}

// Classifier relates code shapes to one registry's templates. It caches
// verdicts by shape and is safe for concurrent use.
type Classifier struct {
	reg     *registry.Registry
	entries []entry
	names   map[Lang][]string

	mu    sync.Mutex
	cache map[string]Verdict
}

type entry struct {
	e     *registry.Entry
	shape *keytmpl.Template // e's template with every placeholder widened to {any}
	segs  int
}

// NewClassifier prepares the registry's templates for Classify.
func NewClassifier(reg *registry.Registry) *Classifier {
	c := &Classifier{reg: reg, cache: map[string]Verdict{}, names: builderNames(reg)}
	for _, e := range reg.Entries {
		c.entries = append(c.entries, entry{e: e, shape: widen(e.Template), segs: len(e.Template.Segments())})
	}
	return c
}

// Registry returns the registry the classifier was built from.
func (c *Classifier) Registry() *registry.Registry { return c.reg }

// widen replaces every placeholder of t with an {any} one: the template's
// shape, which the holes of code are compared with.
func widen(t *keytmpl.Template) *keytmpl.Template {
	var b strings.Builder
	n := 0
	for i, s := range t.Segments() {
		if i > 0 {
			b.WriteByte(t.Separator())
		}
		for _, p := range s.Parts {
			if !p.IsPlaceholder() {
				writeEscaped(&b, p.Lit)
				continue
			}
			fmt.Fprintf(&b, "{p%d}", n)
			n++
		}
	}
	return keytmpl.MustParse(b.String(), t.Separator())
}

// Classify decides what the shape is (see the package doc for the relation).
func (c *Classifier) Classify(s Shape) Verdict {
	k := s.template()
	c.mu.Lock()
	v, ok := c.cache[k]
	c.mu.Unlock()
	if ok {
		return v
	}
	v = c.classify(s, k)
	c.mu.Lock()
	c.cache[k] = v
	c.mu.Unlock()
	return v
}

// classify is Classify without the cache; tmpl is s.template().
func (c *Classifier) classify(s Shape, tmpl string) Verdict {
	if key, ok := s.Literal(); ok {
		if e := c.reg.Lookup(key); e != nil {
			return Verdict{Rule: finding.RawKey, Fits: []*registry.Entry{e}}
		}
		return Verdict{Rule: finding.UnregisteredCode}
	}
	if len(s.Parts) == 1 {
		return Verdict{Rule: finding.RawKey, Opaque: true}
	}
	ct, err := keytmpl.Parse(tmpl, c.reg.Separator)
	if err != nil {
		// A shape keytmpl cannot express (Spring's name::key has an empty
		// segment): a key of no template unless one starts with its
		// leading text; then say it is hand-built rather than guess.
		lead := ""
		if !s.Parts[0].Hole {
			lead = s.Parts[0].Lit
		}
		for _, en := range c.entries {
			if lead == "" || strings.HasPrefix(en.e.Key, lead) {
				return Verdict{Rule: finding.RawKey, Opaque: true}
			}
		}
		return Verdict{Rule: finding.UnregisteredCode}
	}
	var fits []*registry.Entry
	var witness string
	for _, en := range c.entries {
		if r := keytmpl.Relate(ct, en.shape).Relation; r != keytmpl.Equal && r != keytmpl.MoreSpecific {
			continue
		}
		x := keytmpl.Relate(ct, en.e.Template)
		if x.Relation == keytmpl.Disjoint {
			continue
		}
		if witness == "" {
			witness = x.Witness
		}
		fits = append(fits, en.e)
	}
	if len(fits) > 0 {
		return Verdict{Rule: finding.RawKey, Fits: mostSpecificFirst(fits, c.reg.Lookup(witness))}
	}
	if p := c.possible(s); len(p) > 0 {
		return Verdict{Rule: finding.RawKey, Possible: p}
	}
	return Verdict{Rule: finding.UnregisteredCode}
}

// mostSpecificFirst moves the entry the registry's matcher picks for a
// shared key to the front.
func mostSpecificFirst(fits []*registry.Entry, best *registry.Entry) []*registry.Entry {
	for i, e := range fits {
		if e == best && i > 0 {
			out := append([]*registry.Entry{e}, fits[:i]...)
			return append(out, fits[i+1:]...)
		}
	}
	return fits
}

// possible lists the entries a shape ending in an unknown text value may
// build when that value is a suffix of one or more whole segments
// ("user:" + rest): the shape's head followed by 1..n segments of any text.
func (c *Classifier) possible(s Shape) []*registry.Entry {
	last := s.Parts[len(s.Parts)-1]
	if !last.Hole || last.Kind != keytmpl.Any {
		return nil
	}
	head := Shape{Parts: s.Parts[:len(s.Parts)-1]}.template()
	maxSegs := 0
	for _, en := range c.entries {
		maxSegs = max(maxSegs, en.segs)
	}
	sep := string(c.reg.Separator)
	seen := map[*registry.Entry]bool{}
	var out []*registry.Entry
	tail := "{t0}"
	for n := 1; n <= maxSegs; n++ {
		t, err := keytmpl.Parse(head+tail, c.reg.Separator)
		if err != nil {
			return out
		}
		for _, en := range c.entries {
			if !seen[en.e] && en.segs >= len(t.Segments()) && keytmpl.Relate(t, en.e.Template).Relation != keytmpl.Disjoint {
				seen[en.e] = true
				out = append(out, en.e)
			}
		}
		tail += sep + "{t" + strconv.Itoa(n) + "}"
	}
	return out
}

// Arg is the value a builder's placeholder gets in a suggested call: one of
// the shape's holes, or literal text the shape carries in its place.
type Arg struct {
	Hole        int    // index into the shape's holes; -1 for literal text
	Lit         string // the literal text when Hole is -1
	Placeholder keytmpl.Placeholder
}

// Args maps the shape onto e's placeholders for a suggested builder call:
// each placeholder must take exactly one hole or literal text only. It
// reports false when the shape does not line up (a hole spread over two
// placeholders, literal text in a {x:hash} placeholder).
func (c *Classifier) Args(s Shape, e *registry.Entry) ([]Arg, bool) {
	markers := []string{}
	var key strings.Builder
	for _, p := range s.Parts {
		if !p.Hole {
			key.WriteString(p.Lit)
			continue
		}
		// 16 digits: a value of {x}, {x:int}, {x:hex} and {x:hash} alike.
		m := fmt.Sprintf("1%015d", 777000+len(markers))
		markers = append(markers, m)
		key.WriteString(m)
	}
	caps, ok := e.Template.Match(key.String())
	if !ok {
		return nil, false
	}
	phs := e.Template.Placeholders()
	used := make([]bool, len(markers))
	args := make([]Arg, len(caps))
	for i, cp := range caps {
		args[i] = Arg{Hole: -1, Lit: cp.Value, Placeholder: phs[i]}
		for h, m := range markers {
			if cp.Value == m {
				args[i].Hole, args[i].Lit = h, ""
				used[h] = true
			} else if strings.Contains(cp.Value, m) {
				return nil, false
			}
		}
		if args[i].Hole < 0 && phs[i].Kind == keytmpl.Hash {
			return nil, false
		}
	}
	for _, u := range used {
		if !u {
			return nil, false
		}
	}
	return args, true
}
