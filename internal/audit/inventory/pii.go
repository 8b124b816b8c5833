package inventory

import (
	"fmt"
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
}

// seePII judges the value of placeholder slot (called name) of r.Key,
// a key of e.
func (a *Aggregator) seePII(e *registry.Entry, slot int, name, v string) {
	hit, miss := naming.ValuePII(v)
	if hit == naming.NoPII && miss == 0 {
		return
	}
	ps := a.pii[e.Index]
	if ps == nil {
		ps = &piiSlots{slots: map[int]*piiSlot{}}
		a.pii[e.Index] = ps
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
	r := a.rec
	if len(k.keys) >= maxPIIKeys {
		k.lost++
		return
	}
	k.keys = append(k.keys, piiKey{key: strings.Clone(clip(r.Key, maxKeepKey)), keyLen: len(r.Key), db: r.DB, bytes: max(r.Bytes, 0), masked: naming.Mask(v)})
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
	room := max(0, maxPIIKeys-len(k.keys))
	k.keys = append(k.keys, o.keys[:min(room, len(o.keys))]...)
	k.lost += int64(len(o.keys) - min(room, len(o.keys)))
}

// mergePII adds b's placeholder evidence to a's.
func (a *Aggregator) mergePII(b *Aggregator) {
	for i, bs := range b.pii {
		if bs == nil {
			continue
		}
		as := a.pii[i]
		if as == nil {
			a.pii[i] = bs
			continue
		}
		for slot, s := range bs.slots {
			t := as.slots[slot]
			if t == nil {
				as.slots[slot] = s
				continue
			}
			for k := range t.kinds {
				t.kinds[k].merge(&s.kinds[k])
			}
		}
	}
	for i, n := range b.piiKeys {
		a.piiKeys[i] += n
	}
}

// piiFindings are the keys whose placeholders hold personal data, and
// a note per template, placeholder and kind with its share.
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
				notes = append(notes, "personal data: "+share)
				hint := fmt.Sprintf("store a hash: make it {%s:hash} (the builder hashes the value); if reviewed, mark the template pii: allow", s.name)
				for _, pkey := range k.keys {
					f := finding.Finding{Rule: finding.PII, Severity: finding.Warning, Key: pkey.key, Template: e.Key, Owner: e.Owner,
						Message: clipText(fmt.Sprintf("placeholder {%s} holds %s %s (%s of the template's %s keys do)", s.name, singular(pk), pkey.masked, human.Count(k.hits), human.Count(a.piiKeys[i]))), Hint: hint}
					lr.items = append(lr.items, newLate(&f, pkey.bytes, pkey.keyLen, pkey.db, groupRef{report.KindTemplate, e.Key, pkey.db}))
				}
				lr.unlisted[finding.Warning] += k.lost
			}
		}
	}
	return lr, notes
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
