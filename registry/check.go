package registry

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"unsafe"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/internal/swar"
	"github.com/keyguard/keyguard/keytmpl"
	"github.com/keyguard/keyguard/naming"
)

// Checker applies the name rules to concrete keys. It keeps scratch space,
// so use one per goroutine.
type Checker struct {
	reg   *Registry
	rules naming.Rules
	caps  []keytmpl.Capture
	base  []byte // a hot key's copy joined without its suffix; the captures may point into it

	// Caches of the unregistered path, which audits run for every key of
	// a legacy keyspace: the last key inferred (callers infer a key, then
	// check it), inferred templates interned (a keyspace has few), and the
	// messages that depend only on the inferred template or the first
	// segment. The maps are bounded: interning stops when full, message
	// caches are emptied when full.
	lastKey      []byte // a copy: the caller's buffer may be reused
	lastInferred string
	inferBuf     []byte
	interned     map[string]string
	shapes       naming.ShapeCache[string] // inferred templates by key shape
	hints        map[string]string         // unregistered hint by inferred template
	domains      map[string]string         // domain message by first segment
	envMsg       string                    // domain message of a key without the env prefix
	deferPII     bool                      // DeferPII: CheckEntry leaves placeholder values' personal data to the caller
	noRegistry   bool                      // NoRegistry: no unregistered or domain findings
	texts        *FamilyTexts              // the caller's texts of the family being checked (CheckInferredTexts), or nil
}

const (
	maxInterned = 1 << 14 // inferred templates interned: as many as the families an audit keeps
	// entries per message cache: as many as the families an audit keeps
	// (an audit's Checker sees a family's keys over and over), ~3 MiB
	maxCachedMsgs = 1 << 14
	maxCachedText = 256 // longer templates and segments are formatted every time
)

// NewChecker returns a Checker for r.
func (r *Registry) NewChecker() *Checker {
	return &Checker{reg: r, rules: r.Rules()}
}

// Result is the classification of one key.
type Result struct {
	Entry    *Entry // nil when unregistered
	Captures []keytmpl.Capture
	Inferred string // for unregistered keys: the template the key probably follows
}

// Check classifies key and reports the rules its name breaks. For a
// registered key, the template was linted already, so only what the values
// bring is checked: length, bytes that break keys, personal data. An
// unregistered key gets every naming rule. Captures in the result are
// valid until the next call.
func (c *Checker) Check(key string, emit func(finding.Finding)) Result {
	e := c.reg.Lookup(key)
	if e == nil {
		return c.unregistered(key, emit)
	}
	return c.registered(key, e, emit)
}

// CheckEntry is Check for a caller that has looked the key up already:
// e is Registry.Lookup(key), nil when unregistered. It reports the same
// findings but leaves Result.Captures empty, so that a key none of whose
// placeholder values can break a rule (every byte printable, no quote,
// brace or angle bracket, no '@', no run of 11 digits) is not matched twice.
func (c *Checker) CheckEntry(key string, e *Entry, emit func(finding.Finding)) Result {
	if e == nil {
		return c.unregistered(key, emit)
	}
	if (c.rules.MaxKeyBytes <= 0 || len(key) <= c.rules.MaxKeyBytes) && (len(key) < e.quietUnder || quietValues(key) || c.deferPII && !e.anyValue()) {
		return Result{Entry: e}
	}
	res := c.registered(key, e, emit)
	clear(c.caps) // slices of key: keep no reference to the caller's buffers
	res.Captures = nil
	return res
}

// quietUnder is Entry.quietUnder for template t. The rules registered
// applies to placeholder values are the value rule (only on {any}
// values) and the personal-data rule (only where piiScanned, never under
// pii: allow), and every personal datum naming.FindPII knows needs
// either an '@', which no typed value holds, or a run of 11 digits. A
// key is its literal bytes plus its values: when it is shorter than the
// literal bytes plus 11, no value reaches 11 bytes.
func quietUnder(t *keytmpl.Template, piiAllow bool) int {
	lit, pii := len(t.Segments())-1, false // the separators
	for _, seg := range t.Segments() {
		for _, p := range seg.Parts {
			switch {
			case !p.IsPlaceholder():
				lit += len(p.Lit)
			case p.Kind == keytmpl.Any:
				return 0
			case piiScanned(keytmpl.Placeholder{Name: p.Name, Kind: p.Kind}):
				pii = true
			}
		}
	}
	if !pii || piiAllow {
		return math.MaxInt
	}
	return lit + 11
}

// quietValues reports whether no part of key can hold a value that the
// value rule (naming.Rules.Value: bytes outside printable ASCII, quotes,
// braces, angle brackets) or naming.FindPII (a run of 11 or more digits, or an '@') would
// flag: a placeholder value is a substring of the key, and a substring's
// digit runs are no longer than the key's.
func quietValues(key string) bool {
	run := 0 // digits that end what was scanned
	i := 0
	for ; i+8 <= len(key); i += 8 {
		x := swar.Load(key, i)
		if noisy8(x) {
			return false
		}
		// x is printable ASCII: a digit byte is one of 0x30..0x39.
		const lsb, msb = swar.Lo, swar.Hi
		digit := ((x | msb) - lsb*0x30) &^ ((x | msb) - lsb*0x3a) & msb
		if digit == msb {
			if run += 8; run >= 11 {
				return false
			}
			continue
		}
		other := ^digit & msb // bit 8k+7: byte k is not a digit
		if run+(bits.TrailingZeros64(other)-7)/8 >= 11 {
			return false
		}
		run = bits.LeadingZeros64(other) / 8
	}
	for ; i < len(key); i++ {
		switch quietClass[key[i]] {
		case 0:
			run = 0
		case 1:
			if run++; run >= 11 {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// noisy8 reports whether one of the eight bytes of x is one quietClass
// calls 2 (the usual SWAR tests: a byte below, above or equal to a value
// leaves a top bit).
func noisy8(x uint64) bool {
	low := swar.Less(x, '!')                       // a byte below '!' (or x has a byte >= 0x80, caught next)
	high := (x&^swar.Hi + swar.Lo*(0x80-0x7f)) | x // a byte >= 0x7f
	quote := swar.Eq(x, '"') | swar.Eq(x, '\'') | swar.Eq(x, '`') | swar.Eq(x, '{') | swar.Eq(x, '}') | swar.Eq(x, '<') | swar.Eq(x, '>') | swar.Eq(x, '@')
	return low|high&swar.Hi|quote != 0
}

// quietClass classifies a byte for quietValues: 0 quiet, 1 a digit, 2 a
// byte a value rule flags (control, space, non-ASCII, quotes, braces,
// angle brackets, '@').
const quietClass = "" +
	"\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02" +
	"\x02\x00\x02\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x00\x00\x02\x00\x02\x00" +
	"\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x02\x00\x02" +
	"\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02" +
	"\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02" +
	"\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02" +
	"\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02"

func (c *Checker) registered(key string, e *Entry, emit func(finding.Finding)) Result {
	var ok bool
	if c.caps, ok = e.Template.AppendCaptures(c.caps[:0], key); !ok {
		c.caps, _ = matchCopy(e, c.caps[:0], key, &c.base) // a hot key's copy
	}
	add := func(rule string, sev finding.Severity, msg, hint string) {
		emit(finding.Finding{Rule: rule, Severity: sev, Key: key, Template: e.Key, Owner: e.Owner, Message: msg, Hint: hint})
	}
	c.rules.Length(key, add)
	for i, p := range e.Template.Placeholders() {
		v := c.value(p.Name)
		if p.Kind == keytmpl.Any {
			c.rules.ValueAt(v, c.keyOffset(key, v), add)
		}
		if i < len(e.piiScan) && e.piiScan[i] && !c.deferPII {
			if what, ok := naming.FindPII(v); ok {
				add(finding.PII, finding.Warning, fmt.Sprintf("placeholder {%s} holds what looks like %s %s", p.Name, human.Article(what), what),
					fmt.Sprintf("if it is personal data, make it {%s:hash}; if reviewed, mark the template pii: allow", p.Name))
			}
		}
	}
	return Result{Entry: e, Captures: c.caps}
}

// DeferPII makes CheckEntry leave personal data in placeholder values
// to the caller, who judges them with the evidence of the whole template
// (SlotValues hands them over), and the checks of unregistered keys leave
// personal data in their names to it too (naming.InferValues hands those
// over, by inferred family); an audit does, a check of one key cannot.
func (c *Checker) DeferPII() { c.deferPII = true }

// NoRegistry makes the checks of unregistered keys leave out what only a
// registry decides, the unregistered and domain findings, for a caller
// whose registry is a stand-in (an audit run without one): their
// messages, formatted per family and first segment, were most of the
// checks' time on a keyspace of thousands of families, and then dropped.
func (c *Checker) NoRegistry() { c.noRegistry = true }

// anyValue reports whether e has an {any} placeholder, whose values the
// value rule checks.
func (e *Entry) anyValue() bool { return e.quietUnder == 0 }

// SlotValues calls fn with the value of every placeholder of key (which
// e matches) that may hold personal data: free text, numbers and hex
// strings, unless e is pii: allow; {x:hash}, enum, uuid, date and region
// values cannot. A key too short for any value to reach 11 characters (6
// for free text) is not matched at all. value is valid during the call.
func (c *Checker) SlotValues(key string, e *Entry, fn func(slot int, name, value string)) {
	if len(key) < e.slotUnder {
		return
	}
	var ok bool
	if c.caps, ok = e.Template.AppendCaptures(c.caps[:0], key); !ok {
		if c.caps, ok = matchCopy(e, c.caps[:0], key, &c.base); !ok {
			return
		}
	}
	for i, p := range e.Template.Placeholders() {
		if i < len(e.slotScan) && e.slotScan[i] {
			fn(i, p.Name, c.value(p.Name))
		}
	}
	clear(c.caps) // slices of key: keep no reference to the caller's buffers
}

// slotScan is, per placeholder of t, whether SlotValues hands its values
// over, and the key length under which no value can be personal data.
func slotScan(t *keytmpl.Template, piiAllow bool) ([]bool, int) {
	if piiAllow {
		return nil, math.MaxInt
	}
	ph := t.Placeholders()
	out := make([]bool, len(ph))
	lit, short, scanned := len(t.Segments())-1, 11, false
	for _, seg := range t.Segments() {
		for _, p := range seg.Parts {
			if !p.IsPlaceholder() {
				lit += len(p.Lit)
			}
		}
	}
	for i, p := range ph {
		switch p.Kind {
		case keytmpl.Any:
			out[i], scanned, short = true, true, 6 // a@b.cn
		case keytmpl.Int, keytmpl.Hex:
			out[i], scanned = true, true
		}
	}
	if !scanned {
		return out, math.MaxInt
	}
	return out, lit + short
}

// piiScan is, per placeholder of t, whether its values are looked at for
// personal data (piiScanned); nil under pii: allow. It is worked out once,
// at load: the check runs per key.
func piiScan(t *keytmpl.Template, piiAllow bool) []bool {
	if piiAllow {
		return nil
	}
	ph := t.Placeholders()
	out := make([]bool, len(ph))
	for i, p := range ph {
		out[i] = piiScanned(p)
	}
	return out
}

// piiScanned reports whether the values of p are looked at for personal
// data: free text ({name}), or a typed value whose name says it is
// personal ({phone:int}). The digits of an {orderId:int}, a {token:hex} or
// a {id:uuid} are an identifier, whatever they happen to spell; a :hash or
// :enum value cannot hold personal data at all.
func piiScanned(p keytmpl.Placeholder) bool {
	switch p.Kind {
	case keytmpl.Any:
		return true
	case keytmpl.Hash, keytmpl.Enum:
		return false
	}
	_, personal := naming.PIIName(p.Name)
	return personal
}

// within reports whether sub is a slice of s's memory.
func within(s, sub string) bool {
	if len(sub) == 0 || len(s) == 0 {
		return false
	}
	p, q := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.StringData(sub)))
	return q >= p && q+uintptr(len(sub)) <= p+uintptr(len(s))
}

// keyOffset is where value v, a capture of key, starts in key, so that a
// finding names the byte the user sees. The captures of a hot key's copy
// whose suffix sits inside a hash tag are slices of c.base, the name it
// copies joined without the suffix: a value after the suffix moves by its
// length.
func (c *Checker) keyOffset(key, v string) int {
	if within(key, v) {
		return int(uintptr(unsafe.Pointer(unsafe.StringData(v))) - uintptr(unsafe.Pointer(unsafe.StringData(key))))
	}
	base := unsafe.String(unsafe.SliceData(c.base), len(c.base))
	if !within(base, v) {
		return 0 // an empty value: no byte of it is reported
	}
	off := int(uintptr(unsafe.Pointer(unsafe.StringData(v))) - uintptr(unsafe.Pointer(unsafe.StringData(base))))
	if at, end, ok := copySuffix(key); ok && off >= at {
		off += end - at
	}
	return off
}

func (c *Checker) value(name string) string {
	for _, cp := range c.caps {
		if cp.Name == name {
			return cp.Value
		}
	}
	return ""
}

func (c *Checker) unregistered(key string, emit func(finding.Finding)) Result {
	r := c.reg
	inferred := c.Infer(key)
	add := func(rule string, sev finding.Severity, msg, hint string) {
		emit(finding.Finding{Rule: rule, Severity: sev, Key: key, Template: inferred, Message: msg, Hint: hint})
	}
	if c.noRegistry {
		c.keyRules(key, 0, add)
		return Result{Inferred: inferred}
	}
	t, keep := c.texts, c.texts != nil
	if !keep {
		t = &FamilyTexts{}
	}
	switch {
	case t.hint != "":
	case keep:
		t.hint = hintMsg(inferred) // the caller keeps it with the family: no cache of its own
	default:
		t.hint = c.hint(inferred)
	}
	add(finding.Unregistered, finding.Error, "matches no template of the registry", t.hint)
	start := 0
	if r.Env != "" {
		if !strings.HasPrefix(key, r.Env+string(r.Separator)) {
			if c.envMsg == "" {
				c.envMsg = fmt.Sprintf("does not start with the env prefix %q", r.Env+string(r.Separator))
			}
			add(finding.Domain, finding.Warning, c.envMsg, "every key of this registry starts with its env")
		} else {
			start = len(r.Env) + 1
		}
	}
	if strings.IndexByte(key, r.Separator) >= 0 {
		first, _, _ := strings.Cut(key[start:], string(r.Separator))
		first = domainOf(first)
		msg := ""
		if t.firstSet && t.first == first {
			msg = t.domain
		} else {
			if _, declared := r.domainIdx[first]; !declared {
				msg = c.domainMsg(first)
			}
			// Most families have one first segment: t keeps the first it
			// met (of a placeholder's values, the others are looked up).
			if keep && !t.firstSet {
				// Kept as the family name's own first segment where it is
				// one (most families): read with the name, where a copy of
				// its own missed the cache for every key of a keyspace of
				// thousands of families.
				if len(inferred) > len(first) && inferred[len(first)] == r.Separator && inferred[:len(first)] == first {
					t.first = inferred[:len(first)]
				} else {
					t.first = strings.Clone(first)
				}
				t.firstSet, t.domain = true, msg
			}
		}
		if msg != "" {
			add(finding.Domain, finding.Warning, msg, "use a declared domain, or declare this one with its owner")
		}
	}
	c.keyRules(key, start, add)
	return Result{Inferred: inferred}
}

// keyRules checks key's name from start (past the env prefix): the
// naming rules, and personal data unless deferred.
func (c *Checker) keyRules(key string, start int, add func(rule string, sev finding.Severity, msg, hint string)) {
	if c.deferPII {
		c.rules.KeyExceptPII(key, start, add)
	} else {
		c.rules.Key(key, start, add)
	}
}

// Infer returns the template naming.Infer derives from key: the
// Result.Inferred that Check gives an unregistered key. A caller that
// infers a key and then checks it (inventory's Classify, then Add)
// pays for one inference, and the templates of a keyspace, which repeat,
// are one string each rather than one per key.
func (c *Checker) Infer(key string) string {
	if c.lastKey != nil && string(c.lastKey) == key {
		return c.lastInferred
	}
	inferred, found, shaped := c.shapes.Get(key, c.reg.Separator)
	if !found {
		c.inferBuf = naming.AppendInfer(c.inferBuf[:0], key, c.reg.Separator)
		inferred = c.InferName(c.inferBuf)
		if shaped {
			c.shapes.Put(inferred)
		}
	}
	c.lastKey = append(c.lastKey[:0], key...)
	c.lastInferred = inferred
	return inferred
}

// InferShaped returns Infer(key) when a key of key's shape was inferred
// before (naming.ShapeCache), without inferring key; ok false otherwise.
func (c *Checker) InferShaped(key string) (inferred string, ok bool) {
	inferred, ok, _ = c.shapes.Get(key, c.reg.Separator)
	return inferred, ok
}

// LearnShape records inferred, Infer(key) as the caller found it
// (InferName), for the keys of key's shape.
func (c *Checker) LearnShape(key, inferred string) {
	c.shapes.PutFor(key, c.reg.Separator, inferred)
}

// InferName is Infer of a key whose family name was inferred already
// (naming.AppendInfer of the key, with the registry's separator): the
// name as one string for all keys of the family, while the checker has
// room for it.
func (c *Checker) InferName(name []byte) string {
	inferred, ok := c.interned[string(name)]
	if !ok {
		inferred = string(name)
		if c.interned == nil {
			c.interned = map[string]string{}
		}
		if len(c.interned) < maxInterned && len(inferred) <= maxCachedText {
			c.interned[inferred] = inferred
		}
	}
	return inferred
}

func (c *Checker) hint(inferred string) string { return cachedMsg(&c.hints, inferred, hintMsg) }

func (c *Checker) domainMsg(first string) string { return cachedMsg(&c.domains, first, domainMsg) }

// hintMsg and domainMsg are formatted for every family and first
// segment of a keyspace: without fmt.
func hintMsg(inferred string) string {
	return "declare it: - key: " + strconv.Quote(inferred) + " with type, ttl and owner"
}

func domainMsg(first string) string {
	return "first segment " + finding.Display(first) + " is not a declared domain"
}

// cachedMsg returns format(k), formatted once per k while *m has room.
func cachedMsg(m *map[string]string, k string, format func(string) string) string {
	if len(k) > maxCachedText {
		return format(k)
	}
	msg, ok := (*m)[k]
	if !ok {
		switch {
		case *m == nil:
			*m = map[string]string{}
		case len(*m) >= maxCachedMsgs:
			// Emptied, not made anew: its table keeps its size, which a
			// new map grew back to by rehashing, over and over in a
			// keyspace of more families than the cache holds.
			clear(*m)
		}
		msg = format(k)
		(*m)[strings.Clone(k)] = msg // k may be part of a key: do not hold on to the key
	}
	return msg
}
