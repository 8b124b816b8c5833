package live

// Types of unregistered families. A key no template declares costs TYPE,
// and its element count (and value) a second round trip later, when the
// server has to fetch the key again. Keys of one inferred family nearly
// always share a type: once guessTrust keys of a family showed one type,
// and keys of other types are fewer than one in guessOdds, its later keys
// get that type's first probe straight away (a reply of the type proves
// it, as for a registered key). WRONGTYPE sends the key to the full check
// (TYPE and every count), which costs more than TYPE: a family of mixed
// types soon stops being guessed.
const (
	guessTrust = 32
	guessOdds  = 8
	// maxFamilies is how many families a walker remembers, ~160 bytes
	// each (per node walked); the others are guessed by the prior alone
	// and never modelled.
	maxFamilies = 1 << 14
)

type famType struct {
	typ   string
	agree int // keys shown to be typ: TYPE answers, or first probes of typ that proved it
	other int // keys shown to be of another type
}

// count counts a key shown to be of type typ.
func (t *famType) count(typ string) {
	if typ == t.typ {
		t.agree++
		return
	}
	t.other++
	if t.other > t.agree { // the other keys are the usual type now (most of them typ)
		t.typ, t.agree, t.other = typ, t.other, t.agree
	}
}

// trusted is t's type when its keys agree on it, or "" (never a module
// type: it has no count command to prove it).
func (t *famType) trusted() string {
	if t.agree >= guessTrust && t.other*guessOdds < t.agree && countIndex(t.typ) >= 0 {
		return t.typ
	}
	return ""
}

// family is what a walker knows of one unregistered family: its keys'
// types (none counted yet in a family a value was read of first) and the
// memory model's state of its values.
type family struct {
	famType
	tm *tmpl // nil until a key's first probe read its value (models.of)
}

// famTypes is a walker's knowledge of its families: each family's own,
// found once per key (of), and the prior, what the keys of families not
// known well enough on their own showed. A legacy keyspace of thousands
// of small families (40 keys each) never taught a family its type before
// most of its keys were probed, and families past maxFamilies never: the
// prior guesses their keys when the keyspace's unregistered keys agree
// (most of them strings, say), on the same terms as a family's own.
type famTypes struct {
	by    map[string]*family
	prior famType
}

// of is what the walker knows of family f, or nil.
func (g *famTypes) of(f string) *family { return g.by[f] }

// add makes the record of family f, not known yet; nil past maxFamilies.
func (g *famTypes) add(f string) *family {
	if f == "" || len(g.by) >= maxFamilies {
		return nil
	}
	if g.by == nil {
		g.by = map[string]*family{}
	}
	t := &family{}
	g.by[f] = t
	return t
}

// guess is the type to probe a key of family f with, or "".
func (g *famTypes) guess(f string) string { return g.guessFor(g.of(f)) }

// guessFor is guess given the family's record (nil: none).
func (g *famTypes) guessFor(t *family) string {
	if t != nil && t.agree >= guessTrust {
		return t.trusted()
	}
	if t != nil && t.agree+t.other > 0 && (t.other > 0 || t.typ != g.prior.typ) {
		return "" // its own keys said otherwise
	}
	return g.prior.trusted()
}

// learn counts a key of family f shown to be of type typ ("" for a
// vanished key: not counted).
func (g *famTypes) learn(f, typ string) { g.learnFor(nil, f, typ) }

// learnFor is learn given the family's record when the caller has it.
func (g *famTypes) learnFor(t *family, f, typ string) {
	if f == "" || typ == "" {
		return
	}
	if t == nil {
		t = g.of(f)
	}
	if t == nil || t.agree < guessTrust {
		g.prior.count(typ) // f is not known on its own yet
	}
	if t == nil {
		if t = g.add(f); t == nil {
			return
		}
	}
	t.count(typ)
}
