package investigate

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/registry"
)

const investigateHint = "see docs/investigate.md for how to read the evidence"

// writers tells who wrote each key, whether the registry allows it, and
// the fix it implies.
func (c *conclusion) writers() {
	unnamed := map[string]bool{}
	var readers []string // told after the writers
	for i := range c.acts {
		a := &c.acts[i]
		e := c.p.reg.Lookup(a.Key)
		for _, w := range a.Writers {
			if !w.Named && w.Service != unknownCaller {
				unnamed[w.Service] = true
			}
		}
		switch {
		case len(a.Writers) > 1:
			c.secondWriter(a, e)
		case len(a.Writers) == 1 && e == nil:
			w := &a.Writers[0]
			c.say("%s %s; only %s wrote it during the capture", code(a.Key), c.unregistered(a.Key), c.writerText(w))
			c.fix(w, a.Key)
		case len(a.Writers) == 1 && a.Writers[0].Allowed == "no":
			w := &a.Writers[0]
			msg := fmt.Sprintf("%s was written only by %s during the capture, but the registry gives %s to %s",
				code(a.Key), c.writerText(w), code(e.Key), e.Owner)
			c.say("%s", msg)
			c.add(finding.Finding{Rule: finding.ForeignWriter, Severity: finding.Error, Key: a.Key, Message: msg, Hint: c.fix(w, a.Key)})
		}
		for j := range a.Readers {
			rd := &a.Readers[j]
			readers = append(readers, fmt.Sprintf("%s only read %s (%s): not a writer", rd.Service, code(a.Key), commandSummary(rd.Commands, 3)))
		}
	}
	c.r.Conclusion = append(c.r.Conclusion, readers...)
	if len(unnamed) > 0 {
		names := slices.Sorted(maps.Keys(unnamed))
		c.say("connections from %s carry no client name, so services on one host look alike: name them (CLIENT SETNAME; the Go SDK's redishook.NameConnections) and run again",
			joinAnd(names))
	}
}

func (c *conclusion) secondWriter(a *KeyActivity, e *registry.Entry) {
	var parts []string
	allowed := true
	for i := range a.Writers {
		parts = append(parts, c.writerText(&a.Writers[i]))
		allowed = allowed && a.Writers[i].Allowed == "yes"
	}
	msg := fmt.Sprintf("%s is written by %d clients: %s", code(a.Key), len(a.Writers), joinAnd(parts))
	switch {
	case e == nil:
		msg += "; the key " + c.unregistered(a.Key)
	default:
		msg += fmt.Sprintf("; the registry gives %s to %s", code(e.Key), e.Owner)
		if len(e.Writers) > 0 {
			msg += " (writers: " + strings.Join(e.Writers, ", ") + ")"
		}
	}
	c.say("%s", msg)
	sev, hint := finding.Error, ""
	if allowed {
		sev = finding.Info
		msg += "; every writer is allowed"
	}
	for i := range a.Writers {
		if f := c.fix(&a.Writers[i], a.Key); f != "" {
			hint = f
		}
	}
	if hint == "" && !allowed {
		hint = "name the connections of every service (CLIENT SETNAME) so that the registry can say which writer is foreign"
	}
	c.add(finding.Finding{Rule: finding.SecondWriter, Severity: sev, Key: a.Key, Message: msg, Hint: hint})
}

// writerText is "promo-service (127.0.0.1, HSET ×12 via EVALSHA 1a2b3c4d,
// style A {…}, TTL 10m)".
func (c *conclusion) writerText(w *Writer) string {
	var d []string
	hosts := map[string]bool{}
	for _, a := range w.Addrs {
		hosts[hostOf(a)] = true
	}
	if w.Named {
		d = append(d, strings.Join(slices.Sorted(maps.Keys(hosts)), ", "))
	}
	cmds := commandSummary(w.Commands, 3)
	switch {
	case w.ViaScript > 0 && len(w.Scripts) > 0:
		cmds += " via " + strings.Join(w.Scripts, ", ")
	case w.ViaMulti > 0:
		cmds += " in MULTI/EXEC"
	}
	d = append(d, cmds)
	for _, id := range w.Styles {
		for i := range c.set.Styles {
			if c.set.Styles[i].ID == id {
				d = append(d, "style "+c.set.Styles[i].ID+" "+c.set.Styles[i].Label())
			}
		}
	}
	d = append(d, ttlSummary(w.TTLs))
	return w.Service + " (" + strings.Join(d, ", ") + ")"
}

// fix is the sentence that moves a foreign writer, "" for an allowed one.
func (c *conclusion) fix(w *Writer, key string) string {
	if w.Move == nil {
		return ""
	}
	var s string
	switch {
	case w.Move.Registered:
		s = fmt.Sprintf("%s should write %s (%s's template", w.Service, code(w.Move.Template), w.Move.Owner)
		if w.Move.Example != "" {
			s += ", here " + code(w.Move.Example)
		}
		s += ")"
	case w.Move.Owner != "":
		s = fmt.Sprintf("no template of %s fits what %s writes to %s: register one such as %s (owner %s) and move %s to it",
			w.Move.Owner, w.Service, code(key), code(w.Move.Template), w.Move.Owner, w.Service)
	case c.r.NoRegistry:
		s = fmt.Sprintf("declare a template of %s's own such as %s with its team as owner in a registry (keyguard init writes one), and move %s to it",
			w.Service, code(w.Move.Template), w.Service)
	default:
		s = fmt.Sprintf("the registry names no team for %s: register its own template such as %s with its team as owner, and move it there",
			w.Service, code(w.Move.Template))
	}
	c.r.Fixes = appendOnce(c.r.Fixes, s)
	return s
}

// valueFindings reports values that mix styles, keys that changed style
// or type during the run, templates whose keys hold different styles, and
// fields a template does not declare.
func (c *conclusion) valueFindings() {
	mixed := map[string]bool{}
	perKey := map[string][]int{} // styles of whole (unmixed) values per key
	for _, o := range c.set.Obs {
		if o.From == "write" {
			continue
		}
		if o.Mixed() {
			if !mixed[o.Key] {
				mixed[o.Key] = true
				msg := fmt.Sprintf("the value of %s mixes %d styles: %s", code(o.Key), len(o.Styles), c.styleTexts(o.Styles))
				c.say("%s", msg)
				c.add(finding.Finding{Rule: finding.MixedSchema, Severity: finding.Error, Key: o.Key, Message: msg,
					Hint: "two writers share this key: --monitor names them; " + investigateHint})
			}
			continue
		}
		for _, s := range o.Styles {
			perKey[o.Key] = appendOnceInt(perKey[o.Key], s)
		}
		c.valueFormat(o.Key, o.Shape)
		if len(o.Extra) > 0 && !mixed[o.Key] {
			e := c.p.reg.Lookup(o.Key)
			c.add(finding.Finding{Rule: finding.Schema, Severity: finding.Warning, Key: o.Key,
				Message: fmt.Sprintf("the value holds fields %s does not declare: %s", e.Key, strings.Join(o.Extra, ", ")),
				Hint:    "declare them in fields: (or fields_extra: allow), or find the writer that adds them (--monitor)"})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(perKey)) {
		if ss := perKey[k]; len(ss) > 1 && !mixed[k] {
			msg := fmt.Sprintf("%s held %d styles during the run: %s", code(k), len(ss), c.styleTexts(ss))
			c.say("%s", msg)
			c.add(finding.Finding{Rule: finding.MixedSchema, Severity: finding.Error, Key: k, Message: msg,
				Hint: "writers with different value formats take turns on this key: --monitor names them"})
		}
		if ts := c.types[k]; len(ts) > 1 {
			msg := fmt.Sprintf("%s changed type during the watch: %s", code(k), strings.Join(ts, ", "))
			c.say("%s", msg)
			c.addAs("type", finding.Finding{Rule: finding.MixedSchema, Severity: finding.Error, Key: k, Message: msg,
				Hint: "writers of different types take turns on this key (each one's reads fail on the other's value)"})
		}
	}
	c.templateStyles(perKey)
}

// valueFormat reports a string value that is not the JSON object its
// template declares the fields of, as the audits do (value-format).
func (c *conclusion) valueFormat(key string, sh Shape) {
	if sh.Type != "string" || !sh.Form.Foreign() {
		return
	}
	e := c.p.reg.Lookup(key)
	if e == nil || !e.JSONFields() || c.formSaid[key] { // said once: the look and the watch's samples see it again
		return
	}
	c.formSaid[key] = true
	msg := fmt.Sprintf("the value of %s is %s, not the JSON object %s declares (fields %s)", code(key), sh.Form, code(e.Key), strings.Join(e.Fields, ", "))
	c.say("%s", msg)
	c.add(finding.Finding{Rule: finding.ValueFormat, Severity: finding.Error, Key: key, Template: e.Key, Owner: e.Owner, Message: msg,
		Hint: "another writer stores its own format in this key: --monitor names it; " + investigateHint})
}

// templateStyles reports templates (or inferred families) whose keys hold
// different styles when no single key holds two.
func (c *conclusion) templateStyles(perKey map[string][]int) {
	groups := map[string]map[int][]string{} // template → style → keys
	for k, ss := range perKey {
		if len(ss) != 1 {
			continue
		}
		t := c.templateOf(k)
		if groups[t] == nil {
			groups[t] = map[int][]string{}
		}
		groups[t][ss[0]] = append(groups[t][ss[0]], k)
	}
	for _, t := range slices.Sorted(maps.Keys(groups)) {
		g := groups[t]
		if len(g) < 2 {
			continue
		}
		var parts []string
		idx := slices.Sorted(maps.Keys(g))
		for _, s := range idx {
			ks := g[s]
			sort.Strings(ks)
			parts = append(parts, fmt.Sprintf("%s in %s", c.styleText(s), joinAnd(codes(ks, 3))))
		}
		msg := fmt.Sprintf("keys of %s hold %d styles: %s", code(t), len(g), strings.Join(parts, "; "))
		c.say("%s", msg)
		f := finding.Finding{Rule: finding.MixedSchema, Severity: finding.Error, Template: t, Message: msg,
			Hint: "two writers with different formats use this template: --monitor names them"}
		if e := c.p.reg.EntryByKey(t); e != nil {
			f.Owner = e.Owner
		}
		c.add(f)
	}
}

// unregistered says that a key matching no template is not registered,
// and what it looks like: "is not in the registry (it looks like T)", or
// without a registry, where no key is, "is of the family T (no
// registry)".
func (c *conclusion) unregistered(key string) string {
	if c.r.NoRegistry {
		return fmt.Sprintf("is of the family %s (no registry)", code(c.templateOf(key)))
	}
	return fmt.Sprintf("is not in the registry (it looks like %s)", code(c.templateOf(key)))
}

// templateOf is the key's template, or the one it was inferred to follow.
func (c *conclusion) templateOf(key string) string {
	if k := c.info[key]; k != nil {
		if k.Template != "" {
			return k.Template
		}
		return k.Inferred
	}
	if e := c.p.reg.Lookup(key); e != nil {
		return e.Key
	}
	return c.p.reg.NewChecker().Infer(key)
}

// code quotes a key or template for a sentence: `k` for plain text, the
// escaped form for keys with other bytes, cut when long.
func code(s string) string {
	if len(s) > 200 || strings.ContainsAny(s, "`\n\r\t") || !utf8.ValidString(s) {
		return finding.Display(s)
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return finding.Display(s)
		}
	}
	return "`" + s + "`"
}

func codes(ks []string, limit int) []string {
	var out []string
	for i, k := range ks {
		if i == limit {
			out = append(out, fmt.Sprintf("%d more", len(ks)-limit))
			break
		}
		out = append(out, code(k))
	}
	return out
}
