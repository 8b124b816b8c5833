package rediscmd

import "github.com/keyguard/keyguard/internal/rediscmd/internal/namehash"

// Command is one entry of the Redis command table: a top-level command
// ("get") or a subcommand of a container ("client|setname", "object|freq").
// Commands are shared, immutable table entries: never modify one.
type Command struct {
	// Name is lower case; a subcommand is "container|sub".
	Name string
	// Arity counts the command name (and the subcommand name) too: n > 0
	// means exactly n arguments, n < 0 at least -n.
	Arity int
	Flags Flags
	ACL   ACLCategories
	// Tips are the COMMAND INFO tips ("request_policy:all_shards", ...).
	Tips []string
	// FirstKey, LastKey and Step are the legacy COMMAND INFO key range.
	FirstKey, LastKey, Step int
	// KeySpecs are the Redis 7 key specifications, in COMMAND INFO order.
	KeySpecs []KeySpec
	// Class is derived from Flags and KeySpecs, see Class.
	Class Class

	parent       int16  // index of the container in commands, -1 at top level
	subLo, subHi uint16 // subcommands are commands[subLo:subHi]
	proc         proc   // the server's getkeys_proc equivalent, if it has one
}

// KeySpec is one Redis 7 key specification: where the search for keys
// begins and how the keys are found from there.
type KeySpec struct {
	Notes string
	Flags KeyFlags
	Begin BeginSearch
	Find  FindKeys
}

// BeginKind is the begin_search type of a key spec.
type BeginKind uint8

const (
	// BeginUnknown: the keys cannot be found from the arguments alone
	// (SORT's BY/GET/STORE); the command has a dedicated extractor.
	BeginUnknown BeginKind = iota
	// BeginIndex: the search starts at argument Index.
	BeginIndex
	// BeginKeyword: the search starts after the first argument equal to
	// Keyword, looking from StartFrom (backwards from the end when StartFrom
	// is negative).
	BeginKeyword
)

// BeginSearch is the begin_search part of a key spec.
type BeginSearch struct {
	Kind      BeginKind
	Index     int
	Keyword   string
	StartFrom int
}

// FindKind is the find_keys type of a key spec.
type FindKind uint8

const (
	// FindUnknown: the keys cannot be found from the spec.
	FindUnknown FindKind = iota
	// FindRange: keys from the begin position to LastKey (relative to it;
	// negative counts from the end of the arguments, with Limit > 0 meaning
	// "1/Limit of the remaining arguments"), every KeyStep arguments.
	FindRange
	// FindKeynum: the argument at KeyNumIdx (relative to the begin
	// position) holds the number of keys, which start at FirstKey (relative
	// too), every KeyStep arguments.
	FindKeynum
)

// FindKeys is the find_keys part of a key spec.
type FindKeys struct {
	Kind      FindKind
	LastKey   int
	KeyStep   int
	Limit     int
	KeyNumIdx int
	FirstKey  int
}

// Class says what a command may do to the keyspace.
type Class uint8

const (
	// ClassNone: touches no keys' data (connection, server, pub/sub and
	// container commands, SPUBLISH's shard channel...).
	ClassNone Class = iota
	// ClassRead: the readonly flag, or only read-only keys (EVAL_RO).
	ClassRead
	// ClassWrite: the write flag, or a key spec that may modify the key
	// (RW, OW or RM), as for EVAL and FCALL.
	ClassWrite
)

func (c Class) String() string {
	switch c {
	case ClassRead:
		return "read"
	case ClassWrite:
		return "write"
	}
	return "none"
}

// HasKeys reports whether the command can take keys at all (COMMAND GETKEYS
// answers "The command has no key arguments" for the others). Shard
// channels (SPUBLISH, SSUBSCRIBE) are not keys.
func (c *Command) HasKeys() bool {
	if c.proc != procNone {
		return true
	}
	for i := range c.KeySpecs {
		if c.KeySpecs[i].Flags&KeyNotKey == 0 {
			return true
		}
	}
	return false
}

// IsSubcommand reports whether c is a subcommand ("config|get").
func (c *Command) IsSubcommand() bool { return c.parent >= 0 }

// Parent returns the container of a subcommand, nil for a top-level command.
func (c *Command) Parent() *Command {
	if c.parent < 0 {
		return nil
	}
	return &commands[c.parent]
}

// Subcommands returns the subcommands of a container command (CLIENT,
// CONFIG, OBJECT...) sorted by name, nil for the others.
func (c *Command) Subcommands() []Command {
	if c.subHi == c.subLo {
		return nil
	}
	return commands[c.subLo:c.subHi:c.subHi]
}

// ArityOK reports whether argc arguments (name included) satisfy Arity.
func (c *Command) ArityOK(argc int) bool {
	if c.Arity >= 0 {
		return argc == c.Arity
	}
	return argc >= -c.Arity
}

// Commands returns the whole table: top-level commands sorted by name, each
// followed by its subcommands. The entries must not be modified.
func Commands() []Command { return commands[:len(commands):len(commands)] }

// Lookup finds a command by name, case-insensitively and without
// allocating. A subcommand is named "container|sub" ("CLIENT|SETNAME").
func Lookup(name string) (*Command, bool) {
	i := lookupHash(namehash.Sum(name), name, "")
	if i < 0 {
		return nil, false
	}
	return &commands[i], true
}

// LookupArgs finds the command of an argument vector as go-redis passes it
// (cmd.Args(): the command name first), resolving a container's subcommand
// from args[1] the way the server does. A container with no subcommand
// argument resolves to the container itself; an unknown subcommand is not
// found. It does not allocate.
func LookupArgs(args []any) (*Command, bool) {
	if len(args) == 0 {
		return nil, false
	}
	var buf [numBufSize]byte
	name, ok := wire(args[0], &buf)
	if !ok {
		return nil, false
	}
	h := namehash.Sum(name)
	i := lookupHash(h, name, "")
	if i < 0 || commands[i].parent >= 0 { // "client|setname" is no command name
		return nil, false
	}
	c := &commands[i]
	if c.subHi == c.subLo || len(args) < 2 {
		return c, true
	}
	var buf2 [numBufSize]byte
	sub, ok := wire(args[1], &buf2)
	if !ok || sub == "" {
		return nil, false
	}
	j := lookupHash(namehash.Add(namehash.Add(h, "|"), sub), name, sub)
	if j < 0 {
		return nil, false
	}
	return &commands[j], true
}

// lookupHash probes the generated open-addressing index for the entry named
// a (when b is "") or a|b, case-insensitively. It returns -1 if absent.
func lookupHash(h uint32, a, b string) int {
	mask := uint32(len(nameIndex) - 1)
	for slot := h & mask; ; slot = (slot + 1) & mask {
		e := nameIndex[slot]
		if e == 0 {
			return -1
		}
		if nameIs(commands[e-1].Name, a, b) {
			return int(e - 1)
		}
	}
}

// nameIs reports whether name equals a (b == "") or a+"|"+b, ignoring ASCII case.
func nameIs(name, a, b string) bool {
	if b == "" {
		return equalFold(name, a)
	}
	return len(name) == len(a)+1+len(b) && name[len(a)] == '|' &&
		equalFold(name[:len(a)], a) && equalFold(name[len(a)+1:], b)
}

// equalFold compares ASCII case-insensitively (C-locale strcasecmp on
// strings of the same length; unlike strings.EqualFold no Unicode folding).
func equalFold(s, t string) bool {
	if len(s) != len(t) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c, d := s[i], t[i]
		if c == d {
			continue
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if 'A' <= d && d <= 'Z' {
			d += 'a' - 'A'
		}
		if c != d {
			return false
		}
	}
	return true
}
