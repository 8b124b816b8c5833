package inventory

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/registry"
)

// Value formats. One writer stores {activityId, discountType,
// discountValue} in promo:sku:1001, a second writer stores {couponAmount,
// promoTotal} in the same key, and the key ends up holding both. The
// second writer mostly writes its own keys, so its fields are
// characteristic of its own template and rare in the one it collides
// with — whatever their absolute share, from one key to about a third of
// the template.
//
// Each template's census (census.go) counts the field sets of its values.
// At report time a field f of template t is another owner's when some
// template u of another owner has it characteristically (declared in its
// fields:, or held by most of its values) and t has it rarely compared
// with u: share_t(f) < share_u(f) / 2 (a declared field counts as held
// by all of u's values); when t declares its fields, any field outside
// them that u has characteristically is u's, at any share. Fields only
// t's owner, or no other owner, writes are t's own at any rate: optional
// fields, never mixed-schema.
// Then, set by set:
//
//   - mixed-schema when the set holds another owner's fields: the
//     finding names the template (the one with the most of them) and its
//     owner, with how many values of each hold them;
//   - schema when the template declares its fields and the set holds
//     others, no other owner's;
//   - otherwise, for templates without declared fields, the fields of
//     the template are clustered by co-occurrence (below), and a set that
//     mixes two established styles of the one template is mixed-schema.
//
// Co-occurrence: two fields belong to one style when they appear
// together in more than half the values of the rarer of the two
// (2·both > min(df)). A style is established when at least max(2, 5%)
// of the values hold only its fields.

// style is what report time knows of a template's or family's values.
type style struct {
	name, kind, owner string
	entry             *registry.Entry
	declared, open    bool
	n                 int64            // values with field names
	df                map[string]int64 // values holding each field
	core              map[string]bool  // declared fields, or those most values hold
	c                 *census
}

// rareCut is the number of values at or under which a field is too rare
// to be suggested as a declared field of a template of n values (an
// entry that init --from-audit writes lists the others).
func rareCut(n int64) int64 { return max(3, n/100) }

func newStyle(name, kind, owner string, e *registry.Entry, c *census) *style {
	s := &style{name: name, kind: kind, owner: owner, entry: e, c: c, n: c.keys, df: map[string]int64{}, core: map[string]bool{}}
	for _, fs := range c.sigs {
		for _, f := range fs.names {
			s.df[f] += fs.count
		}
	}
	if e != nil && e.Fields != nil {
		s.declared, s.open = true, e.FieldsExtra
		for _, f := range normalizeFields(e.Fields) {
			s.core[f] = true
		}
		return s
	}
	for f, n := range s.df {
		if 2*n > s.n {
			s.core[f] = true
		}
	}
	return s
}

// styles are the styles of every template and family with a census.
func (a *Aggregator) styles() []*style {
	var out []*style
	for i, e := range a.reg.Entries {
		if c := a.tmplFields[i].census; c != nil && !c.overflow && c.keys > 0 {
			out = append(out, newStyle(e.Key, report.KindTemplate, e.Owner, e, c))
		}
	}
	for _, fs := range a.famFields {
		if c := fs.census; c != nil && !c.overflow && c.keys > 0 {
			out = append(out, newStyle(fs.name, report.KindPrefix, fs.owner, nil, c))
		}
	}
	slices.SortFunc(out, func(p, q *style) int { return cmp.Or(strings.Compare(p.kind, q.kind), strings.Compare(p.name, q.name)) })
	return out
}

// schemaFindings decides mixed-schema and schema from the censuses.
func (a *Aggregator) schemaFindings() (mixed, schema lateRule) {
	mixed.rule, schema.rule = finding.MixedSchema, finding.Schema
	all := a.styles()
	// Which templates hold each field characteristically: the candidates
	// for its other owner.
	holders := map[string][]*style{}
	for _, u := range all {
		if u.owner == "" || u.n < 3 {
			continue
		}
		for f := range u.core {
			holders[f] = append(holders[f], u)
		}
	}
	for _, t := range all {
		if t.open {
			continue
		}
		handled := map[*fieldSet]bool{}
		for _, fs := range t.c.sets() {
			if u, hit := t.foreign(fs.names, holders); u != nil {
				msg := fmt.Sprintf("holds %s, which %s writes in %s (%s of its %s values hold them); %s of this template's %s values hold them",
					listFields(hit), u.owner, u.name, human.Count(u.minDF(hit)), human.Count(u.n),
					human.Count(fs.count), human.Count(t.n))
				mixed.add(t, fs, msg, fmt.Sprintf("two writers share these keys: the writer of %s should write its own template; keyguard investigate --key KEY shows who writes them", u.name))
				handled[fs] = true
				continue
			}
			if extra := t.beyond(fs); t.declared && len(extra) > 0 {
				msg := fmt.Sprintf("holds %s, outside the template's declared fields (%s); %s of its %s values do",
					listFields(extra), listFields(slices.Sorted(maps.Keys(t.core))), human.Count(fs.count), human.Count(t.n))
				schema.add(t, fs, msg, "declare the fields in the registry if they belong here, or find the writer (keyguard investigate --key KEY)")
				handled[fs] = true
			}
		}
		if !t.declared {
			for _, m := range t.c.mixedStyles() {
				if !handled[m.set] {
					mixed.add(t, m.set, m.message(t.n), mixedHint)
				}
			}
		}
	}
	return mixed, schema
}

// beyond is what fs holds outside the declared fields, sorted.
func (t *style) beyond(fs *fieldSet) []string {
	var out []string
	for _, f := range fs.names {
		if !t.core[f] {
			out = append(out, f)
		}
	}
	return out
}

// share is u's share of values holding f as a fraction num/den; a
// declared field counts as held by every value.
func (u *style) share(f string) (num, den int64) {
	if u.declared && u.core[f] {
		return 1, 1
	}
	return u.df[f], u.n
}

// othersField reports whether f, which t's values hold, is u's: u holds
// it characteristically (the caller picked u from holders) and t rarely
// compared with u, under half of u's share. A template with declared
// fields says itself what is its own: any other field u holds is u's.
func (t *style) othersField(u *style, f string) bool {
	if t.declared {
		return !t.core[f]
	}
	num, den := u.share(f)
	return 2*t.df[f]*den < num*t.n
}

// foreign is the template of another owner whose fields names holds
// (the most of them; then the template with the most values; then by
// name), and those fields; nil when names holds no other owner's field.
func (t *style) foreign(names []string, holders map[string][]*style) (*style, []string) {
	var best *style
	var bestHit []string
	var seen []*style
	for _, f := range names {
		for _, u := range holders[f] {
			if u == t || u.owner == t.owner || slices.Contains(seen, u) {
				continue
			}
			seen = append(seen, u)
			var hit []string
			for _, g := range names {
				if u.core[g] && t.othersField(u, g) {
					hit = append(hit, g)
				}
			}
			if len(hit) == 0 {
				continue
			}
			if best == nil || len(hit) > len(bestHit) || len(hit) == len(bestHit) && (u.n > best.n || u.n == best.n && u.name < best.name) {
				best, bestHit = u, hit
			}
		}
	}
	return best, bestHit
}

// minDF is how many values hold every field of fs, at most.
func (t *style) minDF(fs []string) int64 {
	n := t.n
	for _, f := range fs {
		if t.declared && t.core[f] && t.df[f] == 0 {
			continue
		}
		n = min(n, t.df[f])
	}
	return n
}

// add lists the kept keys of fs under t, and counts the rest.
func (r *lateRule) add(t *style, fs *fieldSet, msg, hint string) {
	f := finding.Finding{Rule: r.rule, Severity: finding.Error, Template: t.name, Owner: t.owner, Message: clipText(msg), Hint: hint}
	for _, k := range fs.keys {
		f.Key = k.key
		r.items = append(r.items, newLate(&f, k.bytes, len(k.key), k.db, groupRef{t.kind, t.name, k.db}))
	}
	r.unlisted[finding.Error] += fs.count - int64(len(fs.keys))
}

func listFields(fs []string) string {
	if len(fs) > 8 {
		return strings.Join(fs[:8], ", ") + fmt.Sprintf(", …%d more", len(fs)-8)
	}
	return strings.Join(fs, ", ")
}

// normalizeFields copies the field names a walker gave into a sorted,
// unique, bounded list: the reserved __ns__ field is dropped, every run of
// letters and digits that holds a digit becomes '#' so that per-ID fields
// ("1001", "u1002", "a8f3e1") read as one name, and names are cut at
// maxFieldName bytes; at most maxFieldsPerKey names and maxFieldBytes
// bytes are kept.
func normalizeFields(in []string) []string {
	out := make([]string, 0, min(len(in), maxFieldsPerKey*2))
	var buf [maxFieldName]byte
	for _, f := range in {
		if f == "" || f == "__ns__" {
			continue
		}
		if len(f) > maxFieldName {
			f = f[:maxFieldName]
		}
		out = append(out, string(buf[:normalizeName(&buf, f)]))
	}
	slices.Sort(out)
	out = slices.Compact(out)
	n, total := 0, 0
	for n < len(out) && n < maxFieldsPerKey && total+len(out[n]) <= maxFieldBytes {
		total += len(out[n])
		n++
	}
	return out[:n:n]
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// mixedSet is a field set that mixes two established styles of one
// template.
type mixedSet struct {
	set    *fieldSet
	styles [][]string // its fields in each style it touches
	pure   []int64    // values holding only that style
}

// mixedStyles clusters the fields of the census into styles by
// co-occurrence (weighted by how many values hold each set) and returns
// the sets that mix two or more established styles. It is long because
// it is one small clustering (vocabulary, co-occurrence, union-find,
// support, verdict) whose tables each step reads.
func (c *census) mixedStyles() []mixedSet {
	sets := c.sets()
	var n int64
	idx := map[string]int{}
	var df []int64
	for _, s := range sets {
		n += s.count
		for _, f := range s.names {
			i, ok := idx[f]
			if !ok {
				i = len(df)
				idx[f] = i
				df = append(df, 0)
			}
			df[i] += s.count
		}
	}
	v := len(df)
	if n < 8 || v < 2 {
		return nil
	}
	// Fields of a single value say nothing about styles: they take no part.
	co := make([]int64, v*v)
	ids := make([][]int, len(sets))
	for j, s := range sets {
		for _, f := range s.names {
			if i := idx[f]; df[i] >= 2 {
				ids[j] = append(ids[j], i)
			}
		}
		for a, x := range ids[j] {
			for _, y := range ids[j][a+1:] {
				co[x*v+y] += s.count
				co[y*v+x] += s.count
			}
		}
	}
	parent := make([]int, v)
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	for x := 0; x < v; x++ {
		for y := x + 1; y < v; y++ {
			if c := co[x*v+y]; c > 0 && 2*c > min(df[x], df[y]) {
				parent[find(x)] = find(y)
			}
		}
	}
	pure := map[int]int64{}
	for j, fs := range ids {
		if len(fs) == 0 {
			continue
		}
		r := find(fs[0])
		one := true
		for _, f := range fs[1:] {
			one = one && find(f) == r
		}
		if one {
			pure[r] += sets[j].count
		}
	}
	minPure := max(2, (n*5+99)/100)
	var out []mixedSet
	for j, fs := range ids {
		var roots []int
		for _, f := range fs {
			if r := find(f); !slices.Contains(roots, r) && pure[r] >= minPure {
				roots = append(roots, r)
			}
		}
		if len(roots) < 2 {
			continue
		}
		m := mixedSet{set: sets[j]}
		for _, r := range roots {
			var names []string
			for _, f := range sets[j].names {
				if i, ok := idx[f]; ok && df[i] >= 2 && find(i) == r {
					names = append(names, f)
				}
			}
			m.styles = append(m.styles, names)
			m.pure = append(m.pure, pure[r])
		}
		out = append(out, m)
	}
	return out
}

func (m mixedSet) message(n int64) string {
	var parts, counts []string
	for i, st := range m.styles {
		parts = append(parts, "{"+listFields(st)+"}")
		counts = append(counts, human.Count(m.pure[i]))
	}
	return fmt.Sprintf("the value mixes %d field styles: %s; each style alone is in %s of the template's %s values, both in %s: two writers share this key",
		len(m.styles), strings.Join(parts, " and "), strings.Join(counts, " and "), human.Count(n), human.Count(m.set.count))
}

const mixedHint = "find the second writer (keyguard investigate --key KEY, or SDK writer records) and give each writer its own key"
