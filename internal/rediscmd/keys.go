package rediscmd

import "errors"

// Errors returned by Keys. They mean the server would not accept the
// command as given, so no key of it can be touched; a caller that enforces
// rules treats them conservatively.
var (
	// ErrArity: the argument count does not satisfy the command's arity.
	ErrArity = errors.New("rediscmd: wrong number of arguments for the command; the server would reject it")
	// ErrNoKeys: the arguments locate no key although the command needs one
	// (COMMAND GETKEYS answers "Invalid arguments specified for command"),
	// e.g. XREAD without STREAMS or ZUNIONSTORE with numkeys 0.
	ErrNoKeys = errors.New("rediscmd: the arguments name no key of a command that needs one; the server would reject it")
	// ErrArgType: a key argument has a type go-redis cannot send (it fails
	// the command before sending it). fn may have seen earlier keys.
	ErrArgType = errors.New("rediscmd: a key argument has a type go-redis cannot marshal; implement encoding.BinaryMarshaler or pass a string")
)

// Key is one key of a command, as AppendKeys returns it.
type Key struct {
	Pos   int    // index in args (args[0] is the command name)
	Name  string // see Keys for when it aliases the argument's memory
	Flags KeyFlags
}

// maxSpans bounds the key ranges of one command: the generator refuses a
// table with more key specs than this.
const maxSpans = 4

// span is a run of key positions first, first+step, ... <= last.
type span struct {
	first, last, step int
	flags             KeyFlags
}

// Keys calls fn for every key of the command in args, in the order and at
// the positions COMMAND GETKEYS reports on Redis 7.0, with the key's flags
// (COMMAND GETKEYSANDFLAGS; where the server's extractor reports none, the
// flags of the key spec that covers the position). fn returning false stops
// the walk. args is the whole vector as go-redis passes it, command name
// (and subcommand) included.
//
// A key is the argument as go-redis would write it: a string is passed
// through, a []byte (or net.IP) is aliased without copying, so copy it
// (strings.Clone) to keep it beyond a mutation of the slice; other types
// (numbers, time.Time, encoding.BinaryMarshaler) are formatted, which
// allocates.
//
// Keys does not allocate for string and []byte keys. A command without keys
// returns nil without calling fn. Extraction is what the server does before
// running the command (the same used by ACL key checks and cluster
// routing); keys a command reaches only at run time are not visible: SORT
// BY/GET patterns, keys a Lua script or function touches without declaring
// them.
func (c *Command) Keys(args []any, fn func(pos int, key string, flags KeyFlags) bool) error {
	if !c.ArityOK(len(args)) {
		return ErrArity
	}
	var sp [maxSpans]span
	n, ok := c.spans(args, &sp)
	if !ok {
		return nil // no keys by construction
	}
	count := 0
	for _, s := range sp[:n] {
		step := max(s.step, 1)
		for i := s.first; i <= s.last; i += step {
			if i < 1 || i >= len(args) {
				continue
			}
			key, ok := ArgText(args[i])
			if !ok {
				return ErrArgType
			}
			count++
			if !fn(i, key, s.flags) {
				return nil
			}
		}
	}
	if count == 0 && c.Flags&FlagNoMandatoryKeys == 0 {
		return ErrNoKeys
	}
	return nil
}

// AppendKeys appends the keys of the command in args to dst (see Keys). It
// does not allocate when dst has room.
func (c *Command) AppendKeys(dst []Key, args []any) ([]Key, error) {
	err := c.Keys(args, func(pos int, key string, flags KeyFlags) bool {
		dst = append(dst, Key{Pos: pos, Name: key, Flags: flags})
		return true
	})
	return dst, err
}

// spans mirrors the server's getKeysFromCommandWithSpecs: key specs when
// they are all usable and their flags fixed, the command's own extractor
// otherwise. ok is false for a command that has no keys at all.
func (c *Command) spans(args []any, sp *[maxSpans]span) (n int, ok bool) {
	hasKeySpec, varFlags := false, false
	for i := range c.KeySpecs {
		f := c.KeySpecs[i].Flags
		hasKeySpec = hasKeySpec || f&KeyNotKey == 0
		varFlags = varFlags || f&KeyVariableFlags != 0
	}
	if hasKeySpec && !varFlags {
		if n, valid := c.specSpans(args, sp); valid {
			return n, true
		}
	}
	if c.proc != procNone {
		return c.proc.spans(c, args, sp), true
	}
	return 0, hasKeySpec
}

// specSpans mirrors getKeysUsingKeySpecs (Redis 7.0 src/db.c). valid is
// false when a spec is unusable (unknown, incomplete, bad numkeys, out of
// range): the server then returns no key from the specs at all.
func (c *Command) specSpans(args []any, sp *[maxSpans]span) (n int, valid bool) {
	argc := len(args)
	for k := range c.KeySpecs {
		s := &c.KeySpecs[k]
		if s.Flags&KeyNotKey != 0 {
			continue
		}
		first := 0
		switch s.Begin.Kind {
		case BeginIndex:
			first = s.Begin.Index
		case BeginKeyword:
			start, end := s.Begin.StartFrom, argc-1
			if start <= 0 {
				start, end = argc+start, 1
			}
			for i := start; i != end; {
				if i >= argc || i < 1 {
					break
				}
				if keywordIs(args[i], s.Begin.Keyword) {
					first = i + 1
					break
				}
				if start <= end {
					i++
				} else {
					i--
				}
			}
			if first == 0 {
				continue // keyword absent: this spec has no keys
			}
		default:
			return 0, false
		}

		var last, step int
		switch s.Find.Kind {
		case FindRange:
			step = s.Find.KeyStep
			switch {
			case s.Find.LastKey >= 0:
				last = first + s.Find.LastKey
			case s.Find.Limit == 0:
				last = argc + s.Find.LastKey
			default:
				last = first + ((argc-first)/s.Find.Limit + s.Find.LastKey)
			}
		case FindKeynum:
			step = s.Find.KeyStep
			at := first + s.Find.KeyNumIdx
			if at < 1 || at >= argc {
				return 0, false
			}
			numkeys, ok := argInt(args[at])
			if !ok || numkeys < 0 {
				return 0, false
			}
			first += s.Find.FirstKey
			last = first + int(int32(numkeys)) - 1 // the server keeps numkeys in a C int
		default:
			return 0, false
		}
		if last >= argc || last < first || first >= argc {
			return 0, false
		}
		if s.Flags&KeyIncomplete != 0 || n == len(sp) {
			return 0, false
		}
		sp[n] = span{first: first, last: last, step: step, flags: s.Flags}
		n++
	}
	return n, true
}

// proc names the server's getkeys_proc of a command (db.c), used when the
// key specs cannot be used.
type proc uint8

const (
	procNone      proc = iota
	procSet            // setGetKeys: SET, flags depend on GET
	procBitfield       // bitfieldGetKeys: read-only with GET only
	procSort           // sortGetKeys: key + STORE key
	procSortRO         // sortROGetKeys
	procMigrate        // migrateGetKeys: key or KEYS k1 k2...
	procGeoradius      // georadiusGetKeys: key + last STORE/STOREDIST key
	procXread          // xreadGetKeys: STREAMS k1..kn id1..idn
	procNum1           // genericGetKeys(0, 1, 2, 1): ZUNION, ZINTER, ZDIFF, SINTERCARD, ZINTERCARD, LMPOP, ZMPOP
	procNum2           // genericGetKeys(0, 2, 3, 1): EVAL*, FCALL*, BLMPOP, BZMPOP
	procStore          // genericGetKeys(1, 2, 3, 1): ZUNIONSTORE, ZINTERSTORE, ZDIFFSTORE
)

// specFlags returns the flags of the i-th key spec of c, 0 if there is none.
func (c *Command) specFlags(i int) KeyFlags {
	if i < len(c.KeySpecs) {
		return c.KeySpecs[i].Flags
	}
	return 0
}

// spans mirrors the getkeys_proc p. The server's generic extractors report
// no flags; the key spec flags stand in for them.
func (p proc) spans(c *Command, args []any, sp *[maxSpans]span) int {
	argc := len(args)
	switch p {
	case procSet:
		flags := KeyOW | KeyUpdate
		for i := 3; i < argc; i++ {
			if keywordIs(args[i], "get") {
				flags = KeyRW | KeyAccess | KeyUpdate
				break
			}
		}
		sp[0] = span{first: 1, last: 1, step: 1, flags: flags}
		return 1

	case procBitfield:
		readonly := true
		for i := 2; i < argc; i++ {
			rem := argc - i - 1
			switch {
			case keywordIs(args[i], "get") && rem >= 2:
				i += 2
				continue
			case (keywordIs(args[i], "set") || keywordIs(args[i], "incrby")) && rem >= 3:
				readonly = false
			case keywordIs(args[i], "overflow") && rem >= 1:
				i++
				continue
			default:
				readonly = false // syntax error: assume a write, as the server does
			}
			break
		}
		flags := KeyRW | KeyAccess | KeyUpdate
		if readonly {
			flags = KeyRO | KeyAccess
		}
		sp[0] = span{first: 1, last: 1, step: 1, flags: flags}
		return 1

	case procSortRO:
		sp[0] = span{first: 1, last: 1, step: 1, flags: KeyRO | KeyAccess}
		return 1

	case procSort:
		sp[0] = span{first: 1, last: 1, step: 1, flags: KeyRO | KeyAccess}
		store := 0
		for i := 2; i < argc; i++ {
			switch {
			case keywordIs(args[i], "limit"):
				i += 2
			case keywordIs(args[i], "store") && i+1 < argc:
				store = i + 1 // the last STORE wins, as in SORT itself
			case keywordIs(args[i], "get"), keywordIs(args[i], "by"):
				i++
			}
		}
		if store == 0 {
			return 1
		}
		sp[1] = span{first: store, last: store, step: 1, flags: KeyOW | KeyUpdate}
		return 2

	case procMigrate:
		first, num := 3, 1
		if argc > 6 {
		scan:
			for i := 6; i < argc; i++ {
				switch {
				case keywordIs(args[i], "keys"):
					if argLen(args[3]) > 0 {
						num = 0 // a key and KEYS: a syntax error the command reports
					} else {
						first, num = i+1, argc-i-1
					}
					break scan
				case keywordIs(args[i], "auth"):
					i++
				case keywordIs(args[i], "auth2"):
					i += 2
				}
			}
		}
		if num == 0 {
			return 0
		}
		sp[0] = span{first: first, last: first + num - 1, step: 1, flags: KeyRW | KeyAccess | KeyDelete}
		return 1

	case procGeoradius:
		sp[0] = span{first: 1, last: 1, step: 1, flags: c.specFlags(0)}
		stored := -1
		for i := 5; i < argc; i++ {
			if (keywordIs(args[i], "store") || keywordIs(args[i], "storedist")) && i+1 < argc {
				stored = i + 1
				i++
			}
		}
		if stored < 0 {
			return 1
		}
		sp[1] = span{first: stored, last: stored, step: 1, flags: c.specFlags(1)}
		return 2

	case procXread:
		streams := -1
	options:
		for i := 1; i < argc; i++ {
			switch {
			case keywordIs(args[i], "block"), keywordIs(args[i], "count"):
				i++
			case keywordIs(args[i], "group"):
				i += 2
			case keywordIs(args[i], "noack"):
			case keywordIs(args[i], "streams"):
				streams = i
				break options
			default:
				break options // syntax error
			}
		}
		if streams < 0 {
			return 0
		}
		num := argc - streams - 1
		if num == 0 || num%2 != 0 {
			return 0
		}
		num /= 2
		sp[0] = span{first: streams + 1, last: streams + num, step: 1, flags: c.specFlags(0)}
		return 1

	case procNum1:
		return genericSpans(c, args, sp, 0, 1, 2, 1)
	case procNum2:
		return genericSpans(c, args, sp, 0, 2, 3, 1)
	case procStore:
		return genericSpans(c, args, sp, 1, 2, 3, 1)
	}
	return 0
}

// genericSpans mirrors genericGetKeys: numkeys (read with C atoi) keys
// from firstKey, then the store key if there is one.
func genericSpans(c *Command, args []any, sp *[maxSpans]span, storeKey, keyCount, firstKey, keyStep int) int {
	argc := len(args)
	if keyCount >= argc {
		return 0
	}
	num := argAtoi(args[keyCount])
	if num < 1 || num > (argc-firstKey)/keyStep {
		return 0
	}
	srcFlags := c.specFlags(0)
	if storeKey > 0 {
		srcFlags = c.specFlags(1)
	}
	sp[0] = span{first: firstKey, last: firstKey + (num-1)*keyStep, step: keyStep, flags: srcFlags}
	if storeKey == 0 {
		return 1
	}
	sp[1] = span{first: storeKey, last: storeKey, step: 1, flags: c.specFlags(0)}
	return 2
}
