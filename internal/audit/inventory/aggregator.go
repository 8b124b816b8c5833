package inventory

import (
	"cmp"
	"slices"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/naming"
	"github.com/keyguard/keyguard/registry"
)

// Aggregator folds records into bounded counters, lists and samples. It is
// not safe for concurrent use: funnel records through one goroutine, or
// give each walker its own Aggregator and Merge them (Pipeline does).
type Aggregator struct {
	reg     *registry.Registry
	opts    Options
	chk     *registry.Checker
	emitFn  func(finding.Finding)
	pending []finding.Finding
	// ttlArg is the TTL in the message of the record's ttl-mismatch
	// finding (pending holds the text before it), written into the
	// message only when the finding is listed (see addTTL).
	ttlArg ttlArg

	// Groups: templates of database 0 by Entry.Index (the common case,
	// no hashing), everything else by key. Field samples are per
	// template or family, shared by its groups in every database.
	entries    []group
	groups     map[groupKey]*group
	families   int // family groups, for MaxGroups
	dbs        map[int]struct{}
	lastDB     int // the database of the last record (in dbs), -1 before the first
	tmplFields []fieldState
	famFields  map[string]*fieldState
	famCensus  []*fieldState // families with a census, up to maxFamilyCensuses (admitFamily)
	famMax     int           // index in famCensus of the largest rank; -1 unknown
	censusKeys int           // keys the censuses keep, up to maxCensusKeys
	famMisses  int64         // asked keys of families that held no field names
	foldedCap  int64         // keys counted in an "(other)" group because of MaxGroups
	foldedLate int64         // of those, keys of families that came past famCap: folded as they came
	foldedLong int64         // keys counted there because their family's name is too long

	t         totals
	ttlHist   [ttlSlots]slot
	top       topBuf[topVal]
	topDet    *topDetails // the details of top's keys (and of topIn's)
	hot       topBuf[hotVal]
	topIn     *listFeed[topVal] // while a pipeline's aggregators share the lists (shareLists): the way into them
	hotIn     *listFeed[hotVal]
	detMap    []uint32   // shareLists: by topDet's index, the shared details' index + 1
	finds     *findShare // while a pipeline's aggregators share the findings lists (shareFindings)
	freqKnown int64
	rules     map[string]*ruleState
	recent    [4]recentRule // the rule states last looked up
	hint      *FieldHint    // made by FieldHint; nil until then
	msgs      map[msgKey]string

	// Personal data in placeholder values (pii.go), by Entry.Index: what
	// the values held, and the keys of each template seen.
	pii     []*piiSlots
	piiKeys []int64
	slotLit []int // by Entry.Index: the bytes of the template's literals and separators
	slotFn  func(slot int, name, value string)
	slotOf  *registry.Entry // the entry slotFn's values belong to

	// Unregistered keys' evidence by family form (pii.go), and the
	// scratch of seeFamilyPII.
	famPII     map[string]*piiFamily
	piiForms   map[string]*piiForm // by inferred family
	piiFamLost int64               // keys of families past maxPIIFamilies
	famFn      func(slot int, value string)
	famSlots   *piiFamily
	famCur     *piiForm
	famGroup   string
	famLast    [4]famHit // the groups family found lately (lastFamily)
	famNext    int
	inferBuf   []byte
	inferred   inferred // Classify's last inference (infer)
	warmSink   int64    // what warm read, kept so that its loads are not dropped
	inferFn    func(slot int, v string)
	pre        preClass // the keys of AddRead's batch looked up ahead (preClassify)
	preFn      func(slot int, v string)

	lastNode string            // retainedNode's copy
	keys     *report.KeyBuffer // Options.Keys's buffer; nil without
	keyRow   report.KeyRow

	// per-record scratch
	rec     *Record
	keepKey string
	keptKey bool
}

type totals struct {
	keys, bytes, bytesUnknown, noTTL, unregistered int64
	records                                        int64    // records added (keys is their weight with Options.Weighted)
	bytesSq                                        float64  // sum of the squares of the sizes, for a sample's margin
	bytesVar                                       float64  // weighted samples: Σ (w²-w)·b², the variance of the memory estimate
	sev                                            [3]int64 // by finding.Severity, of findings decided per key
}

type slot struct{ keys, bytes int64 }

// group is the running summary of one template or inferred family in
// one database.
type group struct {
	name, kind, owner, domain string
	db                        int
	entry                     *registry.Entry
	keys, bytes, noTTL        int64
	withTTL                   int64 // keys with a TTL (ttl.n, or their weight)
	findings                  int64 // decided per key
	types                     [numTypes]int64
	ttl                       ttlSketch
	ttlHist                   [ttlSlots]slot // keys and bytes by TTL class, as the report's histogram
	example                   string         // families: the key with the smallest hash
	exampleHash               uint64
	fs                        *fieldState // nil for "(other)"
	binary                    bool        // the family's name is not UTF-8: name is escaped
	family                    string      // families: the template as inferred
	// firstPH: a family whose first segment holds a placeholder (shop3
	// and shop4 give shop{n:int}); first is its keys' first segment when
	// they all share it, firstVaries when they do not. A registry entry
	// must start with a literal domain: the suggestion keeps first.
	firstPH, firstVaries bool
	first                string
	noTTLMsg             string // cached no-ttl message of a template
	ttlOverTail          string // cached end of a template's ttl-mismatch message (addTTL)
}

// groupKey finds a group outside entries.
type groupKey struct {
	db   int
	kind uint8  // gTemplate, gFamily or gOther
	idx  int    // templates: Entry.Index
	name string // families: the inferred template
}

const (
	gTemplate uint8 = iota
	gFamily
	gOther
)

// fieldState is the field-set census of a template or family and how
// often its values held names.
type fieldState struct {
	census       *census // nil until a value with names came (families: while censuses are left)
	hits, misses int64   // keys with field names; asked keys without
	hintAsk      *atomic.Bool
	name, owner  string // families: the group name and owner their findings carry
	family       string // families: the inferred template, the map's key
	rank         uint64 // families: keyHash(family), which orders them for a census
	// formChecked: a template that declares its fields and may hold
	// strings, whose strings must be JSON objects (checkForm). Its values
	// are read however few of them hold names, and however varied their
	// field sets: each one is checked.
	formChecked bool
	// The forms of the strings read: JSON objects, values of other forms
	// (valueform.Form.Foreign), and which of those (a bit per Form).
	objects, foreign int64
	forms            uint32
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

// New returns an empty Aggregator for reg.
func New(reg *registry.Registry, opts Options) *Aggregator {
	opts = opts.withDefaults()
	a := &Aggregator{
		reg:        reg,
		opts:       opts,
		chk:        reg.NewChecker(),
		entries:    make([]group, len(reg.Entries)),
		groups:     map[groupKey]*group{},
		dbs:        map[int]struct{}{},
		lastDB:     -1,
		famMax:     -1,
		tmplFields: make([]fieldState, len(reg.Entries)),
		famFields:  map[string]*fieldState{},
		top:        newTopBuf[topVal](opts.TopKeys),
		topDet:     &topDetails{},
		hot:        newTopBuf[hotVal](opts.HotKeys),
		rules:      map[string]*ruleState{},
	}
	a.top.tie, a.hot.tie = topTie(a.topDet), hotWorse
	a.top.unique, a.hot.unique = opts.UniqueKeys, opts.UniqueKeys
	a.emitFn = a.emit
	a.chk.DeferPII()
	if opts.NoRegistry {
		a.chk.NoRegistry()
	}
	a.pii, a.piiKeys = make([]*piiSlots, len(reg.Entries)), make([]int64, len(reg.Entries))
	a.slotFn = func(slot int, name, v string) { a.seePII(a.slotOf, slot, name, v) }
	a.famPII, a.piiForms = map[string]*piiFamily{}, map[string]*piiForm{}
	a.famFn = a.seeFamilyValue
	a.inferFn = a.inferValue
	a.preFn = a.preValue

	if opts.Keys != nil {
		a.keys = opts.Keys.Buffer()
	}
	a.slotLit = make([]int, len(reg.Entries))
	for i, e := range reg.Entries {
		a.tmplFields[i].formChecked = e.JSONFields()
		a.entries[i] = a.templateGroup(e, 0)
		segs := e.Template.Segments()
		a.slotLit[i] = len(segs) - 1
		for _, seg := range segs {
			for _, p := range seg.Parts {
				if !p.IsPlaceholder() {
					a.slotLit[i] += len(p.Lit)
				}
			}
		}
	}
	return a
}

func (a *Aggregator) templateGroup(e *registry.Entry, db int) group {
	return group{name: e.Key, kind: report.KindTemplate, owner: e.Owner, domain: e.Domain, entry: e, db: db, fs: &a.tmplFields[e.Index]}
}

func (a *Aggregator) emit(f finding.Finding) { a.pending = append(a.pending, f) }

// barren reports whether the values of a template or family mostly hold
// no field names.
func (fs *fieldState) barren() bool {
	return !fs.formChecked && fs.misses >= fieldMissLimit && fs.misses > 4*fs.hits
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
	a.ttlArg = ttlArg{}
	a.rec, a.keptKey = r, false
	if r.DB != a.lastDB {
		a.seeDB(r.DB)
	}
	var g *group
	if e != nil {
		a.chk.CheckEntry(r.Key, e, a.emitFn)
		a.piiKeys[e.Index]++
		a.slotOf = e
		if !a.slotsQuiet(r.Key, e) {
			a.chk.SlotValues(r.Key, e, a.slotFn)
		}
		g = a.template(e, r.DB)
	} else {
		f := a.famOf(cl.Family)
		if f == nil {
			f = a.internFamily(cl.Family) // a walker classified the key
		}
		if f != nil {
			a.chk.CheckInferredTexts(r.Key, cl.Family, &f.texts, a.emitFn)
		} else {
			a.chk.CheckInferred(r.Key, cl.Family, a.emitFn)
		}
		g = a.family(r.DB, cl.Family, r.Key)
		a.seeFamilyPII(r, cl.Family, g)
		a.t.unregistered++
	}
	// wt is 1 but in a weighted sample, where a record counts for the
	// keys it stands for.
	wt := max(r.Weight, 1)
	if e == nil {
		a.t.unregistered += wt - 1
	}
	a.t.records++
	a.t.keys += wt
	g.keys += wt
	c := ttlClass(r.TTL)
	a.ttlHist[c].keys += wt
	g.ttlHist[c].keys += wt
	if r.Bytes >= 0 {
		b := wt * r.Bytes
		a.t.bytes += b
		a.t.bytesSq += float64(r.Bytes) * float64(r.Bytes)
		a.t.bytesVar += float64(wt*wt-wt) * float64(r.Bytes) * float64(r.Bytes)
		g.bytes += b
		a.ttlHist[c].bytes += b
		g.ttlHist[c].bytes += b
	} else {
		a.t.bytesUnknown += wt
	}
	g.types[typeIndex(r.Type)] += wt
	switch {
	case r.TTL == -1:
		a.t.noTTL += wt
		g.noTTL += wt
	case r.TTL > 0:
		g.ttl.add(r.TTL) // the median is of the sample
		g.withTTL += wt
	}
	a.check(r, e, g)
	if e != nil && r.Form.Foreign() && g.fs.formChecked && cl.Fields && !a.opts.SkipFields {
		a.checkForm(r, e, g)
	}
	if a.opts.NoRegistry {
		a.pending = slices.DeleteFunc(a.pending, needsRegistry)
	}
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
	if (r.Fields != nil || r.Set != nil || cl.Fields) && !a.opts.SkipFields {
		a.offerFields(r, g, cl.Fields)
	}
	if a.keys != nil {
		a.keyRow = report.KeyRow{DB: r.DB, Key: r.Key, Type: r.Type, Encoding: r.Encoding, Bytes: r.Bytes, Elements: r.Elements,
			TTL: r.TTL, Group: g.name, Kind: g.kind, Owner: g.owner}
		a.keys.Add(&a.keyRow)
		a.keyRow = report.KeyRow{} // the key is the walker's
	}
	clear(a.pending) // they hold r.Key: keep no reference to the walker's buffers
	a.rec = nil
	a.inferred.key, a.inferred.ok, a.inferred.fam = "", false, nil
}

// FlushKeys writes the key rows still buffered (Options.Keys). Pipeline's
// Close calls it; a caller adding records itself calls it at the end.
func (a *Aggregator) FlushKeys() {
	if a.keys != nil {
		a.keys.Flush()
	}
}

// needsRegistry reports whether a finding is one that only a registry can
// decide: without one every key is "unregistered" and every domain
// undeclared, which says nothing.
func needsRegistry(f finding.Finding) bool {
	return f.Rule == finding.Unregistered || f.Rule == finding.Domain
}

func (a *Aggregator) seeDB(db int) {
	a.lastDB = db
	a.dbs[db] = struct{}{}
}

// multiDB reports whether records came from more than one database (or
// from one other than 0): groups and findings then say which.
func (a *Aggregator) multiDB() bool {
	if len(a.dbs) > 1 {
		return true
	}
	_, zero := a.dbs[0]
	return len(a.dbs) == 1 && !zero
}

// template returns the group of template e in database db.
func (a *Aggregator) template(e *registry.Entry, db int) *group {
	if db == 0 {
		return &a.entries[e.Index]
	}
	k := groupKey{db: db, kind: gTemplate, idx: e.Index}
	g := a.groups[k]
	if g == nil {
		ng := a.templateGroup(e, db)
		g = &ng
		a.groups[k] = g
	}
	return g
}

// family returns the group of an unregistered key's inferred template.
func (a *Aggregator) family(db int, inferred, key string) *group {
	if len(inferred) > maxGroupName {
		a.foldedLong++
		return a.otherGroup(db)
	}
	f := a.famOf(inferred)
	var g *group
	if f != nil && db == 0 {
		g = f.g0
	}
	if g == nil {
		g = a.lastFamily(db, inferred)
	}
	if g == nil {
		g = a.groups[groupKey{db: db, kind: gFamily, name: inferred}]
		if g == nil {
			if a.families >= a.famCap() {
				a.foldedCap++
				a.foldedLate++
				return a.otherGroup(db)
			}
			g = a.newFamily(db, inferred)
		}
		a.famLast[a.famNext] = famHit{inferred, db, g}
		a.famNext = (a.famNext + 1) % len(a.famLast)
	}
	if f != nil && db == 0 && f.g0 != g {
		f.g0, f.fs = g, g.fs
	}
	if g.firstPH && !g.firstVaries {
		head, _, _ := strings.Cut(a.stripEnv(key), string(a.reg.Separator))
		g.seeFirst(head)
	}
	if len(key) <= maxKeepKey && utf8.ValidString(key) {
		if h := keyHash(key); g.example == "" || h < g.exampleHash {
			// A key holding personal data is never the family's example:
			// the example is shown in reports.
			if _, pii := naming.FindPII(key); !pii {
				g.example, g.exampleHash = strings.Clone(key), h
			}
		}
	}
	return g
}

// famHit is a family group family found, by the inferred name's string
// and the database: Classify interns the names, so the keys of one
// family hand over one string, found again by its address, without
// hashing it. The string is held here, so no other string has its
// address meanwhile, and a group is never replaced.
type famHit struct {
	name string
	db   int
	g    *group
}

// lastFamily returns the group of a family found lately, or nil.
func (a *Aggregator) lastFamily(db int, name string) *group {
	for i := range a.famLast {
		h := &a.famLast[i]
		if h.g != nil && unsafe.StringData(h.name) == unsafe.StringData(name) && len(h.name) == len(name) && h.db == db {
			return h.g
		}
	}
	return nil
}

// famCap is how many families an aggregator keeps while it walks: twice
// the MaxGroups a report lists, so that the report can list the ones with
// the most keys (foldFamilies), whatever order the keys came in, until a
// keyspace holds more than famCap families. The first MaxGroups to come
// made the list before, and the two aggregators of a pipeline took their
// keys in no fixed order: one file's reports differed run to run.
func (a *Aggregator) famCap() int { return 2 * a.opts.MaxGroups }

// foldFamilies keeps the MaxGroups families with the most keys (then
// bytes, then name and database) and counts the others in their
// database's "(other)" group, with their field states. A report calls
// it: nothing is added after.
func (a *Aggregator) foldFamilies() {
	if a.families <= a.opts.MaxGroups {
		return
	}
	fams := make([]*group, 0, a.families)
	for k, g := range a.groups {
		if k.kind == gFamily {
			fams = append(fams, g)
		}
	}
	slices.SortFunc(fams, func(x, y *group) int {
		return cmp.Or(cmp.Compare(y.keys, x.keys), cmp.Compare(y.bytes, x.bytes), strings.Compare(x.family, y.family), cmp.Compare(x.db, y.db))
	})
	kept := make(map[string]bool, a.opts.MaxGroups)
	for _, g := range fams[:a.opts.MaxGroups] {
		kept[g.family] = true
	}
	for _, g := range fams[a.opts.MaxGroups:] {
		a.mergeGroup(a.otherGroup(g.db), g)
		delete(a.groups, groupKey{db: g.db, kind: gFamily, name: g.family})
		a.foldedCap += g.keys
		if !kept[g.family] {
			delete(a.famFields, g.family) // its value formats go unreported, as its name does
		}
	}
	a.families = a.opts.MaxGroups
	a.famLast = [len(a.famLast)]famHit{}
	clear(a.inferred.interned) // they name groups and field states folded away
	a.inferred.gen++
	a.inferred.fam = nil
}

func (a *Aggregator) newFamily(db int, name string) *group {
	name = strings.Clone(name) // it may be a slice of a walker's key
	g := &group{name: name, family: name, kind: report.KindPrefix, db: db, binary: !utf8.ValidString(name)}
	if g.binary {
		// Escaped once, as the reports display a name (they print one
		// without control bytes as it is); such keys get no suggestion.
		g.name = escapeInvalid(name)
	}
	g.domain = a.domainOf(name)
	if g.domain == "" {
		t := a.stripEnv(name)
		i := headEnd(t, a.reg.Separator)
		g.firstPH = i > 0 && strings.Contains(t[:i], "{") // a placeholder, not a family without a separator
	}
	if d, ok := a.reg.Domain(g.domain); ok {
		g.owner = d.Owner
	}
	g.fs = a.famFields[name]
	if g.fs == nil {
		g.fs = &fieldState{name: g.name, owner: g.owner, family: name, rank: keyHash(name)}
		a.famFields[name] = g.fs
	}
	a.groups[groupKey{db: db, kind: gFamily, name: name}] = g
	a.families++
	return g
}

func (a *Aggregator) otherGroup(db int) *group {
	k := groupKey{db: db, kind: gOther}
	g := a.groups[k]
	if g == nil {
		g = &group{name: report.OtherGroup, kind: report.KindPrefix, db: db}
		a.groups[k] = g
	}
	return g
}

// domainOf is the first segment of an inferred template after the env
// prefix, or "" when that segment holds a placeholder or the key has no
// separator.
func (a *Aggregator) domainOf(tmpl string) string {
	t := a.stripEnv(tmpl)
	i := headEnd(t, a.reg.Separator)
	if i < 0 || strings.ContainsAny(t[:i], "{}") {
		return ""
	}
	return t[:i]
}

// stripEnv is s without the registry's env prefix, if it has one.
func (a *Aggregator) stripEnv(s string) string {
	if a.reg.Env != "" {
		return strings.TrimPrefix(s, a.reg.Env+string(a.reg.Separator))
	}
	return s
}

// headEnd is where the first segment of template t ends: the index of
// the first separator outside a placeholder ({n:int} may hold one), or
// -1.
func headEnd(t string, sep byte) int {
	in := false
	for i := 0; i < len(t); i++ {
		switch c := t[i]; {
		case !in && (c == '{' || c == '}') && i+1 < len(t) && t[i+1] == c:
			i++ // a literal brace
		case c == '{':
			in = true
		case c == '}':
			in = false
		case c == sep && !in:
			return i
		}
	}
	return -1
}

// seeFirst records a first segment of the family's keys (firstPH).
func (g *group) seeFirst(head string) {
	switch {
	case g.first == "":
		g.first = strings.Clone(head)
	case g.first != head:
		g.firstVaries, g.first = true, ""
	}
}

// groupCount is how many groups eachGroup calls f with.
func (a *Aggregator) groupCount() int {
	n := len(a.groups)
	for i := range a.entries {
		if a.entries[i].keys > 0 {
			n++
		}
	}
	return n
}

// eachGroup calls f with every group that counted a key, database 0's
// templates first.
func (a *Aggregator) eachGroup(f func(*group)) {
	for i := range a.entries {
		if a.entries[i].keys > 0 {
			f(&a.entries[i])
		}
	}
	for _, g := range a.groups {
		f(g)
	}
}

// topVal is what a top key carries besides its listKey (size, name,
// length, database): 24 bytes and no pointers, so that a list of 100,000
// and the heap the collector lets grow around it stay small, and the
// collector does not read it.
type topVal struct {
	elements int64
	ttl      time.Duration
	det      uint32 // its type, group and node, in the Aggregator's topDetails
}

// hotVal is what a hot key carries besides its listKey (LFU counter,
// name, length, database).
type hotVal struct {
	bytes     int64
	template  string
	owner     string
	kind      string // the group's kind, for its finding count
	protected bool   // the template declares hot: protection
	node      string
}

// escapeInvalid writes bytes that are not UTF-8, control bytes and
// backslashes as \xNN (a backslash as \\), so that the name has one
// escaped form: the reports print it as it is, never escaped again.
func escapeInvalid(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1, r < ' ', r == 0x7f:
			b.WriteString(`\x`)
			b.WriteByte("0123456789abcdef"[s[i]>>4])
			b.WriteByte("0123456789abcdef"[s[i]&15])
			i++
			continue
		case r == '\\':
			b.WriteString(`\\`)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}
