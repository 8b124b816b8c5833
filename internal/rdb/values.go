package rdb

import (
	"encoding/binary"
	"math"
	"strconv"
)

func (d *Decoder) readValue(t byte) error {
	rec := &d.rec
	switch t {
	case tString:
		rec.Type = TypeString
		return d.readString()
	case tList:
		rec.Type, rec.Encoding = TypeList, EncLinkedlist
		return d.readLinkedList()
	case tSet:
		rec.Type, rec.Encoding = TypeSet, EncHashtable
		return d.readPlainSet()
	case tZSet, tZSet2:
		rec.Type, rec.Encoding = TypeZSet, EncSkiplist
		return d.readPlainZSet(t == tZSet2)
	case tHash:
		rec.Type, rec.Encoding = TypeHash, EncHashtable
		return d.readPlainHash(0, false)
	case tHashMetadataPreGA, tHashMetadata:
		rec.Type, rec.Encoding = TypeHash, EncHashtable
		if d.meta.Valkey { // Valkey's RDB_TYPE_HASH_2, the same number
			return d.readPlainHash(0, true)
		}
		rec.Type, rec.Encoding = TypeHash, EncHashtable
		var minExp int64 = -1 // pre-GA: TTLs are absolute
		if t == tHashMetadata {
			p, err := d.rd.next(8)
			if err != nil {
				return err
			}
			minExp = int64(binary.LittleEndian.Uint64(p))
		}
		return d.readPlainHash(minExp, false)
	case tModulePreGA:
		d.mark = d.rd.offset()
		id, err := d.readLen()
		if err != nil {
			return err
		}
		return unsupportedf("module %s value in the Redis 4.0 release-candidate format (RDB type 6, module id %d) cannot be skipped without the module", moduleName(id), id)
	case tModule2:
		rec.Type, rec.Encoding = TypeModule, EncRaw
		start := d.rd.offset()
		id, err := d.readLen()
		if err != nil {
			return err
		}
		rec.Module = moduleName(id)
		if err := d.skipModuleValue(rec.Module); err != nil {
			return err
		}
		rec.MemoryEstimate = sizeRobj + d.rd.offset() - start
		return nil
	case tHashZipmap:
		rec.Type, rec.Encoding = TypeHash, EncZipmap
		return d.readZipmap()
	case tListZiplist:
		rec.Type, rec.Encoding = TypeList, EncZiplist
		return d.readListZiplist()
	case tSetIntset:
		rec.Type, rec.Encoding = TypeSet, EncIntset
		return d.readIntset()
	case tZSetZiplist:
		rec.Type, rec.Encoding = TypeZSet, EncZiplist
		return d.readPairsBlob(false)
	case tHashZiplist:
		rec.Type, rec.Encoding = TypeHash, EncZiplist
		return d.readPairsBlob(false)
	case tListQuicklist, tListQuicklist2:
		rec.Type, rec.Encoding = TypeList, EncQuicklist
		return d.readQuicklist(t == tListQuicklist2)
	case tStreamListpacks, tStreamListpacks2, tStreamListpacks3:
		rec.Type, rec.Encoding = TypeStream, EncStream
		return d.readStream(t)
	case tHashListpack:
		rec.Type, rec.Encoding = TypeHash, EncListpack
		if d.needNames && !d.collecting() {
			return d.readHashListpack()
		}
		return d.readPairsBlob(true)
	case tZSetListpack:
		rec.Type, rec.Encoding = TypeZSet, EncListpack
		return d.readPairsBlob(true)
	case tSetListpack:
		rec.Type, rec.Encoding = TypeSet, EncListpack
		return d.readSetListpack()
	case tHashListpackExPreGA, tHashListpackEx:
		rec.Type, rec.Encoding = TypeHash, EncListpackEx
		if t == tHashListpackEx {
			if err := d.rd.skip(8); err != nil { // min field expiry, derived data
				return err
			}
		}
		return d.readHashListpackEx()
	}
	return unsupportedf("unknown object type %d", t)
}

// ---- value collection (Options.ValueLimit) -------------------------------------

func (d *Decoder) collecting() bool { return d.opts.ValueLimit > 0 && !d.valOver }

func (d *Decoder) budget(n int) bool {
	d.valBytes += n
	if d.valBytes > d.opts.ValueLimit {
		d.valOver = true
		d.val.String, d.val.Elems = d.val.String[:0], d.val.Elems[:0]
		return false
	}
	return true
}

func (d *Decoder) addElem(member, value []byte, score float64, exp int64) {
	if !d.collecting() || !d.budget(len(member)+len(value)+8) {
		return
	}
	e := Elem{Member: append([]byte{}, member...), Score: score, ExpireAt: exp}
	if value != nil {
		e.Value = append([]byte{}, value...)
	}
	d.val.Elems = append(d.val.Elems, e)
}

// elemText renders a compact-encoding element as the string Redis returns.
func elemText(dst []byte, e elem) []byte {
	if e.isInt {
		return strconv.AppendInt(dst, e.i, 10)
	}
	return append(dst, e.s...)
}

func elemScore(e elem) float64 {
	if e.isInt {
		return float64(e.i)
	}
	f, err := strconv.ParseFloat(string(e.s), 64)
	if err != nil {
		return math.NaN()
	}
	return f
}

// readElemCut reads one string element into *buf, cut to limit bytes;
// complete reports whether *buf holds all of it.
func (d *Decoder) readElemCut(buf *[]byte, limit int) (strHdr, bool, error) {
	h, err := d.readStrHdr()
	if err != nil {
		return h, false, err
	}
	var complete bool
	*buf, complete, err = d.readBody((*buf)[:0], h, limit)
	return h, complete && err == nil, err
}

// ---- hash fields (sampling and watching) ----------------------------------------

// readElem reads one string element into *buf: fully when it is at most
// limit bytes (or an integer), otherwise it is skipped. It returns the
// element's length and whether *buf holds it.
func (d *Decoder) readElem(buf *[]byte, limit int) (strHdr, bool, error) {
	h, err := d.readStrHdr()
	if err != nil {
		return h, false, err
	}
	if h.kind == strInt || h.n <= int64(limit) {
		*buf, _, err = d.readBody((*buf)[:0], h, limit)
		return h, err == nil, err
	}
	*buf = (*buf)[:0]
	return h, false, d.skipBody(h)
}

func (d *Decoder) collectLimit() int {
	if d.collecting() {
		return d.opts.ValueLimit
	}
	return 0
}
