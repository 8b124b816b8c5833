package investigate

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/registry"
)

// parts is what the steps gathered, for the conclusion.
type parts struct {
	reg      *registry.Registry
	keys     []*KeyInfo
	watched  []*watched
	interval time.Duration
	caps     []*NodeCapture
	notify   *NotifyResult
	styles   []DeclaredStyle // the registry's declared fields and any given with Options
	self     string
	lost     []Span // what the watch and the captures did not observe
}

// conclusion builds the report's styles, findings, narrative and fixes.
type conclusion struct {
	r     *Report
	p     parts
	seen  map[string]bool // rule+key already reported
	info  map[string]*KeyInfo
	acts  []KeyActivity
	set   *StyleSet
	ttls  []TTLWatch
	types map[string][]string // key → types seen during the watch
	// formSaid: keys whose value-format the narrative told already.
	formSaid map[string]bool
}

func conclude(r *Report, p parts) {
	c := &conclusion{r: r, p: p, seen: map[string]bool{}, info: map[string]*KeyInfo{}, types: map[string][]string{}, formSaid: map[string]bool{}}
	for _, k := range p.keys {
		c.info[k.Key] = k
	}
	if len(p.caps) > 0 {
		c.acts = activities(p.reg, p.caps, p.self)
	}
	for _, w := range p.watched {
		t := analyzeTTL(w.key.Key, w.samples, p.interval)
		t.Unobserved = Millis(w.lost)
		c.ttls = append(c.ttls, t)
		for _, t := range w.types {
			if t != "none" {
				c.types[w.key.Key] = appendOnce(c.types[w.key.Key], t)
			}
		}
	}
	c.styles()
	c.writers()
	if r.Capture != nil && c.acts != nil {
		r.Capture.Keys = c.acts
	}
	c.valueFindings()
	c.ttlFindings()
	c.keyFindings()
	if len(r.Conclusion) == 0 || len(p.lost) > 0 {
		r.Conclusion = append(r.Conclusion, c.quiet())
	}
	if gaps := r.NotSearched(); len(gaps) > 0 {
		r.Conclusion = append(r.Conclusion, "the key search did not cover "+strings.Join(gaps, "; ")+": keys there were not looked at; run the investigation again")
	}
	c.captureNotes()
	sort.SliceStable(r.Findings, func(i, j int) bool { return r.Findings[i].Severity > r.Findings[j].Severity })
}

func (c *conclusion) say(format string, args ...any) {
	c.r.Conclusion = append(c.r.Conclusion, fmt.Sprintf(format, args...))
}

// add records a finding once per rule and key (or template).
func (c *conclusion) add(f finding.Finding) { c.addAs("", f) }

// addAs is add for a second finding of one rule on one key, told apart by
// kind.
func (c *conclusion) addAs(kind string, f finding.Finding) {
	id := f.Rule + "\x00" + f.Key + "\x00" + f.Template + "\x00" + kind
	if c.seen[id] {
		return
	}
	c.seen[id] = true
	if f.Key != "" && f.Template == "" {
		if e := c.p.reg.Lookup(f.Key); e != nil {
			f.Template, f.Owner = e.Key, e.Owner
		}
	}
	c.r.Findings = append(c.r.Findings, f)
}

// styles explains every value seen (looked at, sampled, written) by styles.
func (c *conclusion) styles() {
	var obs []Observation
	for _, k := range c.p.keys {
		obs = append(obs, Observation{Key: k.Key, From: "value", Shape: k.Shape})
	}
	for _, w := range c.p.watched {
		for _, s := range w.shapes {
			obs = append(obs, Observation{Key: w.key.Key, From: "watch", Shape: s})
		}
	}
	for _, a := range c.acts {
		for _, w := range a.Writers {
			for _, s := range writtenShapes(&w) {
				obs = append(obs, Observation{Key: a.Key, From: "write", Writer: w.Service, Shape: s})
			}
		}
	}
	c.set = GroupStyles(obs, c.p.styles, c.p.reg.Lookup)
	c.r.Styles = c.set.Styles
	for _, o := range c.set.Obs {
		ids := c.ids(o.Styles)
		switch o.From {
		case "write":
			for i := range c.acts {
				for j := range c.acts[i].Writers {
					w := &c.acts[i].Writers[j]
					if c.acts[i].Key == o.Key && w.Service == o.Writer {
						for _, id := range ids {
							w.Styles = appendOnce(w.Styles, id)
						}
					}
				}
			}
		default:
			if k := c.info[o.Key]; k != nil {
				for _, id := range ids {
					k.Styles = appendOnce(k.Styles, id)
				}
				sort.Strings(k.Styles)
			}
		}
	}
}

// writtenShapes is the shapes a writer's writes gave the key: the fields
// it set, and the kinds of string values without fields.
func writtenShapes(w *Writer) []Shape {
	var out []Shape
	typ := writeType(w)
	if len(w.Fields) > 0 {
		out = append(out, newShape(typ, "", w.Fields, len(w.Fields)))
	}
	for _, k := range w.Kinds {
		if k != KindJSON {
			out = append(out, Shape{Type: "string", Kind: k})
		}
	}
	return out
}

func (c *conclusion) ids(idx []int) []string {
	var out []string
	for _, i := range idx {
		out = append(out, c.set.Styles[i].ID)
	}
	return out
}

// styleText is "A {a, b} (declared by T, owner O)".
func (c *conclusion) styleText(i int) string {
	s := &c.set.Styles[i]
	t := s.ID + " " + s.Label()
	if s.Declared != "" {
		t += fmt.Sprintf(" (declared by %s, %s)", s.Declared, s.Owner)
	}
	return t
}

func (c *conclusion) styleTexts(idx []int) string {
	var parts []string
	for _, i := range idx {
		parts = append(parts, c.styleText(i))
	}
	return joinAnd(parts)
}

// joinAnd joins "a", "a and b", "a, b and c".
func joinAnd(parts []string) string {
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// noneExists reports whether no key named exists: none was there when
// looked at, and the watch saw none appear.
func (c *conclusion) noneExists() bool {
	for _, k := range c.p.keys {
		if k.Type != "none" || len(c.types[k.Key]) > 0 {
			return false
		}
	}
	return true
}

// missingText says that the keys named do not exist.
func (c *conclusion) missingText() string {
	if len(c.p.keys) == 1 {
		return finding.Display(c.p.keys[0].Key) + " does not exist"
	}
	return "none of the " + human.Plural(len(c.p.keys), "key") + " found exists any more"
}

// quiet is the conclusion when no step found a sign of a second writer.
// Spans not observed forbid it: no sign in samples not taken is no sign
// of anything.
func (c *conclusion) quiet() string {
	if len(c.p.lost) > 0 {
		var spans []string
		for _, s := range c.p.lost {
			spans = append(spans, s.String())
		}
		return "no conclusion about what was not observed (the connection was lost): " + strings.Join(spans, "; ") + "; run the investigation again"
	}
	unreadable, notRead, why := 0, 0, ""
	for _, k := range c.p.keys {
		switch {
		case k.Unreadable:
			unreadable++
		case k.NotRead != "":
			notRead++
			why = k.NotRead
		}
	}
	if unreadable > 0 && unreadable == len(c.p.keys) {
		return "the ACL user may read none of the " + human.Plural(len(c.p.keys), "key") + " found, so nothing is known of their values, TTLs or writers: grant it their key pattern (docs/audit-acl.md), or investigate as a user that may read them"
	}
	if notRead > 0 && unreadable+notRead == len(c.p.keys) {
		return fmt.Sprintf("the server refused to read the %s found (%s), so nothing is known of their values, TTLs or writers: run the investigation again once it answers", human.Plural(len(c.p.keys), "key"), why)
	}
	unknown := "" // the keys the user may not read, when some
	if unreadable > 0 {
		unknown = fmt.Sprintf("; of the %s the ACL user may not read nothing is known", human.Plural(unreadable, "key"))
	}
	if notRead > 0 {
		unknown += fmt.Sprintf("; of the %s the server refused to read (%s) nothing is known", human.Plural(notRead, "key"), why)
	}
	what := "nothing suspicious"
	if len(c.r.Findings) > 0 {
		what = "no sign of a second writer (the findings below are about the keys themselves)"
	}
	switch {
	case len(c.p.keys) == 0 && len(c.r.NotSearched()) > 0:
		return "no key matched in the part of the keyspace searched"
	case len(c.p.keys) == 0:
		return "no key matched: check the ID or pattern (and the database in --redis); keys created later are caught by --monitor or --notify"
	case c.noneExists():
		return c.missingText() + ", so there was nothing to investigate: check the key (and the database in --redis); a key created later is caught by --monitor or --notify"
	case c.r.Capture == nil:
		return what + " in the values and TTLs; --monitor names the clients that write these keys (MONITOR costs throughput while it runs)" + unknown
	}
	return what + ": no key had a second writer, a value of two styles or a changing TTL" + unknown
}
