package rdb

import (
	"slices"
	"strconv"
	"time"

	"github.com/keyguard/keyguard/internal/valueform"
)

// Type is a key's data type as TYPE reports it ("module" for module
// values, whose type name is in Record.Module).
type Type string

// Types a Record can have.
const (
	TypeString Type = "string"
	TypeList   Type = "list"
	TypeSet    Type = "set"
	TypeZSet   Type = "zset"
	TypeHash   Type = "hash"
	TypeStream Type = "stream"
	TypeModule Type = "module"
)

// Encodings as OBJECT ENCODING names them on the server that wrote the
// file (older servers' names for encodings Redis 7 no longer has).
const (
	EncInt        = "int"
	EncEmbstr     = "embstr"
	EncRaw        = "raw"
	EncListpack   = "listpack"
	EncListpackEx = "listpackex" // Redis 7.4 hash with field TTLs
	EncQuicklist  = "quicklist"
	EncIntset     = "intset"
	EncHashtable  = "hashtable"
	EncSkiplist   = "skiplist"
	EncZiplist    = "ziplist"
	EncZipmap     = "zipmap"
	EncLinkedlist = "linkedlist"
	EncStream     = "stream"
)

// Record is one key as decoded from the file. The Record returned by
// Decoder.Next, and every slice in it, is reused by the next call to Next:
// copy what you keep (Clone does).
type Record struct {
	// Offset is the byte offset of the record's first byte (its expiry,
	// idle or freq opcode, or its type byte).
	Offset int64
	DB     int
	// Key holds the key's bytes. Keys longer than Options.MaxBlobBytes are
	// cut to that length; KeyLen is always the full length.
	Key    []byte
	KeyLen int64

	Type     Type
	Encoding string // OBJECT ENCODING on the writing server, see the Enc constants
	RDBType  byte   // the RDB object type byte (0-25)
	Module   string // module type name (9 chars) when Type is TypeModule

	// Elements is the value's length as Redis reports it: STRLEN for
	// strings, LLEN, SCARD, ZCARD, HLEN or XLEN for the others, 0 for
	// module values.
	Elements int64
	// ValueBytes is the size of the serialized value in the file (after the
	// key), the "RDB size" of the key.
	ValueBytes int64
	// ExpireAt is the key's expiry in Unix milliseconds, 0 when it has none.
	ExpireAt int64
	// Idle is the LRU idle time in seconds, -1 when the file has none
	// (only written under an LRU maxmemory-policy).
	Idle int64
	// Freq is the LFU counter 0-255, -1 when the file has none (only
	// written under an LFU maxmemory-policy).
	Freq int
	// MemoryEstimate approximates MEMORY USAGE key SAMPLES 0 on Redis 7
	// (see the memory model in memory.go).
	MemoryEstimate int64
	// FieldTTLs counts hash fields with their own expiry (Redis 7.4).
	FieldTTLs int64
	// FieldsExpired counts hash fields whose expiry had passed when the
	// file was written (its ctime): they are left out of Elements,
	// FieldTTLs, MemoryEstimate, Fields and Value, as Redis leaves them
	// out on load (Options.KeepExpiredFields keeps them).
	FieldsExpired int64
	// Partial is set when an encoded value was larger than
	// Options.MaxBlobBytes: it was counted from its header only, and
	// Elements is 0 if the header did not know the count.
	Partial bool

	// Fields holds up to Options.FieldSample hash field names in file
	// order; MoreFields is set when the hash has more.
	Fields     [][]byte
	MoreFields bool
	// Watched holds the values of Options.WatchFields present in the hash.
	Watched []Field
	// JSONKeys holds up to Options.JSONKeys top-level keys of a string
	// value that is a JSON object.
	JSONKeys []string
	// JSON is, under Options.JSONRaw, a short string value whose keys
	// JSONKeys would hold (jsonkeys.Object), valid until the
	// next call of Next; nil otherwise.
	JSON []byte
	// Form is what a string value holds (valueform.Of of its head), when
	// Options.JSONKeys looked at it; Unknown otherwise.
	Form valueform.Form
	// Value is the decoded value when Options.ValueLimit allows it.
	Value *Value
}

// Field is a hash field and its value (cut to 1 KiB).
type Field struct {
	Name  string
	Value []byte
}

// Value is a decoded value (Options.ValueLimit). Strings use String; the
// other types list their elements in file order in Elems.
type Value struct {
	String []byte
	Elems  []Elem
}

// Elem is one element of an aggregate value: a list item or set member
// (Member), a hash field (Member, Value, ExpireAt for a field TTL) or a
// sorted set member (Member, Score).
type Elem struct {
	Member   []byte
	Value    []byte
	Score    float64
	ExpireAt int64
}

// emptyCollection reports a list, set, sorted set or hash without
// elements, which Redis drops when it loads the file (streams without
// entries are kept).
func (r *Record) emptyCollection() bool {
	if r.Elements != 0 || r.Partial {
		return false
	}
	switch r.Type {
	case TypeList, TypeSet, TypeZSet, TypeHash:
		return true
	}
	return false
}

// Clone returns a deep copy of r that later calls to Next do not touch.
func (r *Record) Clone() *Record {
	c := *r
	c.Key = slices.Clone(r.Key)
	if r.Fields != nil {
		c.Fields = make([][]byte, len(r.Fields))
		for i, f := range r.Fields {
			c.Fields[i] = slices.Clone(f)
		}
	}
	if r.Watched != nil {
		c.Watched = make([]Field, len(r.Watched))
		for i, w := range r.Watched {
			c.Watched[i] = Field{Name: w.Name, Value: slices.Clone(w.Value)}
		}
	}
	c.JSONKeys = slices.Clone(r.JSONKeys)
	c.JSON = slices.Clone(r.JSON)
	if r.Value != nil {
		v := &Value{String: slices.Clone(r.Value.String)}
		if r.Value.Elems != nil {
			v.Elems = make([]Elem, len(r.Value.Elems))
			for i, e := range r.Value.Elems {
				v.Elems[i] = Elem{Member: slices.Clone(e.Member), Value: slices.Clone(e.Value), Score: e.Score, ExpireAt: e.ExpireAt}
			}
		}
		c.Value = v
	}
	return &c
}

// Meta is what the file says besides its keys. It fills in as the decoder
// advances: aux fields usually precede the first key, the checksum is known
// once Next has returned io.EOF.
type Meta struct {
	Version int // RDB format version (1-12, or 80 for Valkey 9.0)
	// Valkey is set for a file in Valkey's own format (header VALKEY080),
	// whose type 22 is a hash with field expiry.
	Valkey bool
	// Aux lists AUX fields in file order (redis-ver, redis-bits, ctime,
	// used-mem, repl-*, aof-base, ...). At most 1024 are kept, values cut
	// to 4 KiB.
	Aux []AuxField
	// Resize lists RESIZEDB hints, one per database section.
	Resize []ResizeHint
	// Slots lists SLOT_INFO entries (Redis 7.4 cluster nodes); at most
	// 16384 per database are kept.
	Slots []SlotInfo
	// Functions counts function libraries (FUNCTION2 and the 7.0 release
	// candidates' format); FunctionBytes is their serialized size.
	Functions     int
	FunctionBytes int64
	// ModuleAux lists module auxiliary data blocks, skipped.
	ModuleAux []ModuleAux
	// Checksum is the CRC64 trailer (0: the writer had rdbchecksum off,
	// or the version predates checksums). ChecksumVerified is set when it
	// was nonzero and matched.
	Checksum         uint64
	ChecksumVerified bool
	// Complete is set once the EOF opcode and trailer were read.
	Complete bool
	// EmptySkipped counts lists, sets, sorted sets and hashes without
	// elements that Next skipped, as Redis does on load (Options.KeepEmpty).
	EmptySkipped int64
	// HashesExpired counts hashes all of whose fields had expired when
	// the file was written: Next skipped them, as Redis drops them on
	// load. FieldsExpired counts the expired fields left out, theirs and
	// those of the hashes returned.
	HashesExpired, FieldsExpired int64
}

// AuxField is one AUX key/value pair.
type AuxField struct{ Key, Value string }

// ResizeHint is a RESIZEDB opcode: the writer's key and expire counts for DB.
type ResizeHint struct {
	DB            int
	Keys, Expires uint64
}

// SlotInfo is a SLOT_INFO opcode: key and expire counts of one cluster slot.
type SlotInfo struct {
	DB                  int
	Slot, Keys, Expires uint64
}

// ModuleAux is a module's auxiliary data block (MODULE_AUX opcode).
type ModuleAux struct {
	Module string // 9-char module type name
	When   uint64 // REDISMODULE_AUX_BEFORE_RDB (1) or AFTER_RDB (2)
	Offset int64
	Bytes  int64
}

// AuxValue returns the value of the first AUX field named key.
func (m *Meta) AuxValue(key string) (string, bool) {
	for _, a := range m.Aux {
		if a.Key == key {
			return a.Value, true
		}
	}
	return "", false
}

// Created is when the snapshot was taken (the ctime aux field, Redis 4.0+).
// Remaining TTLs are best computed from it (rec.ExpireAt - created), not
// from the time the file is read.
func (m *Meta) Created() (time.Time, bool) {
	v, ok := m.AuxValue("ctime")
	if !ok {
		return time.Time{}, false
	}
	sec, err := strconv.ParseInt(v, 10, 64)
	if err != nil || sec <= 0 {
		return time.Time{}, false
	}
	return time.Unix(sec, 0), true
}
