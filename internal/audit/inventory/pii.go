package inventory

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/naming"
	"github.com/keyguard/keyguard/registry"
)

// Personal data in placeholder values, by evidence. Every value of a
// placeholder that may hold personal data (free text, numbers, hex: see
// registry.Checker.SlotValues) is judged whole by naming.ValuePII: the
// datum it is (a hit), or the shape it has without being one (a miss).
// At report time a placeholder's hits of one kind are personal data
// unless the placeholder's values say they are identifiers that happen
// to pass the check:
//
//   - misses: at least a quarter as many values of the same shape fail
//     the check as pass it (snowflake IDs pass Luhn one time in ten, hex
//     tokens are all digits now and then);
//   - a run: three or more hits whose smallest and largest share more
//     leading digits than the kind's own prefix (a mobile number's three,
//     a card's six-digit issuer), or that fill more than half of the
//     range between them (order numbers counted up).
//
// E-mail addresses and '+' numbers need no evidence. Every key holding a
// datum is a finding, and each placeholder and kind gets one note with
// its share of the template's keys. Memory is bounded: counters per
// placeholder and kind, and up to maxPIIKeys keys each.

const maxPIIKeys = 1000

// piiNotePrefix starts the notes on personal data, which a merge makes
// again from the evidence rather than keeping each report's.
const piiNotePrefix = "personal data: "

// piiSlots is what a template's placeholders held.
type piiSlots struct {
	slots map[int]*piiSlot // by placeholder index
}

type piiSlot struct {
	name  string
	kinds [naming.NumPIIKinds]piiKind
}

type piiKind struct {
	hits, misses int64
	lo, hi       uint64 // numeric hits: the smallest and largest (valid when hits > 0)
	keys         []piiKey
	lost         int64 // hits whose key was not kept
}

type piiKey struct {
	key    string
	keyLen int
	db     int
	bytes  int64
	masked string
	group  string // unregistered keys: the family (group) the key was counted in
}

// slotsQuiet reports whether no placeholder value of key, a key of e,
// can be what seePII weighs (naming.ValuePII: an '@' or a leading '+',
// or 11 to 19 characters): a value is a part of the key, so without
// '@' and '+' in the key and with fewer than 11 bytes besides the
// template's literals, none is. The common key is then not split into
// its values at all.
func (a *Aggregator) slotsQuiet(key string, e *registry.Entry) bool {
	return len(key) < a.slotLit[e.Index]+11 && strings.IndexByte(key, '@') < 0 && strings.IndexByte(key, '+') < 0
}

// seePII judges the value of placeholder slot (called name) of r.Key,
// a key of e.
func (a *Aggregator) seePII(e *registry.Entry, slot int, name, v string) {
	ps := a.pii[e.Index]
	if ps == nil {
		if !mayBePII(v) {
			return
		}
		ps = &piiSlots{slots: map[int]*piiSlot{}}
		a.pii[e.Index] = ps
	}
	a.rec.seePII(ps, slot, name, v, "")
}

// seePII adds value v of placeholder slot (called name) of r.Key to ps;
// group is the family r.Key was counted in (unregistered keys), "" for
// a template's key.
func (r *Record) seePII(ps *piiSlots, slot int, name, v, group string) {
	hit, miss := naming.ValuePII(v)
	if hit == naming.NoPII && miss == 0 {
		return
	}
	s := ps.slots[slot]
	if s == nil {
		s = &piiSlot{name: name}
		ps.slots[slot] = s
	}
	for k := range s.kinds {
		if miss.Has(naming.PIIKind(k)) {
			s.kinds[k].misses++
		}
	}
	if hit == naming.NoPII {
		return
	}
	k := &s.kinds[hit]
	if n, ok := piiNumber(hit, v); ok {
		if k.hits == 0 || n < k.lo {
			k.lo = n
		}
		if k.hits == 0 || n > k.hi {
			k.hi = n
		}
	}
	k.hits++
	key := clip(r.Key, maxKeepKey)
	if !k.wants(key, len(r.Key), r.DB) {
		k.lost++
		return
	}
	k.keep(piiKey{key: strings.Clone(key), keyLen: len(r.Key), db: r.DB, bytes: max(r.Bytes, 0),
		masked: naming.Mask(v), group: group})
}

// The keys a kind keeps are its maxPIIKeys smallest (by name, length and
// database), not the first to arrive: which keys get a finding then does
// not depend on the order a walk or the parts of a file hand them over,
// nor on how reports are merged. keys is a max-heap on that order once
// it is full.

func piiKeyLess(a, b *piiKey) bool {
	if c := strings.Compare(a.key, b.key); c != 0 { // one pass over the bytes, not two
		return c < 0
	}
	if a.keyLen != b.keyLen {
		return a.keyLen < b.keyLen
	}
	return a.db < b.db
}

// wants reports whether a key would be kept.
func (k *piiKind) wants(key string, keyLen, db int) bool {
	return len(k.keys) < maxPIIKeys || piiKeyLess(&piiKey{key: key, keyLen: keyLen, db: db}, &k.keys[0])
}

// keep takes pk among the kept keys; when they are full the largest of
// them and pk is dropped (and counted as lost).
func (k *piiKind) keep(pk piiKey) {
	h := k.keys
	if len(h) < maxPIIKeys {
		h = append(h, pk)
		for i := len(h) - 1; i > 0; {
			up := (i - 1) / 2
			if !piiKeyLess(&h[up], &h[i]) {
				break
			}
			h[up], h[i] = h[i], h[up]
			i = up
		}
		k.keys = h
		return
	}
	k.lost++
	if !piiKeyLess(&pk, &h[0]) {
		return
	}
	h[0] = pk
	for i := 0; ; {
		big, l, r := i, 2*i+1, 2*i+2
		if l < len(h) && piiKeyLess(&h[big], &h[l]) {
			big = l
		}
		if r < len(h) && piiKeyLess(&h[big], &h[r]) {
			big = r
		}
		if big == i {
			break
		}
		h[i], h[big] = h[big], h[i]
		i = big
	}
}

// sorted is the kept keys in their order, for findings and the state.
func (k *piiKind) sorted() []piiKey {
	out := slices.Clone(k.keys)
	slices.SortFunc(out, func(a, b piiKey) int {
		switch {
		case piiKeyLess(&a, &b):
			return -1
		case piiKeyLess(&b, &a):
			return 1
		}
		return 0
	})
	return out
}

// mayBePII reports whether ValuePII can say anything of v: only values
// of 11 to 19 characters, '+' numbers and e-mail addresses have a kind's
// shape.
func mayBePII(v string) bool {
	return len(v) >= 11 && len(v) <= 19 || strings.IndexByte(v, '@') >= 0 || len(v) > 8 && v[0] == '+'
}

// piiNumber is the number a numeric hit stands for: a mobile number's
// last eleven digits, an ID's first seventeen, a card's digits.
func piiNumber(k naming.PIIKind, v string) (uint64, bool) {
	switch k {
	case naming.Mobile:
		v = v[len(v)-11:]
	case naming.IDCard:
		v = v[:17]
	case naming.Card:
	default:
		return 0, false
	}
	n, err := strconv.ParseUint(v, 10, 64)
	return n, err == nil
}

// piiPrefix is how many leading digits the data of kind k may share
// without looking like one run of numbers.
func piiPrefix(k naming.PIIKind) int {
	switch k {
	case naming.Mobile:
		return 3 // 139…: the carrier's prefix
	case naming.Card:
		return 6 // the issuer's
	}
	return 17 // resident IDs share region and birth dates: the check digit and misses decide
}

// evidence says why the hits of k are not personal data ("" when they are).
func (k *piiKind) evidence(kind naming.PIIKind) string {
	switch {
	case k.hits == 0:
		return "none"
	case kind == naming.Email || kind == naming.E164:
		return ""
	case 4*k.misses >= k.hits:
		return "misses"
	case k.hits >= 3 && commonDigits(k.lo, k.hi) > piiPrefix(kind):
		return "prefix"
	case k.hits >= 3 && k.hi-k.lo < uint64(2*k.hits):
		return "run"
	}
	return ""
}

// commonDigits is how many leading decimal digits a and b share, when
// written with the same number of digits.
func commonDigits(a, b uint64) int {
	x, y := strconv.FormatUint(a, 10), strconv.FormatUint(b, 10)
	if len(x) != len(y) {
		return 0
	}
	n := 0
	for n < len(x) && x[n] == y[n] {
		n++
	}
	return n
}

func (k *piiKind) merge(o *piiKind) {
	if o.hits > 0 {
		if k.hits == 0 || o.lo < k.lo {
			k.lo = o.lo
		}
		if k.hits == 0 || o.hi > k.hi {
			k.hi = o.hi
		}
	}
	k.hits += o.hits
	k.misses += o.misses
	k.lost += o.lost
	for _, pk := range o.keys {
		k.keep(pk)
	}
}

// mergePII adds b's placeholder evidence to a's.
func (a *Aggregator) mergePII(b *Aggregator) {
	for i, bs := range b.pii {
		if bs == nil {
			continue
		}
		as := a.pii[i]
		if as == nil {
			as = &piiSlots{slots: map[int]*piiSlot{}}
			a.pii[i] = as
		}
		as.merge(bs)
	}
	for i, n := range b.piiKeys {
		a.piiKeys[i] += n
	}
	for form, bf := range b.famPII {
		f := a.famPII[form]
		if f == nil {
			if len(a.famPII) >= maxPIIFamilies {
				a.piiFamLost += bf.hitsAll() // values judged: about one per key
				continue
			}
			f = &piiFamily{piiSlots: piiSlots{slots: map[int]*piiSlot{}}, form: form}
			a.famPII[form] = f
		}
		f.merge(&bf.piiSlots)
	}
	a.piiFamLost += b.piiFamLost
}

// merge adds o's evidence to ps.
func (ps *piiSlots) merge(o *piiSlots) {
	for slot, s := range o.slots {
		t := ps.slots[slot]
		if t == nil {
			t = &piiSlot{name: s.name}
			ps.slots[slot] = t
		}
		for k := range t.kinds {
			t.kinds[k].merge(&s.kinds[k])
		}
	}
}

// hitsAll is the number of values ps judged.
func (ps *piiSlots) hitsAll() int64 {
	var n int64
	for _, s := range ps.slots {
		for _, k := range s.kinds {
			n += k.hits + k.misses
		}
	}
	return n
}

// piiFindings are the keys whose placeholders hold personal data, and
// a note per template (or family form), placeholder and kind with its
// share.
func (a *Aggregator) piiFindings() (lateRule, []string) {
	lr := lateRule{rule: finding.PII}
	var notes []string
	for i, ps := range a.pii {
		if ps == nil {
			continue
		}
		e := a.reg.Entries[i]
		for slot := range len(e.Template.Placeholders()) {
			s := ps.slots[slot]
			if s == nil {
				continue
			}
			for kind := range s.kinds {
				k := &s.kinds[kind]
				pk := naming.PIIKind(kind)
				if k.evidence(pk) != "" {
					continue
				}
				share := fmt.Sprintf("{%s} of %s holds %s in %s of %s keys", s.name, e.Key, pk, human.Count(k.hits), human.Count(a.piiKeys[i]))
				notes = append(notes, piiNotePrefix+share)
				hint := fmt.Sprintf("store a hash: make it {%s:hash} (the builder hashes the value); if reviewed, mark the template pii: allow", s.name)
				for _, pkey := range k.sorted() {
					f := finding.Finding{Rule: finding.PII, Severity: finding.Warning, Key: pkey.key, Template: e.Key, Owner: e.Owner,
						Message: clipText(fmt.Sprintf("placeholder {%s} holds %s %s (%s of the template's %s keys do)", s.name, singular(pk), pkey.masked, human.Count(k.hits), human.Count(a.piiKeys[i]))), Hint: hint}
					lr.items = append(lr.items, newLate(&f, pkey.bytes, pkey.keyLen, pkey.db, groupRef{report.KindTemplate, e.Key, pkey.db}))
				}
				lr.unlisted[finding.Warning] += k.lost
			}
		}
	}
	a.familyPIIFindings(&lr, &notes)
	if a.piiFamLost > 0 {
		notes = append(notes, fmt.Sprintf(piiNotePrefix+"%s of unregistered families past the first %d with numbers or e-mail addresses were not judged",
			human.Plural(a.piiFamLost, "key"), maxPIIFamilies))
	}
	return lr, notes
}

// familyPIIFindings adds the unregistered keys holding personal data, by
// family form, to lr and notes.
func (a *Aggregator) familyPIIFindings(lr *lateRule, notes *[]string) {
	if len(a.famPII) == 0 {
		return
	}
	keys := map[string]int64{} // keys by family form
	a.eachGroup(func(g *group) {
		if g.kind == report.KindPrefix && g.fs != nil {
			keys[a.piiFormOf(g.family).form] += g.keys
		}
	})
	forms := slices.Sorted(maps.Keys(a.famPII))
	for _, form := range forms {
		f := a.famPII[form]
		slots := slices.Sorted(maps.Keys(f.slots))
		for _, slot := range slots {
			s := f.slots[slot]
			for kind := range s.kinds {
				k := &s.kinds[kind]
				pk := naming.PIIKind(kind)
				if k.evidence(pk) != "" {
					continue
				}
				n := max(keys[form], k.hits)
				*notes = append(*notes, fmt.Sprintf(piiNotePrefix+"{%s} of unregistered keys %s holds %s in %s of %s keys", s.name, form, pk, human.Count(k.hits), human.Count(n)))
				const hint = "store a hash of it with a {name:hash} placeholder, or mark the template pii: allow after review"
				for _, pkey := range k.sorted() {
					tmpl := pkey.group
					if tmpl == report.OtherGroup {
						tmpl = form // a family past the cap of groups: its form names it
					}
					f := finding.Finding{Rule: finding.PII, Severity: finding.Error, Key: pkey.key, Template: tmpl,
						Message: clipText(fmt.Sprintf("%s %s in the key: keys show up in SCAN, MONITOR, slow logs and dashboards (%s of the %s keys of %s do)",
							strings.TrimPrefix(strings.TrimPrefix(singular(pk), "a "), "an "), pkey.masked, human.Count(k.hits), human.Count(n), form)), Hint: hint}
					lr.items = append(lr.items, newLate(&f, pkey.bytes, pkey.keyLen, pkey.db, groupRef{report.KindPrefix, pkey.group, pkey.db}))
				}
				lr.unlisted[finding.Error] += k.lost
			}
		}
	}
}

func singular(k naming.PIIKind) string {
	s := strings.TrimSuffix(k.String(), "s")
	if strings.HasSuffix(s, "addresse") {
		s = strings.TrimSuffix(s, "e")
	}
	if strings.HasPrefix(s, "e-mail") || strings.HasPrefix(s, "international") {
		return "an " + s
	}
	return "a " + s
}

// Unregistered keys are judged by the same evidence, pooled by inferred
// family: naming.InferValues hands over the values that became a
// {phone:hash}, {idcard:hash}, {id:int}, {n:int} or {email:hash}. Which of
// the number placeholders a value becomes depends on the value itself
// (13800000001 is a {phone:hash}, 12800000001 an {id:int}), so the
// evidence is pooled under the family's form with every number
// placeholder written {num} (piiForm): order:13800000001 and
// order:12800000001 are one slot's values, a hit and a miss.

// maxPIIFamilies bounds the families whose evidence is kept; keys of
// further families are counted in piiFamLost.
const maxPIIFamilies = 4096

// piiFamily is the evidence of the unregistered keys of one form.
type piiFamily struct {
	piiSlots
	form string
}

// piiForm is a family's form: the name its evidence is pooled under,
// and its placeholders' names by position.
type piiForm struct {
	form  string
	slots []string
}

// seeFamilyPII judges the values of unregistered key r.Key, of inferred
// family family, counted in group g.
func (a *Aggregator) seeFamilyPII(r *Record, family string, g *group) {
	if !naming.MayHoldValuePII(r.Key) {
		return
	}
	pf := a.piiFormOf(family)
	f := a.famPII[pf.form]
	if f == nil {
		if len(a.famPII) >= maxPIIFamilies {
			a.piiFamLost++
			return
		}
		f = &piiFamily{piiSlots: piiSlots{slots: map[int]*piiSlot{}}, form: pf.form}
		a.famPII[pf.form] = f
	}
	a.famCur = pf
	a.famSlots, a.famGroup = f, g.name
	if vals, ok := a.valuesOf(r.Key); ok {
		// Classify recorded them as it inferred the family.
		for _, v := range vals {
			a.seeFamilyValue(v.slot, r.Key[v.off:v.off+v.n])
		}
	} else {
		a.inferBuf = naming.InferValues(a.inferBuf[:0], r.Key, a.reg.Separator, a.famFn)
	}
	a.famSlots, a.famCur = nil, nil
}

func (a *Aggregator) seeFamilyValue(slot int, v string) {
	name := "num"
	if slot < len(a.famCur.slots) {
		name = a.famCur.slots[slot]
	}
	a.rec.seePII(&a.famSlots.piiSlots, slot, name, v, a.famGroup)
}

// piiFormOf is family's form (cached).
func (a *Aggregator) piiFormOf(family string) *piiForm {
	if pf := a.piiForms[family]; pf != nil {
		return pf
	}
	pf := newPIIForm(family)
	if len(a.piiForms) >= maxPIIFamilies {
		clear(a.piiForms)
	}
	a.piiForms[strings.Clone(family)] = pf
	return pf
}

// newPIIForm writes every number placeholder of an inferred template as
// {num}, {num2}, ...: the placeholders InferValues gives numbers to.
func newPIIForm(family string) *piiForm {
	var b strings.Builder
	pf := &piiForm{}
	nums := 0
	for i := 0; i < len(family); i++ {
		c := family[i]
		if (c == '{' || c == '}') && i+1 < len(family) && family[i+1] == c {
			b.WriteString(family[i : i+2])
			i++
			continue
		}
		if c != '{' {
			b.WriteByte(c)
			continue
		}
		end := strings.IndexByte(family[i:], '}')
		if end < 0 {
			b.WriteString(family[i:])
			break
		}
		ph := family[i+1 : i+end]
		name, _, _ := strings.Cut(ph, ":")
		switch strings.TrimRight(name, "0123456789") {
		case "phone", "idcard", "id", "n":
			nums++
			name = "num"
			if nums > 1 {
				name += strconv.Itoa(nums)
			}
			b.WriteString("{" + name + "}")
		default:
			b.WriteString(family[i : i+end+1])
		}
		pf.slots = append(pf.slots, name)
		i += end
	}
	pf.form = b.String()
	return pf
}

// piiKindNames name the kinds in the state.
var piiKindNames = [naming.NumPIIKinds]string{naming.Mobile: "mobile", naming.E164: "e164", naming.IDCard: "idcard", naming.Card: "card", naming.Email: "email"}

// piiState is the evidence of personal data, for the report's state.
func (a *Aggregator) piiState() []report.StatePII {
	var out []report.StatePII
	add := func(kind, name string, ps *piiSlots) {
		sp := report.StatePII{Kind: kind, Name: report.Str(name)}
		for _, slot := range slices.Sorted(maps.Keys(ps.slots)) {
			s := ps.slots[slot]
			for kind := range s.kinds {
				k := &s.kinds[kind]
				if k.hits == 0 && k.misses == 0 {
					continue
				}
				ss := report.StatePIISlot{Slot: slot, Name: s.name, Kind: piiKindNames[kind], Hits: k.hits, Misses: k.misses, Lo: k.lo, Hi: k.hi, Lost: k.lost}
				for _, pk := range k.sorted() {
					keyLen := pk.keyLen
					if keyLen == len(pk.key) {
						keyLen = 0 // the key is whole
					}
					ss.Keys = append(ss.Keys, report.StatePIIKey{Key: report.Str(pk.key), KeyLen: keyLen, DB: pk.db, Bytes: pk.bytes, Masked: pk.masked, Group: report.Str(pk.group)})
				}
				sp.Slots = append(sp.Slots, ss)
			}
		}
		if len(sp.Slots) > 0 {
			out = append(out, sp)
		}
	}
	for i, ps := range a.pii {
		if ps != nil {
			add(report.KindTemplate, a.reg.Entries[i].Key, ps)
		}
	}
	for _, form := range slices.Sorted(maps.Keys(a.famPII)) {
		add(report.KindPrefix, form, &a.famPII[form].piiSlots)
	}
	return out
}

// loadPII restores the evidence of personal data.
func (a *Aggregator) loadPII(st []report.StatePII) error {
	for _, sp := range st {
		var ps *piiSlots
		switch sp.Kind {
		case report.KindTemplate:
			e, err := a.entryOf(string(sp.Name))
			if err != nil {
				return err
			}
			if ps = a.pii[e.Index]; ps == nil {
				ps = &piiSlots{slots: map[int]*piiSlot{}}
				a.pii[e.Index] = ps
			}
		default:
			form := string(sp.Name)
			f := a.famPII[form]
			if f == nil {
				f = &piiFamily{piiSlots: piiSlots{slots: map[int]*piiSlot{}}, form: form}
				a.famPII[form] = f
			}
			ps = &f.piiSlots
		}
		for _, ss := range sp.Slots {
			kind := slices.Index(piiKindNames[:], ss.Kind)
			if kind <= 0 {
				return fmt.Errorf("the report's state names personal data of kind %q, which this keyguard does not know: make the report again with this version", ss.Kind)
			}
			s := ps.slots[ss.Slot]
			if s == nil {
				s = &piiSlot{name: ss.Name}
				ps.slots[ss.Slot] = s
			}
			k := piiKind{hits: ss.Hits, misses: ss.Misses, lo: ss.Lo, hi: ss.Hi, lost: ss.Lost}
			for _, pk := range ss.Keys {
				k.keys = append(k.keys, piiKey{key: string(pk.Key), keyLen: max(pk.KeyLen, len(pk.Key)), db: pk.DB, bytes: pk.Bytes, masked: pk.Masked, group: string(pk.Group)})
			}
			s.kinds[kind].merge(&k)
		}
	}
	return nil
}
