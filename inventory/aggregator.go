package inventory

import (
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/registry"
	"github.com/keyguard/keyguard/report"
)

// Aggregator folds records into bounded counters, heaps and samples. It is
// not safe for concurrent use: funnel records through one goroutine, or
// give each walker its own Aggregator and Merge them.
type Aggregator struct {
	reg     *registry.Registry
	opts    Options
	chk     *registry.Checker
	emitFn  func(finding.Finding)
	pending []finding.Finding

	entries          []group           // by registry Entry.Index
	inferred         map[string]*group // unregistered families by inferred template
	other            *group            // families past the cap, or with overlong names
	foldedCap        int64             // keys counted in other because of MaxGroups
	foldedLong       int64             // keys counted in other because their family name is too long
	inferredSamplers int
	inferredMisses   int64 // asked keys of unregistered families that held no field names

	t       totals
	ttlHist [ttlSlots]slot

	top       bheap[topItem]
	hot       bheap[hotItem]
	freqKnown int64
	rules     map[string]*ruleState
	hint      *FieldHint // made by FieldHint; nil until then
	msgs      map[msgKey]string
	recent    [4]recentRule // the rule states last looked up

	// per-record scratch
	rec     *Record
	keepKey string
	keptKey bool
}

type totals struct {
	keys, bytes, bytesUnknown, noTTL, unregistered int64
	sev                                            [3]int64 // by finding.Severity
}

type slot struct{ keys, bytes int64 }

// group is the running summary of one template or inferred family.
type group struct {
	name, kind, owner, domain string
	entry                     *registry.Entry
	keys, bytes, noTTL        int64
	findings                  int64
	types                     [numTypes]int64
	ttl                       ttlSketch
	example                   string // inferred families: the sample key with the smallest hash
	exampleHash               uint64
	fields                    *sampler
	fieldHits, fieldMisses    int64          // keys with field names; asked keys without
	binary                    bool           // the inferred template is not UTF-8: its name is escaped
	family                    string         // inferred families: the template as inferred (name may be escaped)
	hintBound                 *atomic.Uint64 // inferred families: the bound FieldHint reads
	noTTLMsg                  string         // cached no-ttl message of a template
}

const (
	typeModule  = 6
	typeUnknown = 7
	numTypes    = len(report.TypeNames)
)

func typeIndex(t string) int {
	switch t {
	case "string":
		return 0
	case "hash":
		return 1
	case "list":
		return 2
	case "set":
		return 3
	case "zset":
		return 4
	case "stream":
		return 5
	case "":
		return typeUnknown
	}
	return typeModule // "module" or a module's type name (TYPE replies e.g. ReJSON-RL)
}

type topItem struct {
	bytes, elements int64
	ttl             time.Duration
	key             string
	keyLen          int
	typ             string
	template        string
	node            string
	db              int
}

type hotItem struct {
	freq      int
	key       string
	keyLen    int
	bytes     int64
	template  string
	owner     string
	kind      string // the group's kind, for its finding count
	protected bool   // the template declares hot: protection
	node      string
	db        int
}

// findItem is a finding on its way into a finding list (findTop, which
// keeps its texts apart) or decided at report time: finding.Finding's
// fields but the rule (the list says it) and the position (key findings
// have none).
type findItem struct {
	score                               int64
	hash                                uint64 // keyHash(key): the rank among equal scores
	keyLen                              int32  // of the key before it was cut
	sev                                 finding.Severity
	key, template, owner, message, hint string
}

func newFindItem(f *finding.Finding, score int64, hash uint64, keyLen int) findItem {
	return findItem{score: score, hash: hash, keyLen: int32(min(keyLen, math.MaxInt32)), sev: f.Severity,
		key: f.Key, template: f.Template, owner: f.Owner, message: f.Message, hint: f.Hint}
}

type ruleState struct {
	count int64
	kept  findTop
}

func topWorse(a, b *topItem) bool { return rankedWorse(a.bytes, a.key, b.bytes, b.key) }
func hotWorse(a, b *hotItem) bool { return rankedWorse(int64(a.freq), a.key, int64(b.freq), b.key) }

// New returns an empty Aggregator for reg.
func New(reg *registry.Registry, opts Options) *Aggregator {
	opts = opts.withDefaults()
	a := &Aggregator{
		reg:      reg,
		opts:     opts,
		chk:      reg.NewChecker(),
		entries:  make([]group, len(reg.Entries)),
		inferred: map[string]*group{},
		top:      newBHeap(opts.TopKeys, topWorse),
		hot:      newBHeap(opts.HotKeys, hotWorse),
		rules:    map[string]*ruleState{},
	}
	a.emitFn = a.emit
	for i, e := range reg.Entries {
		a.entries[i] = group{name: e.Key, kind: report.KindTemplate, owner: e.Owner, domain: e.Domain, entry: e}
	}
	return a
}

func (a *Aggregator) emit(f finding.Finding) { a.pending = append(a.pending, f) }

// barren reports whether g's values mostly hold no field names.
func (g *group) barren() bool {
	return g.fieldMisses >= fieldMissLimit && g.fieldMisses > 4*g.fieldHits
}

// fieldType is a type whose values have field names: hashes, and strings
// holding JSON objects. "" is a template without a declared type.
func fieldType(t string) bool { return t == "hash" || t == "string" || t == "" }

// Add counts one record of class cl (Classify or a Classifier gave it
// for r.Key) and checks it against the key rules. It keeps no reference
// to r, r.Fields or cl.
func (a *Aggregator) Add(r *Record, cl Class) {
	e := cl.Entry
	a.pending = a.pending[:0]
	a.rec, a.keptKey = r, false
	var g *group
	if e != nil {
		a.chk.CheckEntry(r.Key, e, a.emitFn)
		g = &a.entries[e.Index]
	} else {
		a.chk.CheckInferred(r.Key, cl.Family, a.emitFn)
		g = a.family(cl.Family, r.Key)
		a.t.unregistered++
	}
	a.t.keys++
	g.keys++
	c := ttlClass(r.TTL)
	a.ttlHist[c].keys++
	if r.Bytes >= 0 {
		a.t.bytes += r.Bytes
		g.bytes += r.Bytes
		a.ttlHist[c].bytes += r.Bytes
	} else {
		a.t.bytesUnknown++
	}
	g.types[typeIndex(r.Type)]++
	switch {
	case r.TTL == -1:
		a.t.noTTL++
		g.noTTL++
	case r.TTL > 0:
		g.ttl.add(r.TTL)
	}
	a.check(r, e, g)
	for i := range a.pending {
		a.keep(&a.pending[i], r, g)
	}
	if r.Bytes >= 0 {
		a.offerTop(r, g)
	}
	if r.Freq >= 0 {
		a.freqKnown++
		a.offerHot(r, g)
	}
	if r.Fields != nil || cl.Fields {
		a.offerFields(r, g, cl.Fields)
	}
	clear(a.pending) // they hold r.Key: keep no reference to the walker's buffers
	a.rec = nil
}

// family returns the group of an unregistered key's inferred template.
func (a *Aggregator) family(inferred, key string) *group {
	if len(inferred) > maxGroupName {
		a.foldedLong++
		return a.otherGroup()
	}
	g := a.inferred[inferred]
	if g == nil {
		if len(a.inferred) >= a.opts.MaxGroups {
			a.foldedCap++
			return a.otherGroup()
		}
		g = a.newFamily(inferred)
	}
	if len(key) <= maxKeepKey && utf8.ValidString(key) {
		if h := keyHash(key); g.example == "" || h < g.exampleHash {
			g.example, g.exampleHash = strings.Clone(key), h
		}
	}
	return g
}

func (a *Aggregator) newFamily(name string) *group {
	g := &group{name: name, family: name, kind: report.KindPrefix, binary: !utf8.ValidString(name)}
	if g.binary {
		g.name = escapeInvalid(name) // JSON keeps the name exactly; such keys get no suggestion
	}
	g.domain = a.domainOf(name)
	if d, ok := a.reg.Domain(g.domain); ok {
		g.owner = d.Owner
	}
	a.inferred[name] = g
	return g
}

func (a *Aggregator) otherGroup() *group {
	if a.other == nil {
		a.other = &group{name: report.OtherGroup, kind: report.KindPrefix}
	}
	return a.other
}

// domainOf is the first segment of an inferred template after the env
// prefix, or "" when that segment holds a placeholder or the key has no
// separator.
func (a *Aggregator) domainOf(tmpl string) string {
	sep := string(a.reg.Separator)
	if a.reg.Env != "" {
		tmpl = strings.TrimPrefix(tmpl, a.reg.Env+sep)
	}
	first, _, ok := strings.Cut(tmpl, sep)
	if !ok || strings.ContainsAny(first, "{}") {
		return ""
	}
	return first
}

// check applies the rules that need more than the key name.
func (a *Aggregator) check(r *Record, e *registry.Entry, g *group) {
	pol := a.reg.Policy
	tmpl, owner := g.name, g.owner
	add := a.add
	if r.TTL == -1 {
		switch {
		case e == nil:
			if pol.RequireTTL {
				add(finding.NoTTL, finding.Warning, tmpl, owner, "no TTL on an unregistered key: it lives until someone deletes it",
					"register the family with a ttl, or set one when writing (SET key value EX seconds)")
			}
		case e.Persistent:
		case e.TTL > 0:
			if g.noTTLMsg == "" { // formatted once per template: legacy keyspaces lack TTLs by the million
				g.noTTLMsg = fmt.Sprintf("no TTL, but the template's TTL is %s: it was written without EXPIRE (around the generated builder or SDK)", report.HumanDuration(e.TTL))
			}
			add(finding.NoTTL, finding.Error, tmpl, owner, g.noTTLMsg,
				"find the writer (keyguard investigate --key KEY), then EXPIRE the key or delete it")
		case pol.RequireTTL:
			add(finding.NoTTL, finding.Error, tmpl, owner, "no TTL, and the template declares none",
				"add ttl: to the template (or persistent: true when it must never expire)")
		}
	}
	if e != nil {
		if r.TTL > 0 {
			switch limit := e.MaxTTL(); {
			case e.Persistent:
				add(finding.TTLMismatch, finding.Warning, tmpl, owner,
					fmt.Sprintf("expires in %s, but the template is persistent: the key will vanish", report.HumanDuration(r.TTL)),
					"find who set the expiry (keyguard investigate --key KEY) and PERSIST the key")
			case e.TTL > 0 && r.TTL > limit+time.Second+limit/100:
				add(finding.TTLMismatch, finding.Error, tmpl, owner,
					fmt.Sprintf("expires in %s, over the template's %s: someone else set this TTL", report.HumanDuration(r.TTL), ttlPolicy(e)),
					"find the other writer (keyguard investigate --key KEY)")
			}
		}
		if r.Type != "" && e.Type != "" && r.Type != e.Type {
			add(finding.TypeMismatch, finding.Error, tmpl, owner,
				a.message(finding.TypeMismatch, r.Type, e.Type, typeMismatchMsg),
				"find the other writer (keyguard investigate --key KEY) and give it its own key")
		}
		if e.Guard && r.NSProbed && (r.Type == "hash" || r.Type == "") {
			switch {
			case !r.HasNS:
				add(finding.GuardOwnerless, finding.Error, tmpl, owner,
					"a guarded hash without the __ns__ owner field: it was written around the guard",
					"write it through the guard SDK; the next guarded write adopts it")
			case !nsMayWrite(e, r.NS):
				add(finding.GuardForeign, finding.Error, tmpl, owner,
					a.message(finding.GuardForeign, r.NS, e.Owner, foreignOwnerMsg),
					"if this service should write here, add it to writers:; otherwise it is a conflict: keyguard investigate --key KEY")
			}
		}
	}
	// A string's element count is STRLEN, its length in bytes: only the
	// byte limit applies to strings.
	bigBytes := pol.BigKeyBytes > 0 && r.Bytes > pol.BigKeyBytes
	bigElems := pol.BigKeyElements > 0 && r.Elements > pol.BigKeyElements && r.Type != "string"
	if bigBytes || bigElems {
		var what string
		switch {
		case bigBytes && bigElems:
			what = fmt.Sprintf("%s and %d elements, over the policy's %s / %d", report.HumanBytes(r.Bytes), r.Elements, report.HumanBytes(pol.BigKeyBytes), pol.BigKeyElements)
		case bigBytes:
			what = fmt.Sprintf("%s, over the policy's %s", report.HumanBytes(r.Bytes), report.HumanBytes(pol.BigKeyBytes))
		default:
			what = fmt.Sprintf("%d elements, over the policy's %d", r.Elements, pol.BigKeyElements)
		}
		hint := "split it by a sub-key (shard into N keys), or delete it with UNLINK"
		if r.Type == "string" {
			hint = "compress the value or split it over several keys; delete it with UNLINK"
		}
		add(finding.BigKey, finding.Warning, tmpl, owner, what+": slow to read, delete or migrate, and it pins one Cluster slot", hint)
	}
}

func (a *Aggregator) add(rule string, sev finding.Severity, tmpl, owner, msg, hint string) {
	a.pending = append(a.pending, finding.Finding{Rule: rule, Severity: sev, Key: a.rec.Key, Template: tmpl, Owner: owner, Message: msg, Hint: hint})
}

// nsMayWrite reports whether a guard namespace belongs to the owner or a
// writer of e: the namespace is the service's name, or "name:anything"
// (the guard's "order-service:order" style).
func nsMayWrite(e *registry.Entry, ns string) bool {
	if e.MayWrite(ns) {
		return true
	}
	if i := strings.IndexByte(ns, ':'); i > 0 {
		return e.MayWrite(ns[:i])
	}
	return false
}

func ttlPolicy(e *registry.Entry) string {
	if e.TTLJitter > 0 {
		return report.HumanDuration(e.TTL) + "+" + report.HumanDuration(e.TTLJitter)
	}
	return report.HumanDuration(e.TTL)
}

// keep counts a finding and keeps it when it ranks among the rule's top
// MaxFindings (by key bytes, then key).
func (a *Aggregator) keep(f *finding.Finding, r *Record, g *group) {
	g.findings++
	if int(f.Severity) < len(a.t.sev) {
		a.t.sev[f.Severity]++
	}
	rs := a.rule(f.Rule)
	rs.count++
	if g.entry == nil {
		f.Template, f.Owner = g.name, g.owner // the family, not the (maybe long) inferred text
	}
	score, ck := r.Bytes, clip(r.Key, maxKeepKey)
	if rs.kept.cut && score < rs.kept.thresh.score {
		return // the common case once the cap is reached: no hash needed
	}
	hash := keyHash(ck)
	if !rs.kept.admits(score, hash, ck) {
		return
	}
	it := newFindItem(f, score, hash, len(r.Key))
	it.key, it.template, it.message, it.hint = a.retainedKey(), clip(f.Template, maxGroupName), clipText(f.Message), clipText(f.Hint)
	rs.kept.push(it)
}

func (a *Aggregator) rule(id string) *ruleState {
	// The rule IDs are a few constants: a short list of the last ones
	// used answers without hashing the ID.
	for i := range a.recent {
		if r := &a.recent[i]; r.rs != nil && r.id == id {
			return r.rs
		}
	}
	rs := a.rules[id]
	if rs == nil {
		rs = &ruleState{kept: newFindTop(a.opts.MaxFindings)}
		a.rules[id] = rs
	}
	copy(a.recent[1:], a.recent[:])
	a.recent[0] = recentRule{id, rs}
	return rs
}

type recentRule struct {
	id string
	rs *ruleState
}

// retainedKey is the current record's key, cut and copied once, so that a
// kept key does not pin the walker's buffers.
func (a *Aggregator) retainedKey() string {
	if !a.keptKey {
		a.keepKey = strings.Clone(clip(a.rec.Key, maxKeepKey))
		a.keptKey = true
	}
	return a.keepKey
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func clipText(s string) string {
	if len(s) > maxKeepText {
		return strings.Clone(s[:maxKeepText]) + "…"
	}
	return s
}

func (a *Aggregator) offerTop(r *Record, g *group) {
	ck := clip(r.Key, maxKeepKey)
	if a.top.full() {
		root := a.top.root()
		if !rankedWorse(root.bytes, root.key, r.Bytes, ck) {
			return
		}
	}
	for i := range a.top.items {
		if a.top.items[i].key == ck && a.top.items[i].keyLen == len(r.Key) {
			if a.top.items[i].bytes >= r.Bytes {
				return
			}
			a.top.removeAt(i)
			break
		}
	}
	a.top.push(topItem{
		bytes: r.Bytes, elements: r.Elements, ttl: r.TTL, key: a.retainedKey(), keyLen: len(r.Key),
		typ: retainType(r.Type), template: clip(g.name, maxGroupName), node: strings.Clone(r.Node), db: r.DB,
	})
}

func (a *Aggregator) offerHot(r *Record, g *group) {
	ck := clip(r.Key, maxKeepKey)
	if a.hot.full() {
		root := a.hot.root()
		if !rankedWorse(int64(root.freq), root.key, int64(r.Freq), ck) {
			return
		}
	}
	for i := range a.hot.items {
		if a.hot.items[i].key == ck && a.hot.items[i].keyLen == len(r.Key) {
			if a.hot.items[i].freq >= r.Freq {
				return
			}
			a.hot.removeAt(i)
			break
		}
	}
	a.hot.push(hotItem{
		freq: r.Freq, key: a.retainedKey(), keyLen: len(r.Key), bytes: r.Bytes,
		template: g.name, owner: g.owner, kind: g.kind, protected: g.entry != nil && g.entry.Hot != nil,
		node: strings.Clone(r.Node), db: r.DB,
	})
}

// retainType returns a kept copy of a type name: the known names are
// constants, others (module type names) are copied.
func retainType(t string) string {
	if i := typeIndex(t); i != typeModule && i != typeUnknown {
		return report.TypeNames[i]
	}
	return strings.Clone(t)
}

// offerFields offers the field names of r to g's sample, and counts
// whether a key NeedsFields asked for had any.
func (a *Aggregator) offerFields(r *Record, g *group, asked bool) {
	if !fieldType(r.Type) || len(r.Key) > maxSampleKey || g == a.other {
		return
	}
	if g.entry != nil && !fieldType(g.entry.Type) {
		return
	}
	if len(r.Fields) == 0 {
		if asked {
			a.fieldMiss(g)
		}
		return
	}
	h := keyHash(r.Key)
	if !g.fields.admits(h) {
		g.fieldHits++
		return
	}
	fs := normalizeFields(r.Fields)
	if len(fs) == 0 {
		if asked {
			a.fieldMiss(g)
		}
		return
	}
	g.fieldHits++
	if g.fields == nil {
		if g.entry == nil {
			if a.inferredSamplers >= maxInferredSamplers {
				return
			}
			a.inferredSamplers++
		}
		g.fields = &sampler{k: a.opts.FieldSamples}
	}
	g.fields.offer(fieldSample{hash: h, key: strings.Clone(r.Key), bytes: r.Bytes, fields: fs})
	a.publish(g)
}

func (a *Aggregator) fieldMiss(g *group) {
	g.fieldMisses++
	if g.entry == nil {
		a.inferredMisses++
	}
	a.publish(g)
}

// Merge adds b's records to a, as if they had been added to a. b must have
// been built from the same registry (it panics otherwise: a programming
// error) and is not changed. a's Options apply.
func (a *Aggregator) Merge(b *Aggregator) {
	if a.reg != b.reg && !sameEntries(a.reg, b.reg) {
		panic("inventory: Merge of aggregators built from different registries")
	}
	a.t.keys += b.t.keys
	a.t.bytes += b.t.bytes
	a.t.bytesUnknown += b.t.bytesUnknown
	a.t.noTTL += b.t.noTTL
	a.t.unregistered += b.t.unregistered
	for i := range a.t.sev {
		a.t.sev[i] += b.t.sev[i]
	}
	for i := range a.ttlHist {
		a.ttlHist[i].keys += b.ttlHist[i].keys
		a.ttlHist[i].bytes += b.ttlHist[i].bytes
	}
	a.freqKnown += b.freqKnown
	for i := range a.entries {
		a.mergeGroup(&a.entries[i], &b.entries[i])
	}
	for name, bg := range b.inferred {
		g := a.inferred[name]
		if g == nil {
			if len(a.inferred) >= a.opts.MaxGroups {
				a.foldedCap += bg.keys
				g = a.otherGroup()
			} else {
				g = a.newFamily(name)
			}
		}
		a.mergeGroup(g, bg)
	}
	if b.other != nil {
		a.mergeGroup(a.otherGroup(), b.other)
	}
	a.foldedCap += b.foldedCap
	a.foldedLong += b.foldedLong
	a.inferredMisses += b.inferredMisses
	for _, it := range b.top.items {
		a.pushTop(it)
	}
	for _, it := range b.hot.items {
		a.pushHot(it)
	}
	for id, brs := range b.rules {
		rs := a.rule(id)
		rs.count += brs.count
		ents := brs.kept.kept()
		for i := range ents {
			rs.kept.push(brs.kept.item(&ents[i]))
		}
	}
}

func sameEntries(x, y *registry.Registry) bool {
	if len(x.Entries) != len(y.Entries) {
		return false
	}
	for i := range x.Entries {
		if x.Entries[i].Key != y.Entries[i].Key {
			return false
		}
	}
	return true
}

func (a *Aggregator) mergeGroup(dst, src *group) {
	dst.keys += src.keys
	dst.bytes += src.bytes
	dst.noTTL += src.noTTL
	dst.findings += src.findings
	dst.fieldHits += src.fieldHits
	dst.fieldMisses += src.fieldMisses
	for i := range dst.types {
		dst.types[i] += src.types[i]
	}
	dst.ttl.merge(&src.ttl)
	if src.example != "" && dst != a.other && (dst.example == "" || src.exampleHash < dst.exampleHash) {
		dst.example, dst.exampleHash = src.example, src.exampleHash
	}
	if src.fields != nil && dst != a.other {
		if dst.fields == nil {
			if dst.entry == nil {
				if a.inferredSamplers >= maxInferredSamplers {
					return
				}
				a.inferredSamplers++
			}
			dst.fields = &sampler{k: a.opts.FieldSamples}
		}
		dst.fields.merge(src.fields)
	}
}

func (a *Aggregator) pushTop(it topItem) {
	for i := range a.top.items {
		if a.top.items[i].key == it.key && a.top.items[i].keyLen == it.keyLen {
			if a.top.items[i].bytes >= it.bytes {
				return
			}
			a.top.removeAt(i)
			break
		}
	}
	a.top.push(it)
}

func (a *Aggregator) pushHot(it hotItem) {
	for i := range a.hot.items {
		if a.hot.items[i].key == it.key && a.hot.items[i].keyLen == it.keyLen {
			if a.hot.items[i].freq >= it.freq {
				return
			}
			a.hot.removeAt(i)
			break
		}
	}
	a.hot.push(it)
}

// escapeInvalid writes bytes that are not UTF-8 as \xNN.
func escapeInvalid(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 {
			fmt.Fprintf(&b, "\\x%02x", s[i])
			i++
			continue
		}
		b.WriteString(s[i : i+n])
		i += n
	}
	return b.String()
}

// msgKey is what a cached finding message depends on.
type msgKey struct{ rule, x, y string }

// Bounds of the message cache.
const (
	maxCachedMsgs = 1024
	maxCachedArg  = 128
)

// message returns format(x, y), formatted once per (rule, x, y) while the
// cache has room: the same foreign owner or wrong type repeats over many
// keys. x and y may be slices of a walker's buffer: the cache keeps
// copies.
func (a *Aggregator) message(rule, x, y string, format func(x, y string) string) string {
	if m, ok := a.msgs[msgKey{rule, x, y}]; ok {
		return m
	}
	m := format(x, y)
	if len(x) <= maxCachedArg && len(y) <= maxCachedArg && len(a.msgs) < maxCachedMsgs {
		if a.msgs == nil {
			a.msgs = map[msgKey]string{}
		}
		a.msgs[msgKey{rule, strings.Clone(x), strings.Clone(y)}] = m
	}
	return m
}

func typeMismatchMsg(got, declared string) string {
	return fmt.Sprintf("is a %s, the template declares %s: another writer stores a different structure here", finding.Display(got), declared)
}

func foreignOwnerMsg(ns, owner string) string {
	return fmt.Sprintf("__ns__ is %s, which is neither the owner %s nor a declared writer", finding.Display(ns), finding.Display(owner))
}
