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
	guessTrust    = 32
	guessOdds     = 8
	guessFamilies = 4096 // families remembered; others are never guessed
)

type famType struct {
	typ   string
	agree int // keys shown to be typ: TYPE answers, or first probes of typ that proved it
	other int // keys shown to be of another type
}

// famTypes is a walker's knowledge of its families' types.
type famTypes map[string]*famType

// guess is the type to probe a key of family f with, or "" (never a
// module type: it has no count command to prove it).
func (g famTypes) guess(f string) string {
	if t := g[f]; t != nil && t.agree >= guessTrust && t.other*guessOdds < t.agree && countIndex(t.typ) >= 0 {
		return t.typ
	}
	return ""
}

// learn counts a key of family f shown to be of type typ ("" for a
// vanished key: not counted).
func (g famTypes) learn(f, typ string) {
	if f == "" || typ == "" {
		return
	}
	t := g[f]
	if t == nil {
		if len(g) >= guessFamilies {
			return
		}
		t = &famType{typ: typ}
		g[f] = t
	}
	if typ == t.typ {
		t.agree++
		return
	}
	t.other++
	if t.other > t.agree { // the other keys are the family's usual type now (most of them typ)
		t.typ, t.agree, t.other = typ, t.other, t.agree
	}
}
