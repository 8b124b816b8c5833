package registry

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/keytmpl"
	"github.com/keyguard/keyguard/naming"
)

// Domain-specific TTL ceilings: a lock held longer than this
// outlives any reasonable critical section; a verification code longer
// than this is a security risk.
const (
	MaxLockTTL   = 5 * time.Minute
	MaxVerifyTTL = 15 * time.Minute
)

// Rules returns the naming rules for this registry's policy.
func (r *Registry) Rules() naming.Rules {
	return naming.Rules{Sep: r.Separator, MaxKeyBytes: r.Policy.MaxKeyBytes}
}

// Lint checks the registry: overlapping templates, domains, TTL policy,
// naming rules on the templates, personal data, values still FILL-IN.
// Findings come in file order (domains, then entries), overlaps last.
func (r *Registry) Lint() []finding.Finding {
	var out []finding.Finding
	rules := r.Rules()
	if !r.BareList { // a bare list's domains are its entries' fields, reported there
		for _, d := range r.Domains {
			at := func(p Pos) naming.Emit {
				return func(rule string, sev finding.Severity, msg, hint string) {
					out = append(out, finding.Finding{Rule: rule, Severity: sev, Owner: d.Owner,
						Message: msg, Hint: hint, File: p.File, Line: p.Line, Column: p.Col})
				}
			}
			lintDomain(&d, at)
		}
	}
	for _, e := range r.Entries {
		at := func(p Pos) naming.Emit {
			return func(rule string, sev finding.Severity, msg, hint string) {
				out = append(out, finding.Finding{Rule: rule, Severity: sev, Template: e.Key, Owner: e.Owner,
					Message: msg, Hint: hint, File: p.File, Line: p.Line, Column: p.Col})
			}
		}
		r.lintEntry(e, rules, at)
	}
	for _, o := range r.Overlaps() {
		a, b := r.Entries[o.A], r.Entries[o.B]
		f := finding.Finding{Rule: finding.Overlap, Severity: finding.Error, Template: b.Key, Owner: b.Owner,
			File: b.Pos.File, Line: b.Pos.Line, Column: b.Pos.Col}
		f.Message, f.Hint, f.Severity = overlapText(a, b, o.Explanation)
		out = append(out, f)
	}
	return out
}

// overlapText describes an overlap. It is an error between owners, and a
// warning within one owner, who can only hurt their own keys, unless the
// two templates declare the very same keys with different types: one of
// the two entries is then wrong whoever owns it.
func overlapText(a, b *Entry, ex keytmpl.Explanation) (msg, hint string, sev finding.Severity) {
	who := fmt.Sprintf("owned by %s and %s", orNobody(a.Owner), orNobody(b.Owner))
	sev = finding.Error
	if a.Owner == b.Owner {
		sev, who = finding.Warning, "both owned by "+orNobody(a.Owner)
	}
	if ex.Relation == keytmpl.Equal {
		if a.Type != b.Type {
			return fmt.Sprintf("%q (line %d) declares exactly the keys of %q, as a %s where this entry says %s (%s): a key has one type",
					a.Key, a.Pos.Line, b.Key, a.Type, b.Type, who),
				"keep one of the two entries with the type the keys really have (keyguard audit shows the types seen)", finding.Error
		}
		return fmt.Sprintf("%q (line %d) declares exactly the keys of %q (%s): a duplicate entry", a.Key, a.Pos.Line, b.Key, who),
			"remove one of the two entries", sev
	}
	return fmt.Sprintf("%q (line %d) and %q can produce the same key %s (%s): %s",
			a.Key, a.Pos.Line, b.Key, finding.Display(ex.Witness), who, ex),
		"make the templates disjoint: start each with its own domain, add a distinguishing literal segment, or type the placeholder ({id:int})", sev
}

// FillInMark is what keyguard init and an audit's suggested entries write
// where a person must decide; lint fails until every one is replaced.
const FillInMark = "FILL-IN"

func isFillIn(s string) bool { return strings.Contains(s, FillInMark) }

// lintDomain reports the domain's fields still marked FILL-IN, each where
// its value is written (at gives the emitter of a position).
func lintDomain(d *Domain, at func(Pos) naming.Emit) {
	if isFillIn(d.Owner) {
		at(d.FieldPos("owner"))(finding.Owner, finding.Error, fmt.Sprintf("domain %s: owner is still FILL-IN", d.Name),
			"name the team that owns the keys of this domain: owner: TEAM; it gets the ACL user and the alerts")
	}
	if isFillIn(d.Desc) {
		at(d.FieldPos("desc"))(finding.FillIn, finding.Error, fmt.Sprintf("domain %s: desc is still FILL-IN", d.Name), "describe the domain in a few words, or remove desc")
	}
}

// lintFillIn reports the entry's fields still marked FILL-IN, saying what
// each wants, each where its value is written.
func lintFillIn(e *Entry, at func(Pos) naming.Emit) {
	if e.explicitOwner && isFillIn(e.Owner) {
		at(e.FieldPos("owner"))(finding.Owner, finding.Error, "owner is still FILL-IN",
			"name the team that writes these keys: owner: TEAM, or remove owner: to take the domain's owner")
	}
	for _, f := range []struct{ field, value, want string }{
		{"desc", e.Desc, "say what these keys hold, or remove desc"},
		{"domain", e.Domain, "write the domain the key starts with"},
		{"entityType", e.EntityType, "write the entity segment of the key, or remove entityType"},
		{"attribute", e.Attribute, "write the attribute segment of the key, or remove attribute"},
		{"name", e.Name, "name the generated builder, or remove name"},
	} {
		if isFillIn(f.value) {
			at(e.FieldPos(f.field))(finding.FillIn, finding.Error, f.field+" is still FILL-IN", f.want)
		}
	}
	for _, l := range []struct {
		field string
		list  []string
	}{{"writers", e.Writers}, {"readers", e.Readers}} {
		for i, v := range l.list {
			if isFillIn(v) {
				at(e.FieldPos(l.field+"["+strconv.Itoa(i)+"]"))(finding.FillIn, finding.Error, l.field+" still holds FILL-IN", "list the services by name, or remove "+l.field)
				break
			}
		}
	}
}

func orNobody(s string) string {
	if s == "" {
		return "nobody"
	}
	return s
}

// lintEntry checks one entry; at gives the emitter of a position: the
// entry's key for most rules, the field for a value still FILL-IN.
func (r *Registry) lintEntry(e *Entry, rules naming.Rules, at func(Pos) naming.Emit) {
	add := at(e.Pos)
	segs := e.Template.Segments()
	dom := 0
	if r.Env != "" {
		dom = 1
	}
	if e.Owner == "" {
		add(finding.Owner, finding.Error, "nobody owns this key", "add owner: TEAM, or declare its domain with an owner under domains:")
	}
	lintFillIn(e, at)
	first, literal := segs[dom].Literal()
	first = domainOf(first)
	switch {
	case !literal:
		add(finding.Domain, finding.Error, "the first segment is a placeholder, so any team's prefix can match", "start the template with the owning domain, e.g. order:{orderId:int}")
		if p := segs[dom].Parts[0]; p.IsPlaceholder() && p.Kind != keytmpl.Enum {
			add(finding.LeadingID, finding.Warning, fmt.Sprintf("the key starts with the ID {%s}", p.Name), "put the domain and entity first: domain:entity:{id}")
		}
	case r.domainIdx[first] == nil:
		hint := "declare it under domains: with its owner, or use a declared domain"
		if len(r.Domains) == 0 {
			hint = "add a domains: section, e.g. domains: {" + first + ": {owner: TEAM}}"
		}
		add(finding.Domain, finding.Error, fmt.Sprintf("first segment %q is not a declared domain", first), hint)
	case naming.LooksLikeID(first):
		add(finding.LeadingID, finding.Warning, fmt.Sprintf("the first segment %q is an ID", first), "start with the owning domain")
	}
	if e.Domain != "" && literal && e.Domain != first {
		add(finding.Domain, finding.Error, fmt.Sprintf("domain: %s but the key starts with %q", e.Domain, first), "make the field and the first segment agree")
	}
	checkField := func(field, want string, seg int) {
		if want == "" {
			return
		}
		if seg >= len(segs) {
			add(finding.KeyModel, finding.Warning, fmt.Sprintf("%s: %s but the key has no segment %d", field, want, seg+1), "name keys domain:entity:{id}:attribute, and make the field say the same")
			return
		}
		if got, ok := segs[seg].Literal(); ok && got != want {
			add(finding.KeyModel, finding.Warning, fmt.Sprintf("%s: %s but segment %d is %q", field, want, seg+1, got), "name keys domain:entity:{id}:attribute, and make the field say the same")
		}
	}
	checkField("entityType", e.EntityType, dom+1)
	checkField("attribute", e.Attribute, dom+3)

	r.lintTTL(e, first, add)

	// Case and charset look at the literal text of the whole template, with
	// each placeholder standing as one plain character, so a hash tag that
	// spans segments is seen whole.
	rules.Text(literalText(e.Template), add)
	for _, s := range segs {
		for _, p := range s.Parts {
			if !p.IsPlaceholder() {
				if ts, ok := naming.FindTimestamp(p.Lit); ok {
					add(finding.Timestamp, finding.Warning, fmt.Sprintf("time stamp %s written into the template", ts), "use a {day:date} placeholder and a TTL")
				}
				rules.PII(p.Lit, add)
				continue
			}
			if what, ok := naming.PIIName(p.Name); ok && p.Kind != keytmpl.Hash && !e.PIIAllow {
				add(finding.PII, finding.Error, fmt.Sprintf("placeholder {%s} puts %s %s in the key in clear", p.Name, human.Article(what), what),
					fmt.Sprintf("write {%s:hash} so the builder stores a hash, or add pii: allow after review", p.Name))
			}
		}
	}
	if ex := e.Template.Example(); rules.MaxKeyBytes > 0 && len(ex) > rules.MaxKeyBytes {
		add(finding.Length, finding.Warning, fmt.Sprintf("a typical key is %d bytes, over the %d-byte limit: %s", len(ex), rules.MaxKeyBytes, finding.Display(ex)),
			"shorten the literal words; move filters and paging out of the key into the value")
	}
	if e.Deprecated != nil {
		add(finding.KeyModel, finding.Info, "deprecated, replaced by "+e.Deprecated.ReplacedBy, "move the keys to the new template, then remove this entry")
	}
}

func (r *Registry) lintTTL(e *Entry, domain string, add naming.Emit) {
	switch {
	case e.Persistent && e.TTL > 0:
		add(finding.TTLPolicy, finding.Error, fmt.Sprintf("persistent together with ttl %s", e.TTL), "remove one: persistent means no TTL by design")
	case e.Persistent && e.TTLJitter > 0:
		add(finding.TTLPolicy, finding.Error, "persistent together with ttl_jitter", "remove ttl_jitter")
	case e.TTL == 0 && !e.Persistent && r.Policy.RequireTTL:
		add(finding.NoTTL, finding.Error, "no TTL: keys of this template live until someone deletes them", "add ttl: 10m (or persistent: true if it must never expire, like seq: counters)")
	}
	if e.TTLJitter > 0 && e.TTLJitter > e.TTL && !e.Persistent {
		add(finding.TTLPolicy, finding.Error, fmt.Sprintf("ttl_jitter %s is larger than ttl %s", e.TTLJitter, e.TTL), "keep the jitter to a fraction of the TTL, e.g. ttl: 30m, ttl_jitter: 5m")
	}
	switch {
	case domain == "lock" && e.MaxTTL() > MaxLockTTL:
		add(finding.TTLPolicy, finding.Warning, fmt.Sprintf("a lock held up to %s: a crashed holder blocks everyone that long", e.MaxTTL()), "a lock TTL is the longest acceptable hold, usually seconds; renew a long hold with a watchdog instead")
	case domain == "verify" && e.MaxTTL() > MaxVerifyTTL:
		add(finding.TTLPolicy, finding.Warning, fmt.Sprintf("a verification code valid for %s", e.MaxTTL()), "a verification TTL equals the code's validity, usually 5m")
	}
	if e.Hot != nil && e.TTL > 0 && e.Hot.LocalTTL >= e.TTL {
		add(finding.TTLPolicy, finding.Warning, fmt.Sprintf("hot.local_ttl %s is not shorter than ttl %s", e.Hot.LocalTTL, e.TTL), "keep the local tier much shorter than the Redis TTL")
	}
}

func literalText(t *keytmpl.Template) string {
	var b strings.Builder
	for i, s := range t.Segments() {
		if i > 0 {
			b.WriteByte(t.Separator())
		}
		for _, p := range s.Parts {
			if p.IsPlaceholder() {
				b.WriteByte('x')
			} else {
				b.WriteString(p.Lit)
			}
		}
	}
	return b.String()
}
