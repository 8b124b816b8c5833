package registry

import (
	"fmt"
	"strings"
	"time"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/keytmpl"
	"github.com/keyguard/keyguard/naming"
)

// Domain-specific TTL ceilings (seed 004 §5): a lock held longer than this
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
// naming rules on the templates, personal data. Findings come in entry
// order, overlaps last.
func (r *Registry) Lint() []finding.Finding {
	var out []finding.Finding
	rules := r.Rules()
	for _, e := range r.Entries {
		add := func(rule string, sev finding.Severity, msg, hint string) {
			out = append(out, finding.Finding{Rule: rule, Severity: sev, Template: e.Key, Owner: e.Owner,
				Message: msg, Hint: hint, File: e.Pos.File, Line: e.Pos.Line, Column: e.Pos.Col})
		}
		r.lintEntry(e, rules, add)
	}
	for _, o := range r.Overlaps() {
		a, b := r.Entries[o.A], r.Entries[o.B]
		sev := finding.Error
		who := fmt.Sprintf("owned by %s and %s", orNobody(a.Owner), orNobody(b.Owner))
		if a.Owner == b.Owner {
			sev, who = finding.Warning, "both owned by "+orNobody(a.Owner)
		}
		out = append(out, finding.Finding{
			Rule: finding.Overlap, Severity: sev, Template: b.Key, Owner: b.Owner,
			Message: fmt.Sprintf("%q (line %d) and %q can produce the same key %s (%s): %s",
				a.Key, a.Pos.Line, b.Key, finding.Display(o.Explanation.Witness), who, o.Explanation),
			Hint: "make the templates disjoint: start each with its own domain, add a distinguishing literal segment, or type the placeholder ({id:int})",
			File: b.Pos.File, Line: b.Pos.Line, Column: b.Pos.Col,
		})
	}
	return out
}

func orNobody(s string) string {
	if s == "" {
		return "nobody"
	}
	return s
}

func (r *Registry) lintEntry(e *Entry, rules naming.Rules, add naming.Emit) {
	segs := e.Template.Segments()
	dom := 0
	if r.Env != "" {
		dom = 1
	}
	if e.Owner == "" {
		add(finding.Owner, finding.Error, "nobody owns this key", "add owner: TEAM, or declare its domain with an owner under domains:")
	}
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
			add(finding.KeyModel, finding.Warning, fmt.Sprintf("%s: %s but the key has no segment %d", field, want, seg+1), "domain:entity:{id}:attribute (seed 000 §3)")
			return
		}
		if got, ok := segs[seg].Literal(); ok && got != want {
			add(finding.KeyModel, finding.Warning, fmt.Sprintf("%s: %s but segment %d is %q", field, want, seg+1, got), "domain:entity:{id}:attribute (seed 000 §3)")
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
				add(finding.PII, finding.Error, fmt.Sprintf("placeholder {%s} puts a %s in the key in clear", p.Name, what),
					fmt.Sprintf("write {%s:hash} so the builder stores a hash, or add pii: allow after review", p.Name))
			}
		}
	}
	if ex := e.Template.Example(); rules.MaxKeyBytes > 0 && len(ex) > rules.MaxKeyBytes {
		add(finding.Length, finding.Warning, fmt.Sprintf("a typical key is %d bytes, over the %d-byte limit: %s", len(ex), rules.MaxKeyBytes, finding.Display(ex)),
			"shorten the literal words; move filters and paging out of the key (seed 004 pit 1)")
	}
	if e.Deprecated != nil {
		add(finding.KeyModel, finding.Info, "deprecated, replaced by "+e.Deprecated.ReplacedBy, "migrate with keyguard migrate, then remove this entry")
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
		add(finding.TTLPolicy, finding.Warning, fmt.Sprintf("a lock held up to %s: a crashed holder blocks everyone that long", e.MaxTTL()), "lock TTLs are the longest acceptable hold, usually seconds (seed 004 §5); renew with a watchdog instead")
	case domain == "verify" && e.MaxTTL() > MaxVerifyTTL:
		add(finding.TTLPolicy, finding.Warning, fmt.Sprintf("a verification code valid for %s", e.MaxTTL()), "verification TTLs equal the code's validity, usually 5m (seed 004 §5)")
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
