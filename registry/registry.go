// Package registry loads keyguard.yaml, the single source of truth for a
// shared Redis's keys, and classifies concrete keys against it.
//
//	reg, err := registry.Load("keyguard.yaml") // errors carry file:line:col
//	e, caps := reg.Classify("order:order:1001:base")
//	findings := reg.Lint()
//
// Two file forms load: the full form (version, policy, domains, keys, as
// keyguard init writes it) and the bare list (a YAML list of entries with
// key, domain, entityType, attribute, ttl, owner, desc).
//
// It is part of the SDK and pure (no network): it imports keytmpl, naming
// and the kernels keyslot and swar, never a tool under internal/.
package registry

import (
	"strings"
	"time"

	"github.com/keyguard/keyguard/keytmpl"
)

// Defaults of the policy section.
const (
	DefaultMaxKeyBytes    = 64
	DefaultBigKeyBytes    = 1 << 20
	DefaultBigKeyElements = 10000
)

// Types a key entry may declare.
var Types = []string{"string", "hash", "list", "set", "zset", "stream"}

// Registry is a loaded, validated keyguard.yaml. It is immutable and safe
// for concurrent use.
type Registry struct {
	File      string
	Version   int
	Separator byte
	Env       string
	Policy    Policy
	Domains   []Domain
	Entries   []*Entry
	BareList  bool // loaded from the seed 000 bare-list form
	// Digest names what the registry declares (see digest): equal for
	// two files that differ only in comments, descriptions or layout.
	// "" for a registry not loaded from YAML.
	Digest string

	domainIdx map[string]*Domain
	matcher   *keytmpl.Matcher
	copies    bool // an entry keeps copies of its hot keys (hot.replicas > 1)
}

// Policy is the policy section.
type Policy struct {
	MaxKeyBytes    int
	RequireTTL     bool
	BigKeyBytes    int64
	BigKeyElements int64
}

// Domain is a declared top-level key segment and its owning team.
type Domain struct {
	Name  string
	Owner string
	Desc  string
	Pos   Pos

	fieldPos map[string]Pos // see Entry.FieldPos
}

// FieldPos returns where the domain's field name (owner, desc) is
// written, or the domain's own position when it is not.
func (d *Domain) FieldPos(name string) Pos {
	if p, ok := d.fieldPos[name]; ok {
		return p
	}
	return d.Pos
}

// Pos is a place in the registry file.
type Pos struct {
	File      string
	Line, Col int
}

// Entry is one declared key template.
type Entry struct {
	Key        string            // the template as written, without the env prefix
	Template   *keytmpl.Template // the full template, env prefix included
	Index      int               // position in Entries
	Name       string
	Type       string
	TTL        time.Duration
	TTLJitter  time.Duration
	Persistent bool
	Owner      string
	Desc       string
	Guard      bool
	Fields     []string // the value's declared field set (hash fields or JSON top-level keys); nil when undeclared
	// FieldsExtra: the value may hold fields beyond Fields (an open map).
	FieldsExtra bool
	Hot         *Hot
	Writers     []string
	Readers     []string
	PIIAllow    bool
	Deprecated  *Deprecated
	Domain      string // the domain segment (declared field, or the first segment)
	EntityType  string
	Attribute   string
	Pos         Pos

	explicitOwner bool
	fieldPos      map[string]Pos // the value of each field given, and of each list item as name[i]
	// quietUnder: a key of this template shorter than this holds no
	// placeholder value a rule could flag (CheckEntry); 0 when any key
	// may (an {any} placeholder).
	quietUnder int
	// piiScan: per placeholder, whether CheckEntry looks at its values for
	// personal data; nil under pii: allow.
	piiScan []bool
	// slotScan: per placeholder, whether SlotValues hands its values over
	// to be judged for personal data by evidence; nil under pii: allow.
	// slotUnder: a key shorter than this holds no such value.
	slotScan  []bool
	slotUnder int
}

// FieldPos returns where the value of the entry's field name is written
// (a field as the file spells it: "owner", "ttl", "hot"; an item of a list
// as "writers[1]"), or the entry's position, its key, when the field is
// not given.
func (e *Entry) FieldPos(name string) Pos {
	if p, ok := e.fieldPos[name]; ok {
		return p
	}
	return e.Pos
}

// NSField is the reserved hash field of a guarded hash: it names the
// namespace that owns the key.
const NSField = "__ns__"

// HasField reports whether the entry declares field name.
func (e *Entry) HasField(name string) bool {
	for _, f := range e.Fields {
		if f == name {
			return true
		}
	}
	return false
}

// JSONFields reports whether the entry's values are strings holding JSON
// objects of declared fields (type string with fields:): a string of
// another form breaks it (value-format).
func (e *Entry) JSONFields() bool { return e.Type == "string" && len(e.Fields) > 0 }

// Hot is the hot-key protection of an entry.
type Hot struct {
	Replicas int
	LocalTTL time.Duration
}

// Deprecated marks an entry being replaced.
type Deprecated struct {
	ReplacedBy string
}

// MayWrite reports whether service may write keys of e: it is the owner or
// listed in writers.
func (e *Entry) MayWrite(service string) bool {
	if service == e.Owner {
		return true
	}
	for _, w := range e.Writers {
		if w == service {
			return true
		}
	}
	return false
}

// MayRead reports whether service may read keys of e: a writer or a reader.
func (e *Entry) MayRead(service string) bool {
	if e.MayWrite(service) {
		return true
	}
	for _, r := range e.Readers {
		if r == service {
			return true
		}
	}
	return false
}

// MaxTTL is the longest TTL a key of e may carry: TTL plus jitter.
func (e *Entry) MaxTTL() time.Duration { return e.TTL + e.TTLJitter }

// Domain returns the declared domain called name.
func (r *Registry) Domain(name string) (*Domain, bool) {
	d, ok := r.domainIdx[name]
	return d, ok
}

// Lookup returns the most specific entry whose template matches key, or
// nil. A key no template matches that is a copy of a hot key (the key
// with "#<n>" appended, inside its hash tag when it has one) is the
// copied key's entry when that entry keeps copies (hot.replicas > 1).
// Lookup does not allocate.
func (r *Registry) Lookup(key string) *Entry {
	if i := r.matcher.Lookup(key); i >= 0 {
		return r.Entries[i]
	}
	if r.copies && strings.IndexByte(key, '#') >= 0 {
		return r.lookupCopy(key)
	}
	return nil
}

// Classify returns the matching entry and the placeholder values; for a
// hot key's copy, the values of the key it copies.
func (r *Registry) Classify(key string) (*Entry, []keytmpl.Capture) {
	e := r.Lookup(key)
	if e == nil {
		return nil, nil
	}
	caps, ok := e.Template.Match(key)
	if !ok {
		var buf []byte
		caps, _ = matchCopy(e, nil, key, &buf)
	}
	return e, caps
}

// Overlaps returns the pairs of entries whose templates share keys.
func (r *Registry) Overlaps() []keytmpl.Overlap { return r.matcher.Overlaps() }

// Owners returns every owner named by a domain or an entry, sorted.
func (r *Registry) Owners() []string {
	seen := map[string]bool{}
	var out []string
	add := func(o string) {
		if o != "" && !seen[o] {
			seen[o] = true
			out = append(out, o)
		}
	}
	for _, d := range r.Domains {
		add(d.Owner)
	}
	for _, e := range r.Entries {
		add(e.Owner)
	}
	sortStrings(out)
	return out
}

// FormatTTL writes a TTL the way the registry file does: 7d, 1d12h, 1h,
// 10m, 1h30m, 45s rather than 168h0m0s (FormatDuration).
func FormatTTL(d time.Duration) string { return FormatDuration(d) }

// formatClock writes d in hours, minutes and seconds without zero units:
// 1h, 10m, 1h30m, 45s rather than 1h0m0s.
func formatClock(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// TTLText is the entry's TTL policy as the registry writes it: "persistent",
// "none", "10m", or "10m+1m" with jitter.
func (e *Entry) TTLText() string {
	switch {
	case e.Persistent:
		return "persistent"
	case e.TTL == 0:
		return "none"
	case e.TTLJitter > 0:
		return FormatTTL(e.TTL) + "+" + FormatTTL(e.TTLJitter)
	}
	return FormatTTL(e.TTL)
}
