package rdb

import (
	"encoding/binary"
	"errors"
	"io"
	"math"
	"strconv"

	"github.com/keyguard/keyguard/internal/jsonkeys"
	"github.com/keyguard/keyguard/internal/valueform"
)

// RDB opcodes (src/rdb.h).
const (
	opSlotInfo       = 244
	opFunction2      = 245
	opFunctionPreGA  = 246
	opModuleAux      = 247
	opIdle           = 248
	opFreq           = 249
	opAux            = 250
	opResizeDB       = 251
	opExpireTimeMS   = 252
	opExpireTime     = 253
	opSelectDB       = 254
	opEOF            = 255
	maxVersion       = 12
	valkeyVersion    = 80 // VALKEY080: Valkey 9.0
	maxAux           = 1024
	maxAuxValue      = 4 << 10
	maxSlots         = 16384
	maxModuleAux     = 1024
	maxFieldName     = 1 << 10 // field names sampled / compared, longer ones are cut
	maxWatchedValue  = 1 << 10
	jsonPrefixBytes  = 64 << 10
	jsonSniffBytes   = 16 // of an LZF string, inflated to see whether it is JSON
	blobPrefixBytes  = 64
	defaultMaxBlob   = 32 << 20
	lzfMaxRatio      = 96 // LZF inflates at most ~88x; more means a bogus header
	moduleNameAlphab = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
)

// RDB object types (src/rdb.h).
const (
	tString              = 0
	tList                = 1
	tSet                 = 2
	tZSet                = 3
	tHash                = 4
	tZSet2               = 5
	tModulePreGA         = 6
	tModule2             = 7
	tHashZipmap          = 9
	tListZiplist         = 10
	tSetIntset           = 11
	tZSetZiplist         = 12
	tHashZiplist         = 13
	tListQuicklist       = 14
	tStreamListpacks     = 15
	tHashListpack        = 16
	tZSetListpack        = 17
	tListQuicklist2      = 18
	tStreamListpacks2    = 19
	tSetListpack         = 20
	tStreamListpacks3    = 21
	tHashMetadataPreGA   = 22
	tHashListpackExPreGA = 23
	tHashMetadata        = 24
	tHashListpackEx      = 25
)

// Module value opcodes (RDB_MODULE_OPCODE_*).
const (
	modEOF    = 0
	modSInt   = 1
	modUInt   = 2
	modFloat  = 3
	modDouble = 4
	modString = 5
)

// Options selects what the decoder keeps beyond the per-key summary. The
// zero value keeps nothing extra.
type Options struct {
	// FieldSample is how many hash field names to collect per hash, in
	// file order (for schema checks). 0 collects none.
	FieldSample int
	// WatchFields names hash fields whose values are captured whenever a
	// hash has them, e.g. "__ns__" for namespace-guarded hashes.
	WatchFields []string
	// JSONKeys is how many top-level keys to collect from string values
	// holding a JSON object (the first 64 KiB are looked at). 0 collects
	// none.
	JSONKeys int
	// JSONRaw, when > 0, hands a string value of at most JSONRaw bytes
	// whose keys JSONKeys would read over whole in Record.JSON instead,
	// for the caller to read its keys (jsonkeys.Top with JSONKeys) where
	// it likes: off the decoder's goroutine. Longer values get JSONKeys.
	JSONRaw int
	// ValueLimit, when > 0, returns decoded values in Record.Value as long
	// as their elements add up to at most ValueLimit bytes. Meant for tests
	// and debugging.
	ValueLimit int
	// MaxBlobBytes bounds the memory spent on one encoded value (listpack,
	// ziplist, intset, zipmap node) or key; larger ones are counted from
	// their header (Record.Partial). Default 32 MiB.
	MaxBlobBytes int
	// SkipChecksum turns off CRC64 verification.
	SkipChecksum bool
	// ListCompressDepth is list-compress-depth of the server the memory
	// estimates are for (0, Redis's default: lists are not compressed in
	// memory). Inner quicklist nodes stored LZF-compressed in the file
	// are then sized as the compressed nodes that server keeps.
	ListCompressDepth int
	// KeepEmpty returns lists, sets, sorted sets and hashes without
	// elements. By default they are skipped, as Redis skips them when it
	// loads the file, and counted in Meta.EmptySkipped.
	KeepEmpty bool
	// KeepExpiredFields keeps hash fields whose expiry had passed when the
	// file was written (Record.FieldsExpired).
	KeepExpiredFields bool
	// Look, when set, is called with each key (valid only during the
	// call) before its value is read, and says what to look for in the
	// value: LookNames (sample hash field names, collect JSON keys),
	// LookWatched (capture the watched hash fields), both, or nothing —
	// the value is then only counted and measured, which is faster. A
	// caller that needs names for a few keys only (a sample), or watched
	// fields of some keys only, says which here. Without Look, every
	// value is looked into as the options say.
	Look func(key []byte) Look
	// From and Until cut the file into parts for decoders that read it
	// side by side (see ErrPartEnd). From > 0: the records before the
	// first record boundary at or after offset From are skipped by their
	// lengths (not decoded, not returned, not counted in EmptySkipped);
	// the header, aux fields, databases and resize hints are read as
	// usual, and the checksum covers the whole file. Until > 0: Next
	// returns ErrPartEnd at the first record boundary at or after offset
	// Until.
	From, Until int64
}

// Look says what the decoder looks for in a value (Options.Look).
type Look uint8

// What Options.Look can ask for.
const (
	LookNames   Look = 1 << iota // hash field names (FieldSample) and JSON keys (JSONKeys)
	LookWatched                  // the values of the WatchFields a hash has
	LookAll     = LookNames | LookWatched
)

// Decoder reads an RDB file one key at a time.
type Decoder struct {
	rd   reader
	opts Options
	meta Meta
	err  error // sticky; io.EOF after the end
	db   int
	hdr  bool
	rec  Record
	mark int64 // offset of the element being decoded, for error reports

	skimming bool  // before Options.From: records are skipped
	began    int64 // offset where the records of this part began; -1 not yet
	until    int64 // Options.Until, 0 once passed
	head     bool  // Head: stop at the first key

	// derived from opts, for the record being read (Options.Look)
	needNames   bool // hash field names are sampled or watched
	fieldSample int  // Options.FieldSample, or 0
	jsonKeys    int  // Options.JSONKeys, or 0
	watch       bool // there are Options.WatchFields to look for
	// watchFirst[c] has bit min(len-1, 7) set for every watched name of
	// that length starting with c; watchEmpty: "" is watched.
	watchFirst [256]uint8
	watchEmpty bool
	// checkAll inflates and checks compressed values nobody reads (LZF
	// listpacks only counted, LZF strings that are not JSON); tests set it
	// to compare the fast paths with the general ones byte for byte.
	checkAll bool

	// reused buffers
	key, blob, lz, e1, e2 []byte
	fieldBuf              []byte
	val                   Value
	valBytes              int
	valOver               bool
	lp                    lpIter
	watchBuf              [][]byte          // one per Options.WatchFields entry
	names                 jsonkeys.Interner // JSON key names
	keyTo                 *[]byte           // KeysInto; nil: keys go to key
}

// KeysInto makes the decoder append each key it reads to *buf rather than
// to a buffer of its own: Record.Key then lies in *buf, after what *buf
// held, and stays valid as long as the caller keeps *buf, whose bytes
// the decoder never changes (it only appends). A caller that collects
// keys (a batch of records) so saves a copy of each. The caller may
// truncate or replace *buf between calls of Next; nil gives the decoder
// its own buffer back.
func (d *Decoder) KeysInto(buf *[]byte) { d.keyTo = buf }

// keyDst is where the next key is appended.
func (d *Decoder) keyDst() []byte {
	if d.keyTo == nil {
		return d.key[:0]
	}
	if *d.keyTo == nil {
		*d.keyTo = make([]byte, 0, 64) // never nil, as key
	}
	return *d.keyTo
}

// setKey keeps dst, the buffer keyDst gave with the key appended at base.
func (d *Decoder) setKey(dst []byte, base int) {
	if d.keyTo == nil {
		d.key = dst
	} else {
		*d.keyTo = dst
	}
	d.rec.Key = dst[base:len(dst):len(dst)]
}

// NewDecoder returns a decoder reading r, which it buffers itself.
func NewDecoder(r io.Reader, opts Options) *Decoder {
	if opts.MaxBlobBytes <= 0 {
		opts.MaxBlobBytes = defaultMaxBlob
	}
	d := &Decoder{opts: opts, watchBuf: make([][]byte, len(opts.WatchFields)), began: -1, until: opts.Until}
	d.key = make([]byte, 0, 64) // never nil: an error names even an empty key
	d.skimming = opts.From > 0
	d.rd.init(r, opts.SkipChecksum)
	d.look(LookAll)
	for _, w := range opts.WatchFields {
		if w == "" {
			d.watchEmpty = true
		} else {
			d.watchFirst[w[0]] |= 1 << min(len(w)-1, 7)
		}
	}
	return d
}

// Meta returns what the file declared so far: version, aux fields, resize
// hints, slot info, functions, module aux data, checksum.
func (d *Decoder) Meta() *Meta { return &d.meta }

// Offset is the number of input bytes consumed so far.
func (d *Decoder) Offset() int64 { return d.rd.offset() }

// DB is the database the next key belongs to (the last SELECTDB).
func (d *Decoder) DB() int { return d.db }

// Next decodes the next key. It returns io.EOF after the last key once the
// EOF opcode and checksum were read, and a *FormatError when the input is
// truncated (errors.Is io.ErrUnexpectedEOF), corrupt, or uses a format this
// decoder does not know. Errors are sticky.
func (d *Decoder) Next() (*Record, error) {
	if d.err != nil {
		return nil, d.err
	}
	for {
		rec, err := d.next()
		if err == ErrPartEnd {
			return nil, err // not sticky: the next call goes on
		}
		if err != nil {
			d.err = d.wrap(err)
			return nil, d.err
		}
		if rec.FieldsExpired > 0 && rec.Elements == 0 && !rec.Partial {
			d.meta.HashesExpired++
			continue
		}
		if d.opts.KeepEmpty || !rec.emptyCollection() {
			return rec, nil
		}
		d.meta.EmptySkipped++
	}
}

func (d *Decoder) wrap(err error) error {
	if err == io.EOF {
		return io.EOF
	}
	var fe *FormatError
	if errors.As(err, &fe) {
		return fe
	}
	fe = &FormatError{Offset: d.rd.offset(), Msg: "decoding", Err: err}
	var de *decodeErr
	if errors.As(err, &de) {
		fe.Msg, fe.Err = de.msg, de.cause
		if d.mark >= 0 {
			fe.Offset = d.mark
		}
	} else if errors.Is(err, io.ErrUnexpectedEOF) {
		fe.Msg, fe.Err = "input ends in the middle of a record", io.ErrUnexpectedEOF
	} else {
		fe.Msg = "reading input"
	}
	if d.rec.Key != nil {
		fe.Key = keyForError(d.rec.Key)
	}
	return fe
}

func (d *Decoder) header() error {
	d.mark = 0
	p, err := d.rd.next(9)
	if err != nil {
		return err
	}
	magic, digits := "REDIS", p[5:9]
	if string(p[:6]) == "VALKEY" {
		// Valkey 9 numbers its own formats from 80 and says so in the magic.
		magic, digits = "VALKEY", p[6:9]
	} else if string(p[:5]) != "REDIS" {
		return corruptf("not an RDB file: header %q, want REDIS followed by 4 digits or VALKEY followed by 3", p)
	}
	v := 0
	for _, c := range digits {
		if c < '0' || c > '9' {
			return corruptf("bad RDB version %q", digits)
		}
		v = v*10 + int(c-'0')
	}
	switch {
	case magic == "VALKEY" && v != valkeyVersion:
		return unsupportedf("Valkey RDB format %d (header %q): this decoder reads Valkey's format %d (Valkey 9.0)", v, p, valkeyVersion)
	case magic == "REDIS" && (v < 1 || v > maxVersion):
		return unsupportedf("RDB version %d (header %q)", v, p)
	}
	d.meta.Version, d.meta.Valkey = v, magic == "VALKEY"
	d.hdr = true
	return nil
}

func (d *Decoder) next() (*Record, error) {
	if !d.hdr {
		if err := d.header(); err != nil {
			return nil, err
		}
	}
	rec := &d.rec
	d.resetRecord()
	start := int64(-1)
	expire, idle, freq := int64(0), int64(-1), -1
	for {
		rd := &d.rd
		off := rd.offset()
		if start < 0 && (d.skimming || d.until > 0) { // a record boundary
			if d.skimming && off >= d.opts.From {
				d.skimming, d.began = false, off
			}
			if !d.skimming && d.until > 0 && off >= d.until {
				d.until = 0
				return nil, ErrPartEnd
			}
			if d.head {
				if p, err := rd.peek(1); err == nil && keyOpcode(p[0]) {
					return nil, errHeadEnd
				}
			}
		}
		d.mark = off
		var t byte
		if rd.r < rd.w {
			t = rd.buf[rd.r]
			rd.r++
		} else {
			var err error
			if t, err = rd.byteSlow(); err != nil {
				return nil, err
			}
		}
		switch t {
		case opEOF:
			return nil, d.trailer()
		case opSelectDB:
			n, err := d.readLen()
			if err != nil {
				return nil, err
			}
			if n > math.MaxInt32 {
				return nil, corruptf("SELECTDB %d", n)
			}
			d.db = int(n)
			start = -1
			continue
		case opResizeDB:
			keys, err := d.readLen()
			if err != nil {
				return nil, err
			}
			exp, err := d.readLen()
			if err != nil {
				return nil, err
			}
			if len(d.meta.Resize) < maxAux {
				d.meta.Resize = append(d.meta.Resize, ResizeHint{DB: d.db, Keys: keys, Expires: exp})
			}
			start = -1
			continue
		case opSlotInfo:
			var v [3]uint64
			for i := range v {
				var err error
				if v[i], err = d.readLen(); err != nil {
					return nil, err
				}
			}
			if len(d.meta.Slots) < maxSlots*16 {
				d.meta.Slots = append(d.meta.Slots, SlotInfo{DB: d.db, Slot: v[0], Keys: v[1], Expires: v[2]})
			}
			start = -1
			continue
		case opAux:
			if err := d.readAux(); err != nil {
				return nil, err
			}
			start = -1
			continue
		case opFunction2:
			if _, err := d.skipStr(); err != nil {
				return nil, err
			}
			d.meta.Functions++
			d.meta.FunctionBytes += d.rd.offset() - off
			start = -1
			continue
		case opFunctionPreGA:
			if err := d.skipFunctionPreGA(); err != nil {
				return nil, err
			}
			d.meta.Functions++
			d.meta.FunctionBytes += d.rd.offset() - off
			start = -1
			continue
		case opModuleAux:
			if err := d.readModuleAux(off); err != nil {
				return nil, err
			}
			start = -1
			continue
		case opExpireTime:
			p, err := d.rd.next(4)
			if err != nil {
				return nil, err
			}
			expire = int64(int32(binary.LittleEndian.Uint32(p))) * 1000
			if start < 0 {
				start = off
			}
			continue
		case opExpireTimeMS:
			// Little-endian; before RDB 9 it was host order, and every
			// platform Redis ran on in practice was little-endian.
			if r := rd.r; rd.w-r >= 8 {
				expire = int64(binary.LittleEndian.Uint64(rd.buf[r : r+8]))
				rd.r = r + 8
			} else {
				p, err := rd.nextSlow(8)
				if err != nil {
					return nil, err
				}
				expire = int64(binary.LittleEndian.Uint64(p))
			}
			if start < 0 {
				start = off
			}
			continue
		case opIdle:
			n, err := d.readLen()
			if err != nil {
				return nil, err
			}
			idle = int64(min(n, math.MaxInt64))
			if start < 0 {
				start = off
			}
			continue
		case opFreq:
			b, err := d.rd.byte()
			if err != nil {
				return nil, err
			}
			freq = int(b)
			if start < 0 {
				start = off
			}
			continue
		}
		if !isObjectType(t) || d.meta.Valkey && t > tHashMetadataPreGA {
			// Valkey 9.0 has types up to 22; Redis 7.4's 23-25 are not its.
			return nil, unsupportedf("unknown opcode or object type %d (0x%02x)", t, t)
		}
		if d.skimming {
			if err := d.skipRecord(t); err != nil {
				return nil, err
			}
			d.resetRecord()
			start, expire, idle, freq = -1, 0, -1, -1
			continue
		}
		if start < 0 {
			start = off
		}
		rec.Offset, rec.DB, rec.RDBType = start, d.db, t
		rec.ExpireAt, rec.Idle, rec.Freq = expire, idle, freq
		if r := rd.r; r < rd.w && int(rd.buf[r]) < 0x40 && int(rd.buf[r]) < rd.w-r && int(rd.buf[r]) <= d.opts.MaxBlobBytes {
			// readKey's fast path: a short key in the buffer.
			n := int(rd.buf[r])
			d.mark = rd.base + int64(r)
			dst := d.keyDst()
			base := len(dst)
			d.setKey(append(dst, rd.buf[r+1:r+1+n]...), base)
			rd.r = r + 1 + n
			rec.KeyLen = int64(n)
		} else if err := d.readKey(); err != nil {
			return nil, err
		}
		if d.opts.Look != nil {
			d.look(d.opts.Look(rec.Key))
		}
		vstart := d.rd.offset()
		if err := d.readValue(t); err != nil {
			return nil, err
		}
		rec.ValueBytes = d.rd.offset() - vstart
		rec.MemoryEstimate += keyOverhead(rec.KeyLen)
		if d.opts.ValueLimit > 0 && !d.valOver {
			rec.Value = &d.val
		}
		return rec, nil
	}
}

func isObjectType(t byte) bool { return t <= tModule2 || (t >= tHashZipmap && t <= tHashListpackEx) }

// resetRecord clears what the previous record left. Field by field: a
// whole-struct assignment costs write barriers for every pointer in it.
func (d *Decoder) resetRecord() {
	r := &d.rec
	r.Key, r.KeyLen = nil, 0 // error reports name the key once it is read
	r.Module = ""
	r.Elements, r.ValueBytes, r.MemoryEstimate, r.FieldTTLs, r.FieldsExpired = 0, 0, 0, 0, 0
	r.Partial, r.MoreFields = false, false
	if len(r.Fields) > 0 {
		r.Fields = r.Fields[:0]
	}
	if len(r.Watched) > 0 {
		r.Watched = r.Watched[:0]
	}
	if len(r.JSONKeys) > 0 {
		r.JSONKeys = r.JSONKeys[:0]
	}
	r.JSON, r.Form = nil, valueform.Unknown
	if r.Value != nil {
		r.Value = nil
	}
	d.fieldBuf = d.fieldBuf[:0]
	if d.opts.ValueLimit > 0 {
		d.val.String = d.val.String[:0]
		d.val.Elems = d.val.Elems[:0]
	}
	d.valBytes, d.valOver = 0, false
}

func (d *Decoder) trailer() error {
	d.meta.Complete = false
	if d.meta.Version >= 5 {
		sum := d.rd.checksum()
		d.mark = d.rd.offset()
		p, err := d.rd.next(8)
		if err != nil {
			return err
		}
		d.meta.Checksum = binary.LittleEndian.Uint64(p)
		if d.meta.Checksum != 0 && !d.opts.SkipChecksum {
			if d.meta.Checksum != sum {
				return &FormatError{Offset: d.mark, Msg: "CRC64 trailer " + strconv.FormatUint(d.meta.Checksum, 16) + " != computed " + strconv.FormatUint(sum, 16), Err: ErrChecksum}
			}
			d.meta.ChecksumVerified = true
		}
	}
	d.meta.Complete = true
	return io.EOF
}

// ---- primitives --------------------------------------------------------------

// readLenEnc reads a length; enc reports the 11xxxxxx "special encoding"
// form, in which case n is the encoding type.
func (d *Decoder) readLenEnc() (n uint64, enc bool, err error) {
	rd := &d.rd
	if r := rd.r; r+1 < rd.w {
		switch b := rd.buf[r]; b >> 6 {
		case 0:
			rd.r = r + 1
			return uint64(b), false, nil
		case 1:
			rd.r = r + 2
			return uint64(b&0x3f)<<8 | uint64(rd.buf[r+1]), false, nil
		case 3:
			rd.r = r + 1
			return uint64(b & 0x3f), true, nil
		}
	}
	return d.readLenEncSlow()
}

func (d *Decoder) readLenEncSlow() (n uint64, enc bool, err error) {
	b, err := d.rd.byte()
	if err != nil {
		return 0, false, err
	}
	switch b >> 6 {
	case 0:
		return uint64(b & 0x3f), false, nil
	case 1:
		c, err := d.rd.byte()
		if err != nil {
			return 0, false, err
		}
		return uint64(b&0x3f)<<8 | uint64(c), false, nil
	case 3:
		return uint64(b & 0x3f), true, nil
	}
	switch b {
	case 0x80:
		p, err := d.rd.next(4)
		if err != nil {
			return 0, false, err
		}
		return uint64(binary.BigEndian.Uint32(p)), false, nil
	case 0x81:
		p, err := d.rd.next(8)
		if err != nil {
			return 0, false, err
		}
		return binary.BigEndian.Uint64(p), false, nil
	}
	return 0, false, corruptf("unknown length encoding 0x%02x", b)
}

func (d *Decoder) readLen() (uint64, error) {
	n, enc, err := d.readLenEnc()
	if err == nil && enc {
		err = corruptf("encoded value where a length was expected")
	}
	return n, err
}

// strHdr describes a serialized string before its body is read.
type strHdr struct {
	kind uint8 // strRaw, strInt, strLZF
	n    int64 // logical length
	clen int64 // compressed length (LZF)
	ival int64 // value (int)
}

const (
	strRaw = iota
	strInt
	strLZF
)

// maxStrLen bounds a string length read from the file; Redis strings stop
// at 512 MiB (proto-max-bulk-len can raise it), listpacks at 4 GiB.
const maxStrLen = 1 << 40

func (d *Decoder) readStrHdr() (strHdr, error) {
	rd := &d.rd
	d.mark = rd.offset()
	if r := rd.r; r+1 < rd.w {
		switch b := rd.buf[r]; b >> 6 {
		case 0:
			rd.r = r + 1
			return strHdr{kind: strRaw, n: int64(b)}, nil
		case 1:
			rd.r = r + 2
			return strHdr{kind: strRaw, n: int64(b&0x3f)<<8 | int64(rd.buf[r+1])}, nil
		}
	}
	n, enc, err := d.readLenEnc()
	if err != nil {
		return strHdr{}, err
	}
	if !enc {
		if n > maxStrLen {
			return strHdr{}, corruptf("string length %d", n)
		}
		return strHdr{kind: strRaw, n: int64(n)}, nil
	}
	var v int64
	switch n {
	case 0:
		b, err := d.rd.byte()
		if err != nil {
			return strHdr{}, err
		}
		v = int64(int8(b))
	case 1:
		p, err := d.rd.next(2)
		if err != nil {
			return strHdr{}, err
		}
		v = int64(int16(binary.LittleEndian.Uint16(p)))
	case 2:
		p, err := d.rd.next(4)
		if err != nil {
			return strHdr{}, err
		}
		v = int64(int32(binary.LittleEndian.Uint32(p)))
	case 3:
		clen, err := d.readLen()
		if err != nil {
			return strHdr{}, err
		}
		ulen, err := d.readLen()
		if err != nil {
			return strHdr{}, err
		}
		// Redis only stores LZF when it saves space, and LZF cannot inflate
		// more than ~88x: anything else is a bogus header, caught before
		// buffering either size.
		if clen == 0 || clen > maxStrLen || ulen > maxStrLen || ulen > clen*lzfMaxRatio+64 || clen > ulen+ulen/16+64 {
			return strHdr{}, corruptf("LZF string of %d bytes compressed to %d", ulen, clen)
		}
		return strHdr{kind: strLZF, n: int64(ulen), clen: int64(clen)}, nil
	default:
		return strHdr{}, corruptf("unknown string encoding %d", n)
	}
	return strHdr{kind: strInt, n: int64(intLen(v)), ival: v}, nil
}

func intLen(v int64) int {
	var buf [24]byte
	return len(strconv.AppendInt(buf[:0], v, 10))
}

// skipBody consumes a string body.
func (d *Decoder) skipBody(h strHdr) error {
	switch h.kind {
	case strRaw:
		return d.rd.skip(h.n)
	case strLZF:
		return d.rd.skip(h.clen)
	}
	return nil
}

func (d *Decoder) skipStr() (int64, error) {
	h, err := d.readStrHdr()
	if err != nil {
		return 0, err
	}
	return h.n, d.skipBody(h)
}

// readBody appends up to limit bytes of the string to dst; complete
// reports whether dst got all of it.
func (d *Decoder) readBody(dst []byte, h strHdr, limit int) ([]byte, bool, error) {
	switch h.kind {
	case strInt:
		return strconv.AppendInt(dst, h.ival, 10), true, nil
	case strRaw:
		if h.n <= int64(limit) {
			out, err := d.rd.appendN(dst, h.n)
			return out, true, err
		}
		out, err := d.rd.appendN(dst, int64(limit))
		if err != nil {
			return out, false, err
		}
		return out, false, d.rd.skip(h.n - int64(limit))
	}
	// LZF
	if h.n <= int64(limit) {
		in, lz, err := d.rd.view(h.clen, d.lz)
		d.lz = lz
		if err != nil {
			return dst, false, err
		}
		base := len(dst)
		if cap(dst)-base < int(h.n) {
			nd := make([]byte, base, base+int(h.n))
			copy(nd, dst)
			dst = nd
		}
		out, err := lzfDecompress(in, dst[base:base+int(h.n)], int(h.n))
		if err != nil {
			return dst, false, err
		}
		return dst[:base+len(out)], true, nil
	}
	// A prefix needs no more input than it covers: a literal run or a
	// back reference yields at least one byte per input byte.
	take := min(h.clen, int64(limit))
	in, lz, err := d.rd.view(take, d.lz)
	d.lz = lz
	if err != nil {
		return dst, false, err
	}
	dst = lzfPrefixAppend(dst, in, limit)
	return dst, false, d.rd.skip(h.clen - take)
}

// readStr reads a whole string when it is at most limit bytes long,
// otherwise a prefix of limit bytes.
func (d *Decoder) readStr(dst []byte, limit int) ([]byte, int64, bool, error) {
	h, err := d.readStrHdr()
	if err != nil {
		return dst, 0, false, err
	}
	out, complete, err := d.readBody(dst, h, limit)
	return out, h.n, complete, err
}

// readBlob reads an encoded value (listpack, ziplist, intset, zipmap). A
// blob over MaxBlobBytes yields only its first bytes and complete=false.
func (d *Decoder) readBlob() ([]byte, int64, bool, error) {
	h, err := d.readStrHdr()
	if err != nil {
		return nil, 0, false, err
	}
	return d.readBlobBody(h)
}

func (d *Decoder) readBlobBody(h strHdr) ([]byte, int64, bool, error) {
	mark := d.mark
	if h.kind == strRaw && h.n <= int64(min(len(d.rd.buf), d.opts.MaxBlobBytes)) {
		// Walked before the next read: no need to copy it out of the buffer.
		b, err := d.rd.next(int(h.n))
		return b, h.n, true, err
	}
	limit := d.opts.MaxBlobBytes
	if h.n > int64(limit) {
		limit = blobPrefixBytes
	}
	var err error
	d.blob, _, err = d.readBody(d.blob[:0], h, limit)
	d.mark = mark
	return d.blob, h.n, h.n <= int64(limit), err
}

// blobInBuf is readBlob's fast path: a raw string with a one- or two-byte
// length, entirely in the buffer and within MaxBlobBytes, returned in
// place. !ok: nothing was consumed, call readBlob.
func (d *Decoder) blobInBuf() ([]byte, bool) {
	rd := &d.rd
	r := rd.r
	if rd.w-r < 2 {
		return nil, false
	}
	b := rd.buf[r]
	var n, h int
	switch b >> 6 {
	case 0:
		n, h = int(b), 1
	case 1:
		n, h = int(b&0x3f)<<8|int(rd.buf[r+1]), 2
	default:
		return nil, false
	}
	if n > rd.w-r-h || n > d.opts.MaxBlobBytes {
		return nil, false
	}
	d.mark = rd.base + int64(r)
	rd.r = r + h + n
	return rd.buf[r+h : r+h+n : r+h+n], true
}

// lpCount is what readLPCount found: either the entry count of a listpack
// (counted), or the blob for the general walk, as readBlob returns it.
type lpCount struct {
	clen     int64 // compressed length in the file, 0 when stored raw
	n        int
	counted  bool
	b        []byte
	full     int64
	complete bool
}

// readLPCount reads a listpack value of which only the entry count is
// needed. A raw one is checked entry by entry (lpCountFast) without
// decoding elements. An LZF-compressed one is inflated only as far as its
// header when the header knows the count: its entries are then not
// checked, only the header's size against the string's (the file's CRC64
// covers its bytes).
func (d *Decoder) readLPCount() (lpCount, error) {
	h, err := d.readStrHdr()
	if err != nil {
		return lpCount{}, err
	}
	if h.kind == strLZF && !d.checkAll && h.n > lpHeaderSize && h.n <= int64(d.opts.MaxBlobBytes) && h.clen <= int64(len(d.rd.buf)) {
		in, err := d.rd.peek(int(h.clen))
		if err != nil {
			return lpCount{}, err
		}
		hdr := lzfPrefixAppend(d.blob[:0], in, lpHeaderSize)
		d.blob = hdr
		if len(hdr) == lpHeaderSize && int64(binary.LittleEndian.Uint32(hdr)) == h.n {
			if n := int(binary.LittleEndian.Uint16(hdr[4:])); n != 65535 {
				d.rd.r += int(h.clen)
				return lpCount{clen: h.clen, n: n, counted: true, b: hdr, full: h.n, complete: true}, nil
			}
		}
	}
	b, full, complete, err := d.readBlobBody(h)
	if err != nil {
		return lpCount{}, err
	}
	c := lpCount{b: b, full: full, complete: complete}
	if h.kind == strLZF {
		c.clen = h.clen
	}
	if complete {
		c.n, c.counted = lpCountFast(b)
	}
	return c, nil
}

// look sets what is looked for in the next value: what the options say,
// as far as l asks for it.
func (d *Decoder) look(l Look) {
	d.fieldSample, d.jsonKeys, d.watch = 0, 0, false
	if l&LookNames != 0 {
		d.fieldSample, d.jsonKeys = d.opts.FieldSample, d.opts.JSONKeys
	}
	if l&LookWatched != 0 {
		d.watch = len(d.opts.WatchFields) > 0
	}
	d.needNames = d.fieldSample > 0 || d.watch
}

// readKey reads the key (next has a fast path for short ones).
func (d *Decoder) readKey() error {
	dst := d.keyDst()
	base := len(dst)
	dst, n, _, err := d.readStr(dst, d.opts.MaxBlobBytes)
	d.setKey(dst, base)
	d.rec.KeyLen = n
	return err
}

func (d *Decoder) readAux() error {
	k, _, _, err := d.readStr(d.e1[:0], maxAuxValue)
	d.e1 = k
	if err != nil {
		return err
	}
	v, _, _, err := d.readStr(d.e2[:0], maxAuxValue)
	d.e2 = v
	if err != nil {
		return err
	}
	if len(d.meta.Aux) < maxAux {
		d.meta.Aux = append(d.meta.Aux, AuxField{Key: string(k), Value: string(v)})
	}
	return nil
}

// Redis 7.0-rc1/rc2 functions: name, engine name, has-description flag,
// description, code.
func (d *Decoder) skipFunctionPreGA() error {
	for range 2 {
		if _, err := d.skipStr(); err != nil {
			return err
		}
	}
	has, err := d.readLen()
	if err != nil {
		return err
	}
	if has != 0 {
		if _, err := d.skipStr(); err != nil {
			return err
		}
	}
	_, err = d.skipStr()
	return err
}

func moduleName(id uint64) string {
	var b [9]byte
	id >>= 10
	for j := 8; j >= 0; j-- {
		b[j] = moduleNameAlphab[id&63]
		id >>= 6
	}
	return string(b[:])
}

func (d *Decoder) readModuleAux(off int64) error {
	id, err := d.readLen()
	if err != nil {
		return err
	}
	name := moduleName(id)
	whenOp, err := d.readLen()
	if err != nil {
		return err
	}
	if whenOp != modUInt {
		return corruptf("module %s aux data: when-opcode %d, want %d", name, whenOp, modUInt)
	}
	when, err := d.readLen()
	if err != nil {
		return err
	}
	if err := d.skipModuleValue(name); err != nil {
		return err
	}
	if len(d.meta.ModuleAux) < maxModuleAux {
		d.meta.ModuleAux = append(d.meta.ModuleAux, ModuleAux{Module: name, When: when, Offset: off, Bytes: d.rd.offset() - off})
	}
	return nil
}

// skipModuleValue walks a module value written with annotations (module
// API v2): opcode-tagged ints, floats, doubles and strings up to EOF.
func (d *Decoder) skipModuleValue(name string) error {
	for {
		d.mark = d.rd.offset()
		op, err := d.readLen()
		if err != nil {
			return err
		}
		switch op {
		case modEOF:
			return nil
		case modSInt, modUInt:
			if _, err := d.readLen(); err != nil {
				return err
			}
		case modFloat:
			if err := d.rd.skip(4); err != nil {
				return err
			}
		case modDouble:
			if err := d.rd.skip(8); err != nil {
				return err
			}
		case modString:
			if _, err := d.skipStr(); err != nil {
				return err
			}
		default:
			return corruptf("module %s value: unknown module opcode %d", name, op)
		}
	}
}
