package inventory

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/keytmpl"
	"github.com/keyguard/keyguard/naming"
	"github.com/keyguard/keyguard/registry"
)

// suggest writes a registry entry for an inferred family, indented to go
// under keys: in keyguard.yaml. Everything a person must decide is marked
// FILL-IN; the snippet loads as is. taken holds the templates suggested
// so far: an entry that would share keys with one of them is not
// suggested (the larger family, suggested first, covers them), so that
// the suggestions pasted together lint clean.
func (a *Aggregator) suggest(g *group, taken *[]*keytmpl.Template) string {
	if g.binary {
		return ""
	}
	name := a.stripEnv(g.name)
	var firstNote string
	if g.firstPH && !g.firstVaries && g.first != "" {
		// Every key starts with one value where inference put a
		// placeholder (shop3 of shop{n:int}): a registry's template starts
		// with its literal domain.
		if i := headEnd(name, a.reg.Separator); i > 0 {
			lit := keytmpl.EscapeLiteral(g.first)
			name, firstNote = lit+name[i:], fmt.Sprintf("every key starts with %q: the entry keeps it as its domain", g.first)
		}
	}
	name, notes, ok := a.suggestable(name, g.example)
	if !ok {
		return ""
	}
	if g.firstPH && g.firstVaries {
		firstNote = "these keys start with more than one value where the template has a placeholder: lint asks for a literal domain first; write one entry per value, or move the keys under one domain (keyguard migrate)"
	}
	if firstNote != "" {
		notes = append([]string{firstNote}, notes...)
	}
	t, err := keytmpl.Parse(a.full(name), a.reg.Separator)
	if err != nil {
		return ""
	}
	for _, o := range *taken {
		if keytmpl.Relate(t, o).Relation != keytmpl.Disjoint {
			return ""
		}
	}
	*taken = append(*taken, t)
	d := registry.Draft{Entry: registry.Entry{Key: name}, Above: notes, Notes: map[string]string{}}
	best, n := -1, int64(0)
	for t, c := range g.types[:typeModule] {
		if c > n {
			best, n = t, c
		}
	}
	if best >= 0 {
		d.Type = report.TypeNames[best]
	}
	switch {
	case g.ttl.n > 0:
		d.TTL = niceTTL(g.ttl.max)
		d.Notes["ttl"] = "longest remaining TTL seen: " + human.Duration(g.ttl.max)
		if g.noTTL > 0 {
			d.Notes["ttl"] += "; " + haveText(g.noTTL) + " none"
		}
	default:
		d.TTL = time.Hour
		d.Notes["ttl"] = "FILL-IN: none of these keys has a TTL; choose one, or write persistent: true instead"
	}
	if _, ok := a.reg.Domain(g.domain); !ok {
		d.Owner, d.Notes["owner"] = "FILL-IN", "the team that writes these keys"
	}
	if c := g.fs.census; c != nil && !c.overflow && c.keys > 0 {
		st := newStyle(g.name, g.kind, g.owner, nil, c)
		ids := false
		cut := rareCut(st.n)
		for _, f := range slices.Sorted(maps.Keys(st.df)) {
			if st.df[f] <= cut {
				continue // a stray field, or another writer's: not declared
			}
			if strings.Contains(f, "#") { // a name holding an ID: the value is a map
				ids = true
				continue
			}
			d.Fields = append(d.Fields, f)
		}
		if slices.ContainsFunc(d.Fields, func(f string) bool { return !utf8.ValidString(f) }) {
			d.Fields = nil // a field name YAML cannot hold: declare none rather than a wrong set
		}
		if len(d.Fields) > 0 {
			d.Notes["fields"] = fmt.Sprintf("the fields its %d values hold (rare ones left out)", c.keys)
			if fs := g.fs; fs.foreign > 0 {
				d.Notes["fields"] += fmt.Sprintf("; %s (%s): the audit reports each once this is declared (value-format)",
					human.Plural(fs.foreign, "other string"), formList(fs.forms))
			}
			if ids {
				d.FieldsExtra, d.Notes["fields_extra"] = true, "besides them, fields named by IDs"
			}
		}
	}
	d.Desc = "FILL-IN: inferred from " + human.Plural(g.keys, "key")
	if g.example != "" && len(g.example) <= 80 && !strings.ContainsAny(g.example, "\x00\n\r") && utf8.ValidString(g.example) {
		if _, pii := naming.FindPII(g.example); !pii {
			d.Desc += ", e.g. " + g.example
		}
	}
	var b strings.Builder
	w := registry.NewWriter(&b)
	w.Entry(d)
	if w.Err() != nil {
		return "" // text YAML cannot hold (not UTF-8): no entry to paste
	}
	return b.String()
}

// niceTTL rounds an observed remaining TTL up to a round policy value.
func niceTTL(d time.Duration) time.Duration {
	for _, v := range []time.Duration{30 * time.Second, time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute,
		30 * time.Minute, time.Hour, 2 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour, 7 * 24 * time.Hour, 30 * 24 * time.Hour} {
		if d <= v {
			return v
		}
	}
	return d.Round(24 * time.Hour)
}

// full is the template text n with the registry's env prefix.
func (a *Aggregator) full(n string) string {
	if a.reg.Env != "" {
		return a.reg.Env + string(a.reg.Separator) + n
	}
	return n
}

// suggestable makes an inferred template fit to paste: placeholders whose
// example value is personal data become {phone:hash} (or email, idcard),
// and a template that would overlap a registered one is narrowed, left to
// right, to the example's literal values until it does not. ok is false
// when no narrowing helps or the template does not parse.
func (a *Aggregator) suggestable(name, example string) (string, []string, bool) {
	sep := a.reg.Separator
	full := a.full
	t, err := keytmpl.Parse(full(name), sep)
	if err != nil {
		return "", nil, false
	}
	var notes []string
	var caps []keytmpl.Capture
	hashed := map[string]bool{} // placeholders inference made :hash, which stand for personal data
	for _, p := range t.Placeholders() {
		hashed[p.Name] = p.Kind == keytmpl.Hash
	}
	if example != "" {
		// The example holds the datum a :hash placeholder stands for:
		// match it with those placeholders taking any value.
		if open, err := keytmpl.Parse(full(strings.ReplaceAll(name, ":hash}", "}")), sep); err == nil {
			caps, _ = open.Match(example)
		}
	}
	for _, p := range t.Placeholders() {
		if what, ok := naming.PIIName(p.Name); ok && hashed[p.Name] {
			article := "a"
			if strings.HasPrefix(what, "e") {
				article = "an"
			}
			notes = append(notes, fmt.Sprintf("these keys hold %s %s in clear: the template stores a hash of it instead; move the keys (keyguard migrate) once writers build them with it", article, what))
		}
	}
	for _, c := range caps {
		if hashed[c.Name] {
			continue
		}
		what, pii := naming.FindPII(c.Value)
		if !pii {
			continue
		}
		kind, held := "phone", "a phone number"
		switch {
		case strings.Contains(what, "e-mail"):
			kind, held = "email", "an e-mail address"
		case strings.Contains(what, "ID"):
			kind, held = "idcard", "an ID-card number"
		}
		if next, ok := replacePlaceholder(name, c.Name, "{"+kind+":hash}"); ok {
			name = next
			notes = append(notes, fmt.Sprintf("these keys hold %s in clear: the template stores a hash of it instead; move the keys (keyguard migrate) once writers build them with it", held))
		}
	}
	for _, c := range caps { // narrow while it overlaps a registered template
		if _, pii := naming.FindPII(c.Value); pii || hashed[c.Name] {
			continue // never a personal datum as literal text
		}
		t, err = keytmpl.Parse(full(name), sep)
		if err != nil {
			return "", nil, false
		}
		e := a.overlapping(t)
		if e == nil {
			return name, notes, true
		}
		lit := keytmpl.EscapeLiteral(c.Value)
		next, ok := replacePlaceholder(name, c.Name, lit)
		if !ok {
			break
		}
		name = next
		notes = append(notes, fmt.Sprintf("narrowed to %q: {%s} would overlap %s, which %s owns", c.Value, c.Name, e.Key, orNobody(e.Owner)))
	}
	if t, err = keytmpl.Parse(full(name), sep); err != nil || a.overlapping(t) != nil {
		return "", nil, false
	}
	return name, notes, true
}

// overlapping returns a registered template sharing keys with t (among
// those of its first segment), or nil.
func (a *Aggregator) overlapping(t *keytmpl.Template) *registry.Entry {
	first, fixed := t.Segments()[0].Literal()
	for _, e := range a.reg.Entries {
		if ef, ok := e.Template.Segments()[0].Literal(); fixed && ok && ef != first {
			continue
		}
		if keytmpl.Relate(t, e.Template).Relation != keytmpl.Disjoint {
			return e
		}
	}
	return nil
}

// replacePlaceholder replaces the placeholder called name ({name} or
// {name:kind}) in the template text by with.
func replacePlaceholder(tmpl, name, with string) (string, bool) {
	for _, open := range []string{"{" + name + "}", "{" + name + ":"} {
		i := strings.Index(tmpl, open)
		if i < 0 || i > 0 && tmpl[i-1] == '{' {
			continue
		}
		j := strings.IndexByte(tmpl[i:], '}')
		if open[len(open)-1] == '}' {
			j = len(open) - 1
		}
		if j < 0 {
			continue
		}
		return tmpl[:i] + with + tmpl[i+j+1:], true
	}
	return tmpl, false
}

func orNobody(s string) string {
	if s == "" {
		return "nobody"
	}
	return s
}

// haveText is "1 key has", "3 keys have".
func haveText(n int64) string {
	if n == 1 {
		return "1 key has"
	}
	return human.Plural(n, "key") + " have"
}
