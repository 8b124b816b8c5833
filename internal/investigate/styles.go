package investigate

import (
	"slices"
	"sort"
	"strings"

	"github.com/keyguard/keyguard/internal/valueform"
	"github.com/keyguard/keyguard/naming"
	"github.com/keyguard/keyguard/registry"
)

// Shape is what one look at a value showed: its field names (hash fields,
// top-level JSON keys, a stream entry's fields) or, for a value without
// names, its kind.
type Shape struct {
	Type   string   `json:"type"`             // Redis type; "" when the key was gone
	Kind   string   `json:"kind,omitempty"`   // string values: json, text, integer…
	Fields []string `json:"fields,omitempty"` // sorted, NSField left out
	// Open: more fields than a style has, or field names that are IDs
	// (a map keyed by user, SKU…): no style.
	Open  bool `json:"open,omitempty"`
	Count int  `json:"count,omitempty"` // fields in an open value
	// Form is a string value's format as the audits judge it (a JSON
	// object, text, a number…), for value-format; Unknown for the rest.
	Form valueform.Form `json:"-"`
}

// newShape builds a Shape from field names as read, dropping the guard's
// reserved field and marking maps.
func newShape(typ, kind string, fields []string, total int) Shape {
	s := Shape{Type: typ, Kind: kind}
	ids := 0
	for _, f := range fields {
		if f == registry.NSField {
			total--
			continue
		}
		if naming.LooksLikeID(f) {
			ids++
		}
		s.Fields = append(s.Fields, f)
	}
	if total > maxFields || (len(s.Fields) > 2 && ids*2 > len(s.Fields)) {
		return Shape{Type: typ, Kind: kind, Open: true, Count: max(total, len(s.Fields))}
	}
	sort.Strings(s.Fields)
	s.Fields = slices.Compact(s.Fields)
	return s
}

// Observation is a shape seen for a key: its value when looked at
// ("value"), a sample during the watch ("watch"), or what a client wrote
// ("write").
type Observation struct {
	Key    string
	From   string
	Writer string // the writer's service for From "write"
	Shape  Shape
}

// DeclaredStyle is a field set the caller knows in advance: a template's
// declared fields today; styles learned per owner by a whole audit can be
// passed the same way.
type DeclaredStyle struct {
	Name     string // the template as written
	Owner    string
	Fields   []string
	Template *registry.Entry
}

// DeclaredStyles returns the declared field sets of every template of reg.
func DeclaredStyles(reg *registry.Registry) []DeclaredStyle {
	var out []DeclaredStyle
	for _, e := range reg.Entries {
		if len(e.Fields) > 0 {
			out = append(out, DeclaredStyle{Name: e.Key, Owner: e.Owner, Fields: e.Fields, Template: e})
		}
	}
	return out
}

// Style is one field set that belongs together: declared by a template,
// or learned from the fields that were seen together.
type Style struct {
	ID       string   `json:"id"` // "A", "B"…
	Fields   []string `json:"fields,omitempty"`
	Kind     string   `json:"kind,omitempty"`     // a style of values without names: their kind
	Declared string   `json:"declared,omitempty"` // the template that declares it
	Owner    string   `json:"owner,omitempty"`    // the declaring template's owner
	Keys     []string `json:"keys"`               // keys whose observations used it
	Writers  []string `json:"writers,omitempty"`  // services seen writing it
}

// Label is the style for a sentence: "{a, b, c}" or "(text)".
func (s *Style) Label() string {
	if s.Kind != "" {
		return "(" + s.Kind + ")"
	}
	return fieldList(s.Fields, 6)
}

func fieldList(fields []string, limit int) string {
	if len(fields) > limit {
		return "{" + strings.Join(fields[:limit], ", ") + ", +" + itoa(len(fields)-limit) + "}"
	}
	return "{" + strings.Join(fields, ", ") + "}"
}

// Styled is one observation explained by styles.
type Styled struct {
	Observation
	Styles []int    // indexes into StyleSet.Styles, own template's first
	Extra  []string // fields outside the own template's declared fields
}

// Mixed reports whether the observation mixes two or more styles.
func (s *Styled) Mixed() bool { return len(s.Styles) > 1 }

// StyleSet is the styles found and every observation explained by them.
type StyleSet struct {
	Styles []Style
	Obs    []Styled
}

// GroupStyles explains observations by styles. declared are the field
// sets known in advance (DeclaredStyles of the registry, and any learned
// elsewhere, such as per owner across an audit): each is a style. The
// fields none of them explains are grouped by co-occurrence: fields seen together in one value belong together,
// unless that value already holds fields of two groups (then it is the
// mixed one). own returns a key's template (nil when unregistered).
func GroupStyles(obs []Observation, declared []DeclaredStyle, own func(key string) *registry.Entry) *StyleSet {
	set := &StyleSet{}
	for _, d := range declared {
		set.Styles = append(set.Styles, Style{Fields: sortedCopy(d.Fields), Declared: d.Name, Owner: d.Owner})
	}
	lefts := make([][]string, len(obs))
	kinds := map[string]int{}
	for i, o := range obs {
		st := Styled{Observation: o}
		switch {
		case o.Shape.Open || o.Shape.Type == "":
		case len(o.Shape.Fields) == 0:
			if o.Shape.Kind != "" && o.Shape.Kind != KindEmpty {
				k, ok := kinds[o.Shape.Kind]
				if !ok {
					k = len(set.Styles)
					kinds[o.Shape.Kind] = k
					set.Styles = append(set.Styles, Style{Kind: o.Shape.Kind})
				}
				st.Styles = []int{k}
			}
		default:
			st.Styles, lefts[i], st.Extra = coverDeclared(o.Shape.Fields, own(o.Key), declared)
		}
		set.Obs = append(set.Obs, st)
	}
	comp := learnComponents(lefts)
	learned := map[string]int{} // component root → style index
	for i := range set.Obs {
		for _, f := range lefts[i] { // sorted, so a style's fields stay sorted
			r := comp.find(f)
			k, ok := learned[r]
			if !ok {
				k = len(set.Styles)
				learned[r] = k
				set.Styles = append(set.Styles, Style{})
			}
			set.Styles[k].Fields = appendOnce(set.Styles[k].Fields, f)
			set.Obs[i].Styles = appendOnceInt(set.Obs[i].Styles, k)
		}
	}
	for _, st := range set.Obs {
		for _, i := range st.Styles {
			s := &set.Styles[i]
			s.Keys = appendOnce(s.Keys, st.Key)
			if st.Writer != "" {
				s.Writers = appendOnce(s.Writers, st.Writer)
			}
		}
	}
	set.compact()
	return set
}

// coverDeclared explains fields by declared styles: the own template's
// first, then other templates' styles that take the most fields. Another
// template's style counts only when the value holds two or more of its
// fields and at least half of them: one shared name such as "id" is no
// evidence. It returns the styles, the fields left for learning, and the
// fields outside the own template's declaration.
func coverDeclared(fields []string, own *registry.Entry, declared []DeclaredStyle) (styles []int, left, extra []string) {
	rest := map[string]bool{}
	for _, f := range fields {
		rest[f] = true
	}
	if own != nil && len(own.Fields) > 0 {
		for i, d := range declared {
			if d.Template != own {
				continue
			}
			took := false
			for _, f := range d.Fields {
				took = took || rest[f]
				delete(rest, f)
			}
			if took {
				styles = append(styles, i)
			}
		}
		if own.FieldsExtra {
			return styles, nil, nil
		}
		for _, f := range fields {
			if rest[f] {
				extra = append(extra, f)
			}
		}
	}
	for len(rest) > 0 {
		best, n := -1, 0
		for i, d := range declared {
			if own != nil && d.Template == own {
				continue
			}
			c := 0
			for _, f := range d.Fields {
				if rest[f] {
					c++
				}
			}
			if c > n && c >= 2 && 2*c >= len(d.Fields) {
				best, n = i, c
			}
		}
		if best < 0 {
			break
		}
		styles = append(styles, best)
		for _, f := range declared[best].Fields {
			delete(rest, f)
		}
	}
	for _, f := range fields {
		if rest[f] {
			left = append(left, f)
		}
	}
	return styles, left, extra
}

// compact drops styles nothing used, renumbers the rest A, B… and dedups
// the fields of learned styles.
func (s *StyleSet) compact() {
	remap := make([]int, len(s.Styles))
	var kept []Style
	for i, st := range s.Styles {
		if len(st.Keys) == 0 {
			remap[i] = -1
			continue
		}
		remap[i] = len(kept)
		if st.Declared == "" {
			sort.Strings(st.Fields)
			st.Fields = slices.Compact(st.Fields)
		}
		st.ID = styleID(len(kept))
		kept = append(kept, st)
	}
	s.Styles = kept
	for i := range s.Obs {
		for j, x := range s.Obs[i].Styles {
			s.Obs[i].Styles[j] = remap[x]
		}
	}
}

func styleID(i int) string {
	if i < 26 {
		return string(rune('A' + i))
	}
	return "S" + itoa(i+1)
}

// components is a union-find over field names.
type components map[string]string

func (c components) find(f string) string {
	r, ok := c[f]
	if !ok {
		c[f] = f
		return f
	}
	if r == f {
		return f
	}
	root := c.find(r)
	c[f] = root
	return root
}

func (c components) union(a, b string) { c[c.find(a)] = c.find(b) }

// learnComponents groups field sets by co-occurrence. Smaller sets go
// first, so that the pure styles are known before the mixed value that
// holds two of them; a set whose known fields already fall in two groups
// joins nothing, and its new fields form a group of their own.
func learnComponents(sets [][]string) components {
	c := components{}
	order := make([][]string, 0, len(sets))
	for _, fs := range sets {
		if len(fs) > 0 {
			order = append(order, fs)
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return len(order[i]) < len(order[j]) })
	seen := map[string]bool{}
	for _, fs := range order {
		roots := map[string]bool{}
		var fresh []string
		for _, f := range fs {
			if seen[f] {
				roots[c.find(f)] = true
			} else {
				fresh = append(fresh, f)
			}
		}
		group := fs
		if len(roots) > 1 {
			group = fresh
		}
		for _, f := range group {
			seen[f] = true
			c.union(f, group[0])
		}
	}
	return c
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	sort.Strings(out)
	return out
}

func appendOnce(s []string, v string) []string {
	if slices.Contains(s, v) {
		return s
	}
	return append(s, v)
}

func appendOnceInt(s []int, v int) []int {
	if slices.Contains(s, v) {
		return s
	}
	return append(s, v)
}
