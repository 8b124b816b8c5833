package rediscmd

import "strings"

// Flags are the COMMAND INFO command flags.
type Flags uint32

// Command flags, named after their COMMAND INFO spelling.
const (
	FlagWrite           Flags = 1 << iota // write
	FlagReadonly                          // readonly
	FlagDenyOOM                           // denyoom
	FlagModule                            // module
	FlagAdmin                             // admin
	FlagPubSub                            // pubsub
	FlagNoScript                          // noscript
	FlagBlocking                          // blocking
	FlagLoading                           // loading
	FlagStale                             // stale
	FlagSkipMonitor                       // skip_monitor
	FlagSkipSlowlog                       // skip_slowlog
	FlagAsking                            // asking
	FlagFast                              // fast
	FlagNoAuth                            // no_auth
	FlagMayReplicate                      // may_replicate
	FlagNoMandatoryKeys                   // no_mandatory_keys
	FlagNoMulti                           // no_multi
	FlagMovableKeys                       // movablekeys
	FlagAllowBusy                         // allow_busy
	FlagNoAsyncLoading                    // no_async_loading
)

var flagNames = [...]string{
	"write", "readonly", "denyoom", "module", "admin", "pubsub", "noscript",
	"blocking", "loading", "stale", "skip_monitor", "skip_slowlog", "asking",
	"fast", "no_auth", "may_replicate", "no_mandatory_keys", "no_multi",
	"movablekeys", "allow_busy", "no_async_loading",
}

// String lists the flags in COMMAND INFO spelling, separated by spaces.
func (f Flags) String() string { return bitNames(uint64(f), flagNames[:], " ") }

// ACLCategories are the ACL categories of a command (@read, @write...).
type ACLCategories uint32

// ACL categories, named after their ACL spelling without the '@'.
const (
	CatKeyspace    ACLCategories = 1 << iota // @keyspace
	CatRead                                  // @read
	CatWrite                                 // @write
	CatSet                                   // @set
	CatSortedSet                             // @sortedset
	CatList                                  // @list
	CatHash                                  // @hash
	CatString                                // @string
	CatBitmap                                // @bitmap
	CatHyperLogLog                           // @hyperloglog
	CatGeo                                   // @geo
	CatStream                                // @stream
	CatPubSub                                // @pubsub
	CatAdmin                                 // @admin
	CatFast                                  // @fast
	CatSlow                                  // @slow
	CatBlocking                              // @blocking
	CatDangerous                             // @dangerous
	CatConnection                            // @connection
	CatTransaction                           // @transaction
	CatScripting                             // @scripting
)

var aclNames = [...]string{
	"@keyspace", "@read", "@write", "@set", "@sortedset", "@list", "@hash",
	"@string", "@bitmap", "@hyperloglog", "@geo", "@stream", "@pubsub",
	"@admin", "@fast", "@slow", "@blocking", "@dangerous", "@connection",
	"@transaction", "@scripting",
}

// String lists the categories with their '@', separated by spaces.
func (c ACLCategories) String() string { return bitNames(uint64(c), aclNames[:], " ") }

// KeyFlags are the key spec flags of one key: how the command uses it.
// Exactly one of KeyRO, KeyRW, KeyOW and KeyRM is set for a real key; the
// others refine it.
type KeyFlags uint16

// Key flags, named after their COMMAND INFO spelling.
const (
	KeyRO            KeyFlags = 1 << iota // RO: read, not modified
	KeyRW                                 // RW: read and modified
	KeyOW                                 // OW: overwritten without being read
	KeyRM                                 // RM: deleted
	KeyAccess                             // access: user data is returned, copied or used
	KeyUpdate                             // update: the value is updated or overwritten
	KeyInsert                             // insert: data is only added
	KeyDelete                             // delete: data is deleted
	KeyNotKey                             // not_key: not a key (a shard channel), but routed like one
	KeyIncomplete                         // incomplete: the spec may miss keys (a dedicated extractor is used)
	KeyVariableFlags                      // variable_flags: the flags depend on the arguments (SET GET, BITFIELD)
)

var keyFlagNames = [...]string{
	"RO", "RW", "OW", "RM", "access", "update", "insert", "delete",
	"not_key", "incomplete", "variable_flags",
}

// String lists the flags in COMMAND INFO spelling, separated by spaces
// ("RW access update").
func (f KeyFlags) String() string { return bitNames(uint64(f), keyFlagNames[:], " ") }

// Writes reports whether the key may be modified (RW, OW or RM).
func (f KeyFlags) Writes() bool { return f&(KeyRW|KeyOW|KeyRM) != 0 }

// Reads reports whether the key's current value is read (RO or RW).
func (f KeyFlags) Reads() bool { return f&(KeyRO|KeyRW) != 0 }

func bitNames(v uint64, names []string, sep string) string {
	var b strings.Builder
	for i, n := range names {
		if v&(1<<i) == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(sep)
		}
		b.WriteString(n)
	}
	return b.String()
}
