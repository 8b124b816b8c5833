package rdb

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// Byte fixtures for encodings and opcodes Redis 7 no longer writes (or
// writes only in configurations a test server does not have). Each is built
// from the format description with the reasoning in comments.

// want describes one expected record; empty fields are not checked.
type want struct {
	key      string
	db       int
	typ      Type
	enc      string
	elements int64
	expireAt int64
	idle     int64 // checked when != 0
	freq     int   // checked when != 0
	module   string
	fieldTTL int64
	str      string   // string value
	members  []string // elements in file order (list/set/hash fields/zset members)
	values   []string // hash values
	scores   []float64
	fields   []string // Record.Fields
	watched  string   // value of the watched field __ns__
	json     []string
}

func checkRecord(t *testing.T, r *Record, w want) {
	t.Helper()
	if string(r.Key) != w.key || r.DB != w.db || (w.typ != "" && r.Type != w.typ) || (w.enc != "" && r.Encoding != w.enc) {
		t.Errorf("record %q db %d %s/%s, want %q db %d %s/%s", r.Key, r.DB, r.Type, r.Encoding, w.key, w.db, w.typ, w.enc)
	}
	if r.Elements != w.elements {
		t.Errorf("%q: elements %d, want %d", w.key, r.Elements, w.elements)
	}
	if r.ExpireAt != w.expireAt {
		t.Errorf("%q: expireAt %d, want %d", w.key, r.ExpireAt, w.expireAt)
	}
	if w.idle != 0 && r.Idle != w.idle {
		t.Errorf("%q: idle %d, want %d", w.key, r.Idle, w.idle)
	}
	if w.freq != 0 && r.Freq != w.freq {
		t.Errorf("%q: freq %d, want %d", w.key, r.Freq, w.freq)
	}
	if r.Module != w.module || r.FieldTTLs != w.fieldTTL {
		t.Errorf("%q: module %q fieldTTLs %d, want %q %d", w.key, r.Module, r.FieldTTLs, w.module, w.fieldTTL)
	}
	if r.MemoryEstimate <= 0 {
		t.Errorf("%q: memory estimate %d", w.key, r.MemoryEstimate)
	}
	if w.str != "" && (r.Value == nil || string(r.Value.String) != w.str) {
		t.Errorf("%q: value %v, want %q", w.key, r.Value, w.str)
	}
	if w.members != nil {
		if r.Value == nil {
			t.Fatalf("%q: no value collected", w.key)
		}
		var got, vals []string
		var scores []float64
		for _, e := range r.Value.Elems {
			got = append(got, string(e.Member))
			if e.Value != nil {
				vals = append(vals, string(e.Value))
			}
			scores = append(scores, e.Score)
		}
		if !slices.Equal(got, w.members) {
			t.Errorf("%q: members %q, want %q", w.key, got, w.members)
		}
		if w.values != nil && !slices.Equal(vals, w.values) {
			t.Errorf("%q: values %q, want %q", w.key, vals, w.values)
		}
		if w.scores != nil && !slices.Equal(scores, w.scores) {
			t.Errorf("%q: scores %v, want %v", w.key, scores, w.scores)
		}
	}
	if w.fields != nil {
		var got []string
		for _, f := range r.Fields {
			got = append(got, string(f))
		}
		if !slices.Equal(got, w.fields) {
			t.Errorf("%q: fields %q, want %q", w.key, got, w.fields)
		}
	}
	if w.watched != "" && (len(r.Watched) != 1 || string(r.Watched[0].Value) != w.watched) {
		t.Errorf("%q: watched %v, want __ns__=%q", w.key, r.Watched, w.watched)
	}
	if w.json != nil && !slices.Equal(r.JSONKeys, w.json) {
		t.Errorf("%q: json keys %q, want %q", w.key, r.JSONKeys, w.json)
	}
}

var fixtureOpts = Options{ValueLimit: 1 << 20, FieldSample: 4, WatchFields: []string{"__ns__"}, JSONKeys: 8}

func moduleID(name string, encver uint64) uint64 {
	var id uint64
	for i := 0; i < 9; i++ {
		id = id<<6 | uint64(strings.IndexByte(moduleNameAlphab, name[i]))
	}
	return id<<10 | encver
}

type fixture struct {
	name    string
	build   func() []byte
	want    []want
	errIs   error  // expected error cause, nil for a clean EOF
	errText string // substring of the error
	check   func(t *testing.T, m *Meta)
}

func fixtures() []fixture {
	long := strings.Repeat("0123456789", 10) // 100 bytes: too long for a listpack int
	big := strings.Repeat("v", 300)          // zipmap length needs the 254 + uint32 form
	streamID := func(ms, seq uint64) string {
		var b [16]byte
		for i := 0; i < 8; i++ {
			b[i] = byte(ms >> (56 - 8*i))
			b[8+i] = byte(seq >> (56 - 8*i))
		}
		return string(b[:])
	}
	return []fixture{
		{
			// RDB v1 (Redis 1.x-2.0): no checksum, EXPIRETIME in seconds
			// (int32 LE), plain list / set / zset with text scores / hash.
			name: "v1-plain",
			build: func() []byte {
				w := newRDB(1)
				w.selectDB(0)
				w.byte(opExpireTime)
				w.u32le(1700000000)
				w.key(tString, "s")
				w.str("hello")
				w.key(tList, "l")
				w.length(3)
				w.str("a")
				w.intStr(-5) // RDB_ENC_INT8
				w.str(long)
				w.key(tSet, "set")
				w.length(2)
				w.str("x")
				w.intStr(300) // RDB_ENC_INT16
				// RDB_TYPE_ZSET: each score is a length byte and ASCII,
				// with 253/254/255 meaning nan/+inf/-inf.
				w.key(tZSet, "z")
				w.length(3)
				w.str("m1")
				w.byte(3)
				w.raw([]byte("1.5"))
				w.str("m2")
				w.byte(254)
				w.str("m3")
				w.byte(255)
				w.key(tHash, "h")
				w.length(2)
				w.str("f1")
				w.str("v1")
				w.str("__ns__")
				w.str("order")
				w.selectDB(3)
				w.key(tString, "j")
				w.str(`{"a":1,"b":[2,{"c":3}],"d":"e"}`)
				return w.finish(false)
			},
			want: []want{
				{key: "s", typ: TypeString, enc: EncEmbstr, elements: 5, expireAt: 1700000000000, str: "hello"},
				{key: "l", typ: TypeList, enc: EncLinkedlist, elements: 3, members: []string{"a", "-5", long}},
				{key: "set", typ: TypeSet, enc: EncHashtable, elements: 2, members: []string{"x", "300"}},
				{key: "z", typ: TypeZSet, enc: EncSkiplist, elements: 3, members: []string{"m1", "m2", "m3"}, scores: []float64{1.5, math.Inf(1), math.Inf(-1)}},
				{key: "h", typ: TypeHash, enc: EncHashtable, elements: 2, members: []string{"f1", "__ns__"}, values: []string{"v1", "order"}, fields: []string{"f1", "__ns__"}, watched: "order"},
				{key: "j", db: 3, typ: TypeString, enc: EncEmbstr, elements: 31, json: []string{"a", "b", "d"}},
			},
			check: func(t *testing.T, m *Meta) {
				if m.Version != 1 || !m.Complete || m.Checksum != 0 {
					t.Errorf("meta %+v", m)
				}
			},
		},
		{
			// RDB v3 (Redis 2.4/2.6): EXPIRETIME_MS, zipmap hashes, ziplist
			// lists/zsets/hashes, intsets. Still no checksum (v5 added it).
			name: "v3-compact",
			build: func() []byte {
				w := newRDB(3)
				w.selectDB(0)
				w.expireMS(1700000000123)
				// zipmap: zmlen, then <len>field<len><free>value<free bytes>.
				w.key(tHashZipmap, "zm")
				w.bytesStr(zmBuild(2, "a", "1", "__ns__", "promo", "long", big))
				w.key(tSetIntset, "is")
				w.bytesStr(intsetBuild(2, -3, 1, 300))
				w.key(tListZiplist, "zl")
				w.bytesStr(zlBuild("a", int64(5), int64(1000), long, int64(-1<<40)))
				// ziplist zset: member, score pairs; scores are strings or
				// integers.
				w.key(tZSetZiplist, "zz")
				w.bytesStr(zlBuild("m", "1.5", "n", int64(2)))
				w.key(tHashZiplist, "zh")
				w.bytesStr(zlBuild("f", "v", "__ns__", int64(7)))
				return w.finish(false)
			},
			want: []want{
				{key: "zm", typ: TypeHash, enc: EncZipmap, elements: 3, expireAt: 1700000000123, members: []string{"a", "__ns__", "long"}, values: []string{"1", "promo", big}, fields: []string{"a", "__ns__", "long"}, watched: "promo"},
				{key: "is", typ: TypeSet, enc: EncIntset, elements: 3, members: []string{"-3", "1", "300"}},
				{key: "zl", typ: TypeList, enc: EncZiplist, elements: 5, members: []string{"a", "5", "1000", long, "-1099511627776"}},
				{key: "zz", typ: TypeZSet, enc: EncZiplist, elements: 2, members: []string{"m", "n"}, scores: []float64{1.5, 2}},
				{key: "zh", typ: TypeHash, enc: EncZiplist, elements: 2, members: []string{"f", "__ns__"}, values: []string{"v", "7"}, watched: "7"},
			},
		},
		{
			// RDB v7 (Redis 3.2): AUX fields, RESIZEDB, quicklists of
			// ziplists; with rdbcompression a ziplist node may be LZF
			// compressed like any string.
			name: "v7-quicklist-lzf",
			build: func() []byte {
				w := newRDB(7)
				w.aux("redis-ver", "3.2.13")
				w.aux("redis-bits", "64")
				w.selectDB(0)
				w.resize(3, 0)
				w.key(tListQuicklist, "ql")
				w.length(2)
				w.bytesStr(zlBuild("a", "b"))
				w.lzfStr(zlBuild(strings.Repeat("abc", 20), int64(1), int64(2)))
				w.key(tString, "lzf")
				w.lzfStr([]byte(strings.Repeat("compress me ", 40)))
				w.key(tString, "int")
				w.intStr(123456)
				return w.finish(true)
			},
			want: []want{
				{key: "ql", typ: TypeList, enc: EncQuicklist, elements: 5, members: []string{"a", "b", strings.Repeat("abc", 20), "1", "2"}},
				{key: "lzf", typ: TypeString, enc: EncRaw, elements: 480, str: strings.Repeat("compress me ", 40)},
				{key: "int", typ: TypeString, enc: EncInt, elements: 6, str: "123456"},
			},
			check: func(t *testing.T, m *Meta) {
				if v, _ := m.AuxValue("redis-ver"); v != "3.2.13" || len(m.Resize) != 1 || m.Resize[0].Keys != 3 || !m.ChecksumVerified {
					t.Errorf("meta %+v", m)
				}
			},
		},
		{
			// RDB v8 (Redis 4.0): LRU idle and LFU freq opcodes, ZSET_2
			// with binary doubles, module aux data and module values (module
			// API v2: opcode-annotated), skipped with their size.
			name: "v8-modules",
			build: func() []byte {
				w := newRDB(8)
				w.byte(opModuleAux)
				w.length(moduleID("ReJSON-RL", 3))
				w.length(modUInt) // when-opcode
				w.length(2)       // REDISMODULE_AUX_AFTER_RDB
				w.length(modSInt)
				w.length(5)
				w.length(modString)
				w.str("aux")
				w.length(modEOF)
				w.selectDB(0)
				w.byte(opIdle)
				w.length(100)
				w.key(tZSet2, "z2")
				w.length(2)
				w.str("a")
				w.f64le(-2.5)
				w.str("b")
				w.f64le(1e100)
				w.byte(opFreq)
				w.byte(5)
				w.key(tModule2, "doc")
				w.length(moduleID("ReJSON-RL", 3))
				w.length(modUInt)
				w.length(42)
				w.length(modFloat)
				w.u32le(math.Float32bits(1.5))
				w.length(modDouble)
				w.f64le(2.5)
				w.length(modString)
				w.str(`{"x":1}`)
				w.length(modEOF)
				return w.finish(true)
			},
			want: []want{
				{key: "z2", typ: TypeZSet, enc: EncSkiplist, elements: 2, idle: 100, members: []string{"a", "b"}, scores: []float64{-2.5, 1e100}},
				{key: "doc", typ: TypeModule, enc: EncRaw, freq: 5, module: "ReJSON-RL"},
			},
			check: func(t *testing.T, m *Meta) {
				if len(m.ModuleAux) != 1 || m.ModuleAux[0].Module != "ReJSON-RL" || m.ModuleAux[0].When != 2 || m.ModuleAux[0].Bytes == 0 {
					t.Errorf("module aux %+v", m.ModuleAux)
				}
			},
		},
		{
			// RDB type 6 (Redis 4.0 release candidates) has no annotations:
			// only the module can parse it, so decoding stops with the
			// module's name and the offset.
			name: "module-pre-ga",
			build: func() []byte {
				w := newRDB(8)
				w.selectDB(0)
				w.key(tString, "before")
				w.str("x")
				w.key(tModulePreGA, "m")
				w.length(moduleID("graphdata", 1))
				w.raw([]byte{1, 2, 3})
				return w.finish(true)
			},
			want:    []want{{key: "before", typ: TypeString, enc: EncEmbstr, elements: 1, str: "x"}},
			errIs:   ErrUnsupported,
			errText: "graphdata",
		},
		{
			// RDB v9 (Redis 5.0): RDB_TYPE_STREAM_LISTPACKS. Node keys are
			// 16-byte big-endian IDs, then the listpack; then length, last
			// ID, and consumer groups with their global PEL (ID, delivery
			// time, delivery count) and consumers (name, seen time, PEL IDs).
			name: "v9-stream",
			build: func() []byte {
				w := newRDB(9)
				w.selectDB(0)
				w.key(tStreamListpacks, "st")
				w.length(1)
				w.str(streamID(1000, 0))
				w.bytesStr(lpBuild(int64(3), int64(0), int64(1), "f", int64(0),
					int64(2), int64(0), int64(0), "v1", int64(4)))
				w.length(3)    // length
				w.length(1000) // last id
				w.length(2)
				w.length(1) // groups
				w.str("g1")
				w.length(1000)
				w.length(1)
				w.length(2) // global PEL
				for i := uint64(0); i < 2; i++ {
					w.raw([]byte(streamID(1000, i)))
					w.u64le(1700000000000)
					w.length(1)
				}
				w.length(1) // consumers
				w.str("c1")
				w.u64le(1700000000000)
				w.length(2)
				w.raw([]byte(streamID(1000, 0)))
				w.raw([]byte(streamID(1000, 1)))
				return w.finish(true)
			},
			want: []want{{key: "st", typ: TypeStream, enc: EncStream, elements: 3}},
		},
		{
			// RDB v10 (Redis 7.0): functions. 7.0-rc1/rc2 wrote opcode 246
			// (name, engine, has-description, description, code); GA
			// writes FUNCTION2 (245) with the library code only.
			name: "v10-functions",
			build: func() []byte {
				w := newRDB(10)
				w.byte(opFunctionPreGA)
				w.str("f")
				w.str("LUA")
				w.length(1)
				w.str("desc")
				w.str("return 1")
				w.byte(opFunction2)
				w.str("#!lua name=mylib\nredis.register_function('f', function() return 1 end)")
				w.selectDB(0)
				w.key(tString, "k")
				w.intStr(7)
				return w.finish(true)
			},
			want: []want{{key: "k", typ: TypeString, enc: EncInt, elements: 1, str: "7"}},
			check: func(t *testing.T, m *Meta) {
				if m.Functions != 2 || m.FunctionBytes == 0 {
					t.Errorf("functions %d bytes %d", m.Functions, m.FunctionBytes)
				}
			},
		},
		{
			// RDB v11 (Redis 7.2 / Valkey 7.2-8): set listpacks, lists saved
			// as a one-node quicklist (listpack encoding on the server),
			// plain quicklist nodes for big elements, stream v3 (consumer
			// active time), and SLOT_INFO (Redis 7.4 cluster; any version
			// may carry it).
			name: "v11-72",
			build: func() []byte {
				w := newRDB(11)
				w.selectDB(0)
				w.byte(opSlotInfo)
				w.length(866)
				w.length(4)
				w.length(1)
				w.key(tSetListpack, "sl")
				w.bytesStr(lpBuild("a", int64(1), "b"))
				w.key(tListQuicklist2, "small")
				w.length(1)
				w.length(2) // packed
				w.bytesStr(lpBuild("x", "y"))
				w.key(tListQuicklist2, "plain")
				w.length(2)
				w.length(1) // plain: one element as a raw string
				w.str(long)
				w.length(2)
				w.bytesStr(lpBuild(int64(9)))
				w.key(tStreamListpacks3, "st3")
				w.length(1)
				w.str(streamID(5, 0))
				w.bytesStr(lpBuild(int64(1), int64(0), int64(1), "f", int64(0), int64(2), int64(0), int64(0), "v", int64(4)))
				w.length(1)
				for range 7 { // last id, first id, max deleted id, entries added
					w.length(5)
				}
				w.length(1)
				w.str("g")
				w.length(5)
				w.length(0)
				w.length(1) // entries read
				w.length(0) // PEL
				w.length(1)
				w.str("consumer")
				w.u64le(1)
				w.u64le(2) // active time (v3)
				w.length(0)
				return w.finish(true)
			},
			want: []want{
				{key: "sl", typ: TypeSet, enc: EncListpack, elements: 3, members: []string{"a", "1", "b"}},
				{key: "small", typ: TypeList, enc: EncListpack, elements: 2, members: []string{"x", "y"}},
				{key: "plain", typ: TypeList, enc: EncQuicklist, elements: 2, members: []string{long, "9"}},
				{key: "st3", typ: TypeStream, enc: EncStream, elements: 1},
			},
			check: func(t *testing.T, m *Meta) {
				if len(m.Slots) != 1 || m.Slots[0].Slot != 866 || m.Slots[0].Keys != 4 {
					t.Errorf("slots %+v", m.Slots)
				}
			},
		},
		{
			// RDB v12 (Redis 7.4): hashes with field TTLs. HASH_METADATA
			// starts with the minimum expiry (uint64 LE) and stores each
			// TTL as expiry-min+1 (0 = none) before the field;
			// HASH_LISTPACK_EX starts with the minimum expiry and stores
			// field, value, expiry (0 = none) triplets. The 7.4 release
			// candidates' forms (22, 23) have no minimum and absolute TTLs.
			name: "v12-hfe",
			build: func() []byte {
				w := newRDB(12)
				w.selectDB(0)
				w.key(tHashMetadata, "hm")
				w.u64le(1700000000000)
				w.length(2)
				w.length(0)
				w.str("plain")
				w.str("v")
				w.length(501) // expires at min+500
				w.str("ttl")
				w.str("w")
				w.key(tHashListpackEx, "hx")
				w.u64le(1700000000000)
				w.bytesStr(lpBuild("a", "1", int64(0), "__ns__", "promo", int64(1700000000000)))
				w.key(tHashMetadataPreGA, "hm0")
				w.length(1)
				w.length(1700000000999)
				w.str("f")
				w.str("v")
				w.key(tHashListpackExPreGA, "hx0")
				w.bytesStr(lpBuild("f", "v", int64(1700000000999)))
				return w.finish(true)
			},
			want: []want{
				{key: "hm", typ: TypeHash, enc: EncHashtable, elements: 2, fieldTTL: 1, members: []string{"plain", "ttl"}, values: []string{"v", "w"}},
				{key: "hx", typ: TypeHash, enc: EncListpackEx, elements: 2, fieldTTL: 1, members: []string{"a", "__ns__"}, values: []string{"1", "promo"}, watched: "promo"},
				{key: "hm0", typ: TypeHash, enc: EncHashtable, elements: 1, fieldTTL: 1},
				{key: "hx0", typ: TypeHash, enc: EncListpackEx, elements: 1, fieldTTL: 1},
			},
		},
		{
			// A hashtable hash whose watched field has a long value and
			// whose other field has a long name: both are kept, cut to
			// 1 KiB, so a guard check still sees __ns__.
			name: "long-hash-fields",
			build: func() []byte {
				w := newRDB(10)
				w.key(tHash, "h")
				w.length(2)
				w.str("__ns__")
				w.str(strings.Repeat("n", 3000))
				w.str(strings.Repeat("f", 2000))
				w.str("v")
				return w.finish(true)
			},
			want: []want{{key: "h", typ: TypeHash, enc: EncHashtable, elements: 2, fields: []string{"__ns__", strings.Repeat("f", 1024)}, watched: strings.Repeat("n", 1024)}},
		},
		{
			name: "unknown-type",
			build: func() []byte {
				w := newRDB(12)
				w.selectDB(0)
				w.key(tString, "ok")
				w.str("1x")
				w.key(26, "next") // RDB_TYPE_STREAM_LISTPACKS_4 (Redis 8.2)
				return w.finish(true)
			},
			want:    []want{{key: "ok", typ: TypeString, enc: EncEmbstr, elements: 2, str: "1x"}},
			errIs:   ErrUnsupported,
			errText: "offset 18: unknown opcode or object type 26",
		},
		{
			name: "bad-checksum",
			build: func() []byte {
				w := newRDB(10)
				w.key(tString, "k")
				w.str("v")
				b := w.finish(true)
				b[len(b)-1] ^= 1
				return b
			},
			want:  []want{{key: "k", typ: TypeString, enc: EncEmbstr, elements: 1, str: "v"}},
			errIs: ErrChecksum,
		},
		{
			// rdbchecksum no writes a zero trailer: nothing to verify.
			name: "zero-checksum",
			build: func() []byte {
				w := newRDB(10)
				w.key(tString, "k")
				w.str("v")
				return w.finish(false)
			},
			want: []want{{key: "k", typ: TypeString, enc: EncEmbstr, elements: 1, str: "v"}},
			check: func(t *testing.T, m *Meta) {
				if !m.Complete || m.ChecksumVerified {
					t.Errorf("meta %+v", m)
				}
			},
		},
		{
			name:    "version-13",
			build:   func() []byte { return newRDB(13).finish(true) },
			errIs:   ErrUnsupported,
			errText: "RDB version 13",
		},
		{
			// Valkey 9.0 (VALKEY080): type 22 is RDB_TYPE_HASH_2, a hash
			// whose fields each carry an expiry in milliseconds after
			// their value (-1 = none); Redis 7.4 uses 22 otherwise.
			name: "valkey-9-hash2",
			build: func() []byte {
				w := &rdbWriter{b: []byte("VALKEY080"), ver: 80}
				w.aux("valkey-ver", "9.0.1")
				w.selectDB(0)
				w.resize(2, 0)
				w.key(tHashMetadataPreGA, "h2")
				w.length(3)
				w.str("F1")
				w.str("V1")
				w.u64le(2715785640000)
				w.str("__ns__")
				w.str("promo")
				w.u64le(math.MaxUint64) // -1: no expiry
				w.str("F3")
				w.str("V3")
				w.u64le(2400425639936)
				w.key(tString, "s")
				w.str("v")
				return w.finish(true)
			},
			want: []want{
				{key: "h2", typ: TypeHash, enc: EncHashtable, elements: 3, fieldTTL: 2, members: []string{"F1", "__ns__", "F3"}, values: []string{"V1", "promo", "V3"}, watched: "promo"},
				{key: "s", typ: TypeString, enc: EncEmbstr, elements: 1, str: "v"},
			},
			check: func(t *testing.T, m *Meta) {
				if !m.Valkey || m.Version != 80 || !m.ChecksumVerified {
					t.Errorf("meta: valkey %v version %d checksum verified %v", m.Valkey, m.Version, m.ChecksumVerified)
				}
			},
		},
		{
			name: "valkey-9-type-24",
			build: func() []byte {
				w := &rdbWriter{b: []byte("VALKEY080"), ver: 80}
				w.key(tHashMetadata, "h")
				return w.finish(true)
			},
			errIs:   ErrUnsupported,
			errText: "object type 24",
		},
		{
			name:    "valkey-9.2",
			build:   func() []byte { return []byte("VALKEY081\xff") },
			errIs:   ErrUnsupported,
			errText: "Valkey RDB format 81",
		},
		{
			// Redis drops lists, sets, sorted sets and hashes without
			// elements when it loads a file (a quicklist whose nodes are
			// all empty too); streams without entries stay.
			name: "empty-collections",
			build: func() []byte {
				w := newRDB(10)
				w.selectDB(0)
				w.key(tSet, "set")
				w.length(0)
				w.key(tHash, "hash")
				w.length(0)
				w.key(tZSet2, "zset")
				w.length(0)
				w.key(tList, "list")
				w.length(0)
				w.key(tSetIntset, "intset")
				w.bytesStr(intsetBuild(2))
				w.key(tHashListpack, "hash-lp")
				w.bytesStr(lpBuild())
				w.key(tZSetListpack, "zset-lp")
				w.bytesStr(lpBuild())
				w.key(tListQuicklist2, "ql-none")
				w.length(0)
				w.key(tListQuicklist2, "ql-empty-node")
				w.length(1)
				w.length(2)
				w.bytesStr(lpBuild())
				w.key(tListZiplist, "ziplist")
				w.bytesStr(zlBuild())
				w.key(tString, "empty-string")
				w.str("")
				w.key(tStreamListpacks, "empty-stream")
				w.length(0) // nodes
				w.length(0) // entries
				w.length(5) // last id
				w.length(0)
				w.length(0) // groups
				w.key(tList, "kept")
				w.length(1)
				w.str("x")
				return w.finish(true)
			},
			want: []want{
				{key: "empty-string", typ: TypeString, enc: EncEmbstr},
				{key: "empty-stream", typ: TypeStream, enc: EncStream},
				{key: "kept", typ: TypeList, enc: EncLinkedlist, elements: 1, members: []string{"x"}},
			},
			check: func(t *testing.T, m *Meta) {
				if m.EmptySkipped != 10 {
					t.Errorf("%d empty collections skipped, want 10", m.EmptySkipped)
				}
			},
		},
		{
			name:  "not-rdb",
			build: func() []byte { return []byte("HELLO WORLD") },
			errIs: ErrCorrupt,
		},
		{
			name: "listpack-count-mismatch",
			build: func() []byte {
				w := newRDB(10)
				lp := lpBuild("a", "b")
				lp[4] = 3 // header claims 3 entries
				w.key(tSetListpack, "s")
				w.bytesStr(lp)
				return w.finish(true)
			},
			errIs:   ErrCorrupt,
			errText: "header says 3 entries",
		},
		{
			name: "bad-quicklist-container",
			build: func() []byte {
				w := newRDB(10)
				w.key(tListQuicklist2, "l")
				w.length(1)
				w.length(7)
				return w.finish(true)
			},
			errIs: ErrCorrupt,
		},
	}
}

func TestFixtures(t *testing.T) {
	for _, f := range fixtures() {
		t.Run(f.name, func(t *testing.T) {
			recs, meta, err := decodeAll(t, f.build(), fixtureOpts)
			if f.errIs == nil && err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if f.errIs != nil && !errors.Is(err, f.errIs) {
				t.Fatalf("error %v, want %v", err, f.errIs)
			}
			if f.errText != "" && (err == nil || !strings.Contains(err.Error(), f.errText)) {
				t.Fatalf("error %v does not mention %q", err, f.errText)
			}
			if len(recs) != len(f.want) {
				t.Fatalf("%d records, want %d", len(recs), len(f.want))
			}
			for i, w := range f.want {
				checkRecord(t, recs[i], w)
			}
			if f.check != nil {
				f.check(t, meta)
			}
			// Without value collection the decoder takes its skipping
			// paths: the summaries must not change.
			for _, opts := range []Options{{}, {FieldSample: 4, WatchFields: []string{"__ns__"}}} {
				other, _, err2 := decodeAll(t, f.build(), opts)
				if (err == nil) != (err2 == nil) || len(other) != len(recs) {
					t.Fatalf("options %+v: %d records, error %v; with values %d, %v", opts, len(other), err2, len(recs), err)
				}
				for i, r := range other {
					a, b := *recs[i], *r
					if opts.FieldSample == 0 {
						a.Fields, a.Watched, a.MoreFields = nil, nil, false
					}
					a.Value, b.Value, a.JSONKeys, b.JSONKeys, a.Form, b.Form = nil, nil, nil, nil, 0, 0
					if fmt.Sprint(a) != fmt.Sprint(b) {
						t.Errorf("options %+v: record %d\n got  %+v\n want %+v", opts, i, b, a)
					}
				}
			}
		})
	}
}

// TestKeepEmpty: with KeepEmpty the empty collections Redis drops on load
// are returned, and none is counted as skipped.
func TestKeepEmpty(t *testing.T) {
	var f fixture
	for _, x := range fixtures() {
		if x.name == "empty-collections" {
			f = x
		}
	}
	recs, meta, err := decodeAll(t, f.build(), Options{KeepEmpty: true})
	if err != nil {
		t.Fatal(err)
	}
	var empty []string
	for _, r := range recs {
		if r.emptyCollection() {
			empty = append(empty, string(r.Key))
		}
	}
	if len(recs) != 13 || len(empty) != 10 || meta.EmptySkipped != 0 {
		t.Errorf("%d records, %d empty collections %q, %d counted as skipped; want 13, 10, 0", len(recs), len(empty), empty, meta.EmptySkipped)
	}
}
