package migration

import (
	"fmt"
	"slices"
	"strings"

	"github.com/keyguard/keyguard/keybuild"
	"github.com/keyguard/keyguard/keytmpl"
	"github.com/keyguard/keyguard/registry"
)

// Plan is a checked migration from one key template to another: which keys
// belong to it and how each old key's captures build its new key. It is
// pure (no Redis) and immutable, safe for concurrent use.
type Plan struct {
	From, To  string          // the templates as written in the registry
	FromEntry *registry.Entry // nil when the old template is not registered
	ToEntry   *registry.Entry
	Type      string   // the Redis type both templates hold
	Fields    []string // hash fields moved; nil moves whole keys
	Mappings  []Mapping
	Notes     []string // what the migration does that a reader should know
	reg       *registry.Registry
	old, new  *keytmpl.Template
	glob      string // SCAN MATCH pattern of old
	build     []buildPart
}

// Conversion is what happens to a placeholder's value on the way from the
// old key to the new one.
type Conversion uint8

// Conversions.
const (
	Same  Conversion = iota // copied as is: every old value fits
	Check                   // copied when it fits the new kind, else the key is counted as not fitting
	Hash                    // the new placeholder stores the hash of the old value
)

func (c Conversion) String() string {
	return [...]string{"copied as is", "checked per key (keys whose value does not fit are counted and left alone)", "hashed"}[c]
}

// Mapping is one placeholder of the new template and where its value comes from.
type Mapping struct {
	Name     string
	FromKind string // the old placeholder's kind as written: int, enum(A,B), …
	ToKind   string
	Conv     Conversion
}

// buildPart is a piece of the new key: literal text, or the value of the
// old capture at index cap.
type buildPart struct {
	lit  string
	cap  int // -1 for literal text
	conv Conversion
	part keybuild.Part // the new placeholder, for Check
}

// PlanError is a migration that cannot be planned, with what to do instead.
type PlanError struct {
	From, To string
	Msg      string
	Hint     string
}

func (e *PlanError) Error() string {
	s := fmt.Sprintf("migrate %s → %s: %s", e.From, e.To, e.Msg)
	if e.Hint != "" {
		s += "\n\tTry: " + e.Hint
	}
	return s
}

// PlanOptions adjust a plan.
type PlanOptions struct {
	// Fields moves these hash fields instead of whole keys: the new key
	// gets them, the old key keeps its other fields, and cleanup deletes
	// only these fields from it. For a key two teams wrote into.
	Fields []string
}

// NewPlan checks a migration from template from to template to (both as
// written in the registry; from need not be registered). It refuses a new
// template that is not registered, a type change, a placeholder the new
// template needs that the old one does not capture, an old placeholder the
// new one drops (two old keys would map to one new key), a kind that no old
// value can fit, a hash that would have to be reversed, and templates that
// share keys.
func NewPlan(reg *registry.Registry, from, to string, opts PlanOptions) (*Plan, error) {
	fail := func(hint, format string, args ...any) (*Plan, error) {
		return nil, &PlanError{From: from, To: to, Msg: fmt.Sprintf(format, args...), Hint: hint}
	}
	p := &Plan{From: from, To: to, reg: reg}
	if from == to {
		return fail("give the template the keys have now and the one they should move to", "the two templates are the same")
	}
	p.ToEntry = reg.EntryByKey(to)
	if p.ToEntry == nil {
		return fail("declare the new template in the registry first, with its owner, type and TTL", "the new template %q is not in the registry", to)
	}
	p.new, p.Type = p.ToEntry.Template, p.ToEntry.Type
	p.FromEntry = reg.EntryByKey(from)
	if p.FromEntry != nil {
		p.old = p.FromEntry.Template
		if p.FromEntry.Type != p.ToEntry.Type {
			return fail("a migration moves values as they are; write the new type from the service and let the old keys expire",
				"the type changes from %s to %s", p.FromEntry.Type, p.ToEntry.Type)
		}
	} else {
		full := from
		if reg.Env != "" {
			full = reg.Env + string(reg.Separator) + from
		}
		t, err := keytmpl.Parse(full, reg.Separator)
		if err != nil {
			return fail("write the old template in the registry's template syntax (see keyguard.yaml's keys)", "the old template does not parse: %v", err)
		}
		p.old = t
		p.Notes = append(p.Notes, "the old template is not in the registry: it takes the keys no registered template claims")
	}
	p.Notes = append(p.Notes, fmt.Sprintf("copy takes the keys that are a %s (SCAN … TYPE); verify lists any other", p.Type))
	if ex := keytmpl.Relate(p.old, p.new); ex.Relation != keytmpl.Disjoint {
		return fail("the new template must not match old keys: give it its own literal segment",
			"the templates share keys (%s): the copy would read its own output and cleanup would delete new keys", ex)
	}
	if err := p.mapPlaceholders(); err != nil {
		return nil, err
	}
	if err := p.setFields(opts.Fields); err != nil {
		return nil, err
	}
	if err := p.checkGuard(); err != nil {
		return nil, err
	}
	p.noteTTL()
	p.glob = p.old.Glob()
	return p, nil
}

// mapPlaceholders builds the new key's parts from the old captures.
func (p *Plan) mapPlaceholders() error {
	oldPh := p.old.Placeholders()
	used := make([]bool, len(oldPh))
	for si, seg := range p.new.Segments() {
		if si > 0 {
			p.appendLit(string(p.new.Separator()))
		}
		for _, part := range seg.Parts {
			if !part.IsPlaceholder() {
				p.appendLit(part.Lit)
				continue
			}
			i := slices.IndexFunc(oldPh, func(ph keytmpl.Placeholder) bool { return ph.Name == part.Name })
			if i < 0 {
				return &PlanError{From: p.From, To: p.To, Msg: fmt.Sprintf("the new template needs {%s}, which the old template does not capture", part.Name),
					Hint: "name the placeholder as the old template does, or add it to the old template"}
			}
			used[i] = true
			m := Mapping{Name: part.Name, FromKind: kindText(oldPh[i].Kind, oldPh[i].Enum), ToKind: kindText(part.Kind, part.Enum)}
			conv, err := p.convert(oldPh[i], part)
			if err != nil {
				return err
			}
			m.Conv = conv
			p.Mappings = append(p.Mappings, m)
			p.build = append(p.build, buildPart{cap: i, conv: conv, part: keybuild.Part{Name: part.Name, Kind: keybuild.Kind(part.Kind), Enum: part.Enum}})
		}
	}
	for i, ph := range oldPh {
		if !used[i] {
			return &PlanError{From: p.From, To: p.To, Msg: fmt.Sprintf("the new template drops {%s}: old keys that differ only in it would map to one new key", ph.Name),
				Hint: "keep every placeholder of the old template in the new one"}
		}
	}
	return nil
}

func (p *Plan) appendLit(s string) {
	if n := len(p.build); n > 0 && p.build[n-1].cap < 0 {
		p.build[n-1].lit += s
		return
	}
	p.build = append(p.build, buildPart{lit: s, cap: -1})
}

// convert decides how an old placeholder's values reach a new one: the
// kinds are compared exactly as one-placeholder templates.
func (p *Plan) convert(from keytmpl.Placeholder, to keytmpl.Part) (Conversion, error) {
	switch {
	case from.Kind == keytmpl.Hash && to.Kind == keytmpl.Hash:
		return Same, nil
	case from.Kind == keytmpl.Hash:
		return 0, &PlanError{From: p.From, To: p.To, Msg: fmt.Sprintf("{%s} is a hash in the old template: the value it was made from cannot be recovered", from.Name),
			Hint: "keep {" + from.Name + ":hash} in the new template"}
	case to.Kind == keytmpl.Hash:
		return Hash, nil
	}
	sep := p.reg.Separator
	a, errA := keytmpl.Parse("{x"+kindSuffix(from.Kind, from.Enum)+"}", sep)
	b, errB := keytmpl.Parse("{x"+kindSuffix(to.Kind, to.Enum)+"}", sep)
	if errA != nil || errB != nil { // cannot happen: both parsed as parts of templates
		return Check, nil
	}
	switch keytmpl.Relate(a, b).Relation {
	case keytmpl.Equal, keytmpl.MoreSpecific:
		return Same, nil
	case keytmpl.Disjoint:
		return 0, &PlanError{From: p.From, To: p.To, Msg: fmt.Sprintf("no value of {%s:%s} fits {%s:%s}", from.Name, kindText(from.Kind, from.Enum), to.Name, kindText(to.Kind, to.Enum)),
			Hint: "give the new placeholder a kind the old values have"}
	}
	return Check, nil
}

func kindSuffix(k keytmpl.Kind, enum []string) string {
	if k == keytmpl.Any {
		return ""
	}
	return ":" + kindText(k, enum)
}

func kindText(k keytmpl.Kind, enum []string) string {
	if k == keytmpl.Enum {
		return "enum(" + strings.Join(enum, ",") + ")"
	}
	return k.String()
}

func (p *Plan) setFields(fields []string) error {
	if len(fields) == 0 {
		return nil
	}
	fail := func(hint, format string, args ...any) error {
		return &PlanError{From: p.From, To: p.To, Msg: fmt.Sprintf(format, args...), Hint: hint}
	}
	if p.Type != "hash" {
		return fail("move whole keys (no --fields)", "--fields moves hash fields, and the templates hold a %s", p.Type)
	}
	for _, f := range fields {
		switch {
		case f == "":
			return fail("list field names separated by commas", "an empty field name")
		case f == registry.NSField:
			return fail("list the business fields only", "%s is the namespace guard's field; it stays with the old key", registry.NSField)
		case len(p.ToEntry.Fields) > 0 && !p.ToEntry.FieldsExtra && !p.ToEntry.HasField(f):
			return fail("add the field to the new template's fields in the registry", "the new template does not declare the field %q", f)
		}
		if !slices.Contains(p.Fields, f) {
			p.Fields = append(p.Fields, f)
		}
	}
	p.Notes = append(p.Notes, fmt.Sprintf("moves the hash fields %s: each old key keeps its other fields; cleanup deletes only these", strings.Join(p.Fields, ", ")))
	return nil
}

// checkGuard refuses whole-key copies that would carry one team's
// namespace-guard owner into another team's guarded template.
func (p *Plan) checkGuard() error {
	oldGuard := p.FromEntry != nil && p.FromEntry.Guard
	switch {
	case p.Fields != nil:
		if p.ToEntry.Guard {
			p.Notes = append(p.Notes, "the new template is guarded: the new hashes have no owner field until the owner's first guarded write adopts them")
		}
	case oldGuard && p.ToEntry.Guard && p.FromEntry.Owner != p.ToEntry.Owner:
		return &PlanError{From: p.From, To: p.To,
			Msg:  fmt.Sprintf("copied hashes would carry %s = the old owner %s, and the namespace guard would refuse %s's writes", registry.NSField, p.FromEntry.Owner, p.ToEntry.Owner),
			Hint: "move the business fields with --fields"}
	case oldGuard && !p.ToEntry.Guard:
		p.Notes = append(p.Notes, fmt.Sprintf("the old hashes are guarded: their %s field is copied along into the new keys", registry.NSField))
	case p.ToEntry.Guard && !oldGuard:
		p.Notes = append(p.Notes, "the new template is guarded: copied hashes have no owner field until the owner's first guarded write adopts them")
	}
	return nil
}

func (p *Plan) noteTTL() {
	to := p.ToEntry
	switch {
	case p.Fields != nil:
		if to.Persistent {
			p.Notes = append(p.Notes, "a new key gets no TTL (the new template is persistent)")
		} else {
			p.Notes = append(p.Notes, fmt.Sprintf("a new key gets the old key's remaining TTL, at most %s (the new template's TTL)", registry.FormatTTL(to.MaxTTL())))
		}
	case to.Persistent:
		p.Notes = append(p.Notes, "a new key gets no TTL: the new template is persistent (copy --keep-ttl keeps the old expiry instead, with a warning per key)")
	case p.FromEntry != nil && p.FromEntry.Persistent:
		p.Notes = append(p.Notes, fmt.Sprintf("the old keys have no TTL: each new key gets the new template's %s (copy counts them; --keep-ttl copies them without one, with a warning per key)", registry.FormatTTL(to.TTL)))
	default:
		p.Notes = append(p.Notes, fmt.Sprintf("a new key keeps the old key's expiry, to the millisecond, where the new template allows it; an old key without TTL gets the new template's %s, one that expires later than %s from now is cut to that (copy counts both; --keep-ttl keeps every old expiry, with a warning per key that breaks the new template)",
			registry.FormatTTL(to.TTL), registry.FormatTTL(to.MaxTTL())))
	}
}

// Deprecated plans every entry of reg marked deprecated: {replaced_by: …},
// in registry order. All must plan; the first refusal is the error.
func Deprecated(reg *registry.Registry, opts PlanOptions) ([]*Plan, error) {
	var plans []*Plan
	for _, e := range reg.Entries {
		if e.Deprecated == nil || e.Deprecated.ReplacedBy == "" {
			continue
		}
		p, err := NewPlan(reg, e.Key, e.Deprecated.ReplacedBy, opts)
		if err != nil {
			return nil, err
		}
		plans = append(plans, p)
	}
	if len(plans) == 0 {
		return nil, &PlanError{From: "*", To: "*", Msg: "no entry of the registry is deprecated",
			Hint: "mark the old entry with deprecated: {replaced_by: NEW_TEMPLATE}, or give --from and --to"}
	}
	return plans, nil
}

// OldTemplate and NewTemplate return the full templates (env prefix included).
func (p *Plan) OldTemplate() *keytmpl.Template { return p.old }

// NewTemplate returns the new template, env prefix included.
func (p *Plan) NewTemplate() *keytmpl.Template { return p.new }

// Owns reports whether key belongs to the migration: it matches the old
// template and the registry classifies it there (a more specific
// registered template keeps its keys; for an unregistered old template,
// only keys no registered template claims).
func (p *Plan) Owns(key string) bool {
	if !p.old.Matches(key) {
		return false
	}
	return p.reg.Lookup(key) == p.FromEntry
}

// FitError is an old key whose value does not fit the new placeholder.
type FitError struct {
	Key         string
	Placeholder string
	Value       string
	Reason      keybuild.Reason
}

func (e *FitError) Error() string {
	return fmt.Sprintf("%q: the value %q of {%s} does not fit the new template (%s)", e.Key, e.Value, e.Placeholder, e.Reason)
}

// Map returns the new key of an old key. ok is false when oldKey does not
// match the old template; err is a *FitError when a value does not fit.
func (p *Plan) Map(oldKey string) (newKey string, ok bool, err error) {
	var scratch [8]keytmpl.Capture
	caps, ok := p.old.AppendMatch(scratch[:0], oldKey)
	if !ok {
		return "", false, nil
	}
	return p.mapCaptures(oldKey, caps)
}

// MapOwned is Owns then Map with one match of the old template: owned is
// false when key does not belong to the migration.
func (p *Plan) MapOwned(key string) (newKey string, owned bool, err error) {
	var scratch [8]keytmpl.Capture
	caps, ok := p.old.AppendMatch(scratch[:0], key)
	if !ok || p.reg.Lookup(key) != p.FromEntry {
		return "", false, nil
	}
	return p.mapCaptures(key, caps)
}

func (p *Plan) mapCaptures(oldKey string, caps []keytmpl.Capture) (string, bool, error) {
	var b strings.Builder
	for i := range p.build {
		bp := &p.build[i]
		if bp.cap < 0 {
			b.WriteString(bp.lit)
			continue
		}
		v := caps[bp.cap].Value
		switch bp.conv {
		case Hash:
			v = keybuild.HashValue(v)
		case Check:
			if r := keybuild.Check(v, p.new.Separator(), bp.part); r != 0 {
				return "", true, &FitError{Key: oldKey, Placeholder: bp.part.Name, Value: v, Reason: r}
			}
		}
		b.WriteString(v)
	}
	return b.String(), true, nil
}

// Glob returns the SCAN MATCH pattern of the old template (keytmpl.Template.Glob): its
// literal text escaped, each run of placeholders a '*'. Every key of the
// template matches it; keys it also matches are filtered with Owns.
func (p *Plan) Glob() string { return p.glob }

// Example returns a typical old key and the new key it maps to.
func (p *Plan) Example() (oldKey, newKey string) {
	oldKey = p.old.Example()
	newKey, _, err := p.Map(oldKey)
	if err != nil {
		newKey = "(" + err.Error() + ")"
	}
	return oldKey, newKey
}
