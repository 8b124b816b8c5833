package rdb

import (
	"encoding/binary"
	"math"
	"strconv"

	"github.com/keyguard/keyguard/internal/jsonkeys"
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
		return d.readPlainHash(0)
	case tHashMetadataPreGA, tHashMetadata:
		rec.Type, rec.Encoding = TypeHash, EncHashtable
		var minExp int64 = -1 // pre-GA: TTLs are absolute
		if t == tHashMetadata {
			p, err := d.rd.next(8)
			if err != nil {
				return err
			}
			minExp = int64(binary.LittleEndian.Uint64(p))
		}
		return d.readPlainHash(minExp)
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

// ---- hash fields (sampling and watching) ----------------------------------------

// wantsFieldValue reports whether the value of a field named name is
// needed (watched or collected).
func (d *Decoder) wantsFieldValue(name []byte) bool {
	if d.collecting() {
		return true
	}
	if !d.watch {
		return false
	}
	for _, w := range d.opts.WatchFields {
		if w == string(name) {
			return true
		}
	}
	return false
}

func (d *Decoder) needFieldNames() bool {
	return d.needNames || d.collecting()
}

// hashField records a field name (sample) and, when given, its value
// (watch list).
func (d *Decoder) hashField(name, value []byte, haveValue bool) {
	if d.fieldSample > 0 {
		d.sampleField(name)
	}
	if haveValue && d.watch {
		d.watchValue(name, value)
	}
}

// sampleField adds name to Record.Fields (cut to maxFieldName) or sets
// MoreFields when the sample is full.
func (d *Decoder) sampleField(name []byte) {
	rec := &d.rec
	if len(rec.Fields) >= d.fieldSample {
		rec.MoreFields = true
		return
	}
	if len(name) > maxFieldName {
		name = name[:maxFieldName]
	}
	// Fields point into fieldBuf; rebuild the slices when it moves.
	old := cap(d.fieldBuf)
	startAt := len(d.fieldBuf)
	d.fieldBuf = append(d.fieldBuf, name...)
	if cap(d.fieldBuf) != old {
		p := 0
		for i := range rec.Fields {
			l := len(rec.Fields[i])
			rec.Fields[i] = d.fieldBuf[p : p+l : p+l]
			p += l
		}
	}
	rec.Fields = append(rec.Fields, d.fieldBuf[startAt:len(d.fieldBuf):len(d.fieldBuf)])
}

// isWatched reports whether name is one of Options.WatchFields. Most
// names differ from all of them in their first byte or length, which a
// table answers without comparing.
func (d *Decoder) isWatched(name []byte) bool {
	if !d.watch {
		return false
	}
	if len(name) == 0 {
		return d.watchEmpty
	}
	if d.watchFirst[name[0]]&(1<<min(len(name)-1, 7)) == 0 {
		return false
	}
	for _, w := range d.opts.WatchFields {
		if w == string(name) {
			return true
		}
	}
	return false
}

// watchValue captures the value of field name if it is watched.
func (d *Decoder) watchValue(name, value []byte) {
	rec := &d.rec
	for i, w := range d.opts.WatchFields {
		if w == string(name) && len(rec.Watched) < len(d.opts.WatchFields) {
			v := value
			if len(v) > maxWatchedValue {
				v = v[:maxWatchedValue]
			}
			// One reused buffer per watched name: no allocation per key.
			d.watchBuf[i] = append(d.watchBuf[i][:0], v...)
			rec.Watched = append(rec.Watched, Field{Name: w, Value: d.watchBuf[i]})
		}
	}
}

// ---- strings -------------------------------------------------------------------

func (d *Decoder) readString() error {
	rec := &d.rec
	h, err := d.readStrHdr()
	if err != nil {
		return err
	}
	rec.Elements = h.n
	isInt := h.kind == strInt
	limit := 0
	if h.n <= 20 {
		limit = 20
	}
	if d.jsonKeys > 0 {
		limit = max(limit, jsonPrefixBytes)
	}
	collect := d.collecting()
	if collect {
		limit = max(limit, d.opts.ValueLimit)
	}
	switch {
	case isInt && !collect:
		// Nothing to look at: the header holds the value.
	case limit > 0:
		body, complete, err := d.stringBody(h, limit, collect)
		if err != nil {
			return err
		}
		if !isInt && complete && h.n <= 20 {
			_, isInt = parseInt64(body)
		}
		if d.jsonKeys > 0 && !isInt {
			rec.JSONKeys = jsonkeys.Top(rec.JSONKeys, body, d.jsonKeys, &d.names)
		}
		if collect {
			if complete && d.budget(len(body)) {
				d.val.String = append(d.val.String, body...)
			} else {
				d.valOver = true
			}
		}
	default:
		if err := d.skipBody(h); err != nil {
			return err
		}
	}
	switch {
	case isInt:
		rec.Encoding = EncInt
	case h.n <= embstrLimit:
		rec.Encoding = EncEmbstr
	default:
		rec.Encoding = EncRaw
	}
	rec.MemoryEstimate = stringMem(h.n, isInt)
	return nil
}

// stringBody is readBody for a string value, read in place when the
// reader's buffer can hold it (the slice is valid until the next read).
// Unless collect is set, an LZF string over 20 bytes (not an integer) is
// inflated only when it starts like a JSON object: nothing else reads it.
func (d *Decoder) stringBody(h strHdr, limit int, collect bool) ([]byte, bool, error) {
	rd := &d.rd
	switch {
	case h.kind == strRaw && h.n <= int64(len(rd.buf)):
		var body []byte
		if r, n := rd.r, int(h.n); n <= rd.w-r {
			body = rd.buf[r : r+n : r+n]
			rd.r = r + n
		} else {
			var err error
			if body, err = rd.nextAll(n); err != nil {
				return nil, false, err
			}
		}
		if h.n > int64(limit) {
			return body[:limit], false, nil
		}
		return body, true, nil
	case h.kind == strLZF && !collect && !d.checkAll && h.n > 20 && h.clen <= int64(len(rd.buf)):
		in, err := rd.peek(int(h.clen))
		if err != nil {
			return nil, false, err
		}
		head := lzfPrefixAppend(d.e1[:0], in, jsonSniffBytes)
		d.e1 = head
		if !jsonkeys.Object(head) {
			rd.r += int(h.clen)
			return head, false, nil
		}
		body, complete, err := d.readBody(d.e1[:0], h, limit)
		d.e1 = body
		return body, complete, err
	}
	body, complete, err := d.readBody(d.e1[:0], h, limit)
	d.e1 = body
	return body, complete, err
}

// ---- plain (non-compact) encodings ----------------------------------------------

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

func (d *Decoder) readLinkedList() error {
	rec := &d.rec
	n, err := d.readLen()
	if err != nil {
		return err
	}
	var pk listPacker
	limit := max(d.collectLimit(), 20) // short strings may become listpack ints
	for i := uint64(0); i < n; i++ {
		h, have, err := d.readElem(&d.e1, limit)
		if err != nil {
			return err
		}
		switch {
		case h.kind == strInt:
			pk.add(int64(lpIntEntrySize(h.ival)))
		case have:
			pk.add(int64(lpEntrySize(d.e1)))
		default:
			pk.add(int64(lpStrEntrySize(int(min(h.n, math.MaxInt32)))))
		}
		if have {
			d.addElem(d.e1, nil, 0, 0)
		} else {
			d.valOver = true
		}
		rec.Elements++
	}
	rec.MemoryEstimate = pk.total()
	return nil
}

func (d *Decoder) readPlainSet() error {
	rec := &d.rec
	n, err := d.readLen()
	if err != nil {
		return err
	}
	limit := d.collectLimit()
	var elems int64
	for i := uint64(0); i < n; i++ {
		h, have, err := d.readElem(&d.e1, limit)
		if err != nil {
			return err
		}
		elems += sizeDictEntry + sdsAlloc(h.n)
		if have {
			d.addElem(d.e1, nil, 0, 0)
		} else if d.collecting() {
			d.valOver = true
		}
		rec.Elements++
	}
	rec.MemoryEstimate = sizeRobj + sizeDict + 8*dictSlots(rec.Elements) + elems
	return nil
}

func (d *Decoder) readScore(binaryScore bool) (float64, error) {
	if binaryScore {
		p, err := d.rd.next(8)
		if err != nil {
			return 0, err
		}
		return math.Float64frombits(binary.LittleEndian.Uint64(p)), nil
	}
	l, err := d.rd.byte()
	if err != nil {
		return 0, err
	}
	switch l {
	case 253:
		return math.NaN(), nil
	case 254:
		return math.Inf(1), nil
	case 255:
		return math.Inf(-1), nil
	}
	p, err := d.rd.next(int(l))
	if err != nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(string(p), 64)
	if err != nil {
		return 0, corruptf("sorted set score %q is not a number", p)
	}
	return f, nil
}

func (d *Decoder) readPlainZSet(binaryScore bool) error {
	rec := &d.rec
	n, err := d.readLen()
	if err != nil {
		return err
	}
	limit := d.collectLimit()
	var elems int64
	for i := uint64(0); i < n; i++ {
		h, have, err := d.readElem(&d.e1, limit)
		if err != nil {
			return err
		}
		score, err := d.readScore(binaryScore)
		if err != nil {
			return err
		}
		elems += sdsAlloc(h.n) + sizeDictEntry + sizeZslNodeAvg
		if have {
			d.addElem(d.e1, nil, score, 0)
		} else if d.collecting() {
			d.valOver = true
		}
		rec.Elements++
	}
	rec.MemoryEstimate = sizeRobj + sizeZset + sizeZskiplist + sizeDict + 8*dictSlots(rec.Elements) + sizeZslHeader + elems
	return nil
}

// readPlainHash reads RDB_TYPE_HASH (minExp 0), RDB_TYPE_HASH_METADATA
// (minExp from the file: TTLs are stored as ttl-minExp+1, 0 = none) and
// its pre-GA form (minExp -1: TTLs are absolute).
func (d *Decoder) readPlainHash(minExp int64) error {
	rec := &d.rec
	n, err := d.readLen()
	if err != nil {
		return err
	}
	nameLimit := 0
	if d.needFieldNames() {
		nameLimit = max(maxFieldName, d.collectLimit())
	}
	var elems int64
	for i := uint64(0); i < n; i++ {
		var exp int64
		if minExp != 0 {
			ttl, err := d.readLen()
			if err != nil {
				return err
			}
			switch {
			case ttl == 0:
			case minExp < 0:
				exp = int64(min(ttl, math.MaxInt64))
			default:
				exp = int64(min(ttl+uint64(minExp)-1, math.MaxInt64))
			}
			if exp != 0 {
				rec.FieldTTLs++
			}
		}
		// Names are kept up to nameLimit bytes (longer ones are sampled
		// cut); a watched or collected value is read, cut to its limit.
		var fn, vn int64
		nameComplete, valComplete := false, false
		if nameLimit > 0 {
			d.e1, fn, nameComplete, err = d.readStr(d.e1[:0], nameLimit)
		} else {
			fn, err = d.skipStr()
		}
		if err != nil {
			return err
		}
		wantVal := nameComplete && d.wantsFieldValue(d.e1)
		d.e2 = d.e2[:0]
		if wantVal {
			d.e2, vn, valComplete, err = d.readStr(d.e2, max(maxWatchedValue, d.collectLimit()))
		} else {
			vn, err = d.skipStr()
		}
		if err != nil {
			return err
		}
		if nameLimit > 0 {
			d.hashField(d.e1, d.e2, wantVal)
		}
		if nameComplete && valComplete {
			d.addElem(d.e1, d.e2, 0, exp)
		} else if d.collecting() {
			d.valOver = true
		}
		elems += sizeDictEntry + sdsAlloc(fn) + sdsAlloc(vn)
		if exp != 0 {
			elems += 8 // field TTL metadata (7.4)
		}
		rec.Elements++
	}
	rec.MemoryEstimate = sizeRobj + sizeDict + 8*dictSlots(rec.Elements) + elems
	return nil
}

// ---- compact encodings ------------------------------------------------------------

// walkBlob iterates a listpack (lp) or ziplist.
type blobIter interface {
	next() (elem, bool, error)
}

func (d *Decoder) iter(b []byte, lp bool) (blobIter, int, error) {
	if lp {
		d.lp.reset(b)
		n, err := lpHeader(b)
		return &d.lp, n, err
	}
	it, n, err := newZLIter(b)
	return it, n, err
}

// headerCount reads the element count a blob declares (for blobs too big
// to walk); -1 when unknown.
func headerCount(b []byte, lp bool) int {
	if lp {
		if len(b) >= lpHeaderSize {
			if n := int(binary.LittleEndian.Uint16(b[4:])); n != 65535 {
				return n
			}
		}
		return -1
	}
	if len(b) >= zlHeaderSize {
		if n := int(binary.LittleEndian.Uint16(b[8:])); n != 65535 {
			return n
		}
	}
	return -1
}

func (d *Decoder) checkCount(declared, got int, what string) error {
	if declared >= 0 && declared != got {
		return corruptf("%s header says %d entries, found %d", what, declared, got)
	}
	return nil
}

func blobKind(lp bool) string {
	if lp {
		return "listpack"
	}
	return "ziplist"
}

// readPairsBlob reads a hash or sorted set stored as one listpack (lp) or
// ziplist of alternating field/value or member/score entries.
func (d *Decoder) readPairsBlob(lp bool) error {
	rec := &d.rec
	isHash := rec.Type == TypeHash
	if lp && !d.collecting() && !(isHash && d.needNames) {
		// Only the count: a sorted set, or a hash nobody asked fields of
		// (readValue sends the others to readHashListpack).
		c, err := d.readLPCount()
		if err != nil {
			return err
		}
		if c.counted {
			if c.n%2 != 0 {
				return corruptf("listpack of pairs has an odd number of entries (%d)", c.n)
			}
			rec.Elements = int64(c.n / 2)
			rec.MemoryEstimate = sizeRobj + jeSize(c.full)
			return nil
		}
		return d.pairsBlob(c.b, c.full, c.complete, lp)
	}
	b, full, complete, err := d.readBlob()
	if err != nil {
		return err
	}
	return d.pairsBlob(b, full, complete, lp)
}

// readHashListpack reads a hash listpack whose field names are sampled or
// watched, through lpHashFields when it can.
func (d *Decoder) readHashListpack() error {
	rec := &d.rec
	b, ok := d.blobInBuf()
	full, complete := int64(len(b)), true
	if !ok {
		var err error
		if b, full, complete, err = d.readBlob(); err != nil {
			return err
		}
	}
	if complete {
		if n, ok := d.lpHashFields(b); ok {
			rec.Elements = int64(n)
			rec.MemoryEstimate = sizeRobj + jeSize(full)
			return nil
		}
		// Start over with the general walk, which names the problem.
		rec.Fields, rec.Watched, rec.MoreFields = rec.Fields[:0], rec.Watched[:0], false
		d.fieldBuf = d.fieldBuf[:0]
	}
	return d.pairsBlob(b, full, complete, true)
}

// lpHashFields walks a hash listpack, sampling and watching fields as
// pairsBlob does, and returns the number of fields. It checks the
// listpack with lpCountFast first, then goes through the fields, decoding
// a value only when its field is watched (two tight loops run faster
// than one juggling everything). !ok: something lpIter would reject, or
// an odd number of entries; the caller then walks with lpIter.
func (d *Decoder) lpHashFields(b []byte) (int, bool) {
	n, ok := lpCountFast(b)
	if !ok || n%2 != 0 {
		return 0, false
	}
	sample, watch := d.fieldSample > 0, d.watch
	rec := &d.rec
	for p, end := lpHeaderSize, len(b)-1; p < end; {
		var name []byte
		if c := b[p]; c >= 0x80 && c < 0xC0 { // lpText for a short string
			q := p + 1 + int(c&0x3f)
			name, p = b[p+1:q], q+1
		} else {
			name, p = lpText(b, p, &d.e1)
		}
		if sample {
			if l := len(d.fieldBuf); len(rec.Fields) < d.fieldSample && len(name) <= cap(d.fieldBuf)-l && len(name) <= maxFieldName {
				// sampleField's common case: fieldBuf has room.
				d.fieldBuf = append(d.fieldBuf, name...)
				rec.Fields = append(rec.Fields, d.fieldBuf[l:len(d.fieldBuf):len(d.fieldBuf)])
			} else {
				d.sampleField(name)
			}
		}
		if p >= end {
			break // cannot happen: the count is even
		}
		if watch && d.isWatched(name) {
			var v []byte
			v, p = lpText(b, p, &d.e2)
			d.watchValue(name, v)
		} else if c := b[p]; c < 0x80 { // lpSkip, inlined
			p += 2
		} else if c < 0xC0 {
			p += 2 + int(c&0x3f)
		} else if c >= 0xF1 && c <= 0xF3 { // 16-, 24-, 32-bit integers
			p += int(c) - 0xF1 + 4
		} else {
			p = lpSkipRare(b, p)
		}
	}
	return n / 2, true
}

// pairsBlob walks a listpack or ziplist of pairs with the general
// iterator.
func (d *Decoder) pairsBlob(b []byte, full int64, complete, lp bool) error {
	rec := &d.rec
	isHash := rec.Type == TypeHash
	if !complete {
		rec.Partial = true
		if n := headerCount(b, lp); n > 0 {
			rec.Elements = int64(n / 2)
		}
		rec.MemoryEstimate = sizeRobj + jeSize(full)
		return nil
	}
	it, declared, err := d.iter(b, lp)
	if err != nil {
		return err
	}
	lpBytes := int64(lpEmptyBytes)
	var sdsBytes int64 // sizes if Redis 7 loads it as a hashtable / skiplist
	var k int
	var first elem
	for {
		e, ok, err := it.next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if !lp { // sizes of what Redis 7 converts the ziplist to
			lpBytes += int64(e.lpSize())
			if k%2 == 0 || isHash {
				sdsBytes += sdsAlloc(int64(elemLen(e)))
			}
		}
		if k%2 == 0 {
			first = e
		} else {
			if isHash {
				if d.needFieldNames() {
					d.e1 = elemText(d.e1[:0], first)
					d.e2 = elemText(d.e2[:0], e)
					d.hashField(d.e1, d.e2, true)
					d.addElem(d.e1, d.e2, 0, 0)
				}
			} else if d.collecting() {
				d.e1 = elemText(d.e1[:0], first)
				d.addElem(d.e1, nil, elemScore(e), 0)
			}
		}
		k++
	}
	if k%2 != 0 {
		return corruptf("%s of pairs has an odd number of entries (%d)", blobKind(lp), k)
	}
	if err := d.checkCount(declared, k, blobKind(lp)); err != nil {
		return err
	}
	rec.Elements = int64(k / 2)
	if lp {
		rec.MemoryEstimate = sizeRobj + jeSize(full)
		return nil
	}
	// A ziplist becomes a listpack in Redis 7 (or a hashtable / skiplist
	// beyond 128 entries).
	if rec.Elements > 128 {
		if isHash {
			rec.MemoryEstimate = sizeRobj + sizeDict + 8*dictSlots(rec.Elements) + rec.Elements*sizeDictEntry + sdsBytes
		} else {
			rec.MemoryEstimate = sizeRobj + sizeZset + sizeZskiplist + sizeDict + 8*dictSlots(rec.Elements) + sizeZslHeader + rec.Elements*(sizeDictEntry+sizeZslNodeAvg) + sdsBytes
		}
		return nil
	}
	rec.MemoryEstimate = sizeRobj + jeSize(lpBytes)
	return nil
}

func elemLen(e elem) int {
	if e.isInt {
		return intLen(e.i)
	}
	return len(e.s)
}

func (d *Decoder) readHashListpackEx() error {
	rec := &d.rec
	b, full, complete, err := d.readBlob()
	if err != nil {
		return err
	}
	rec.MemoryEstimate = sizeRobj + 16 + jeSize(full) // + listpackEx struct
	if !complete {
		rec.Partial = true
		if n := headerCount(b, true); n > 0 {
			rec.Elements = int64(n / 3)
		}
		return nil
	}
	it, declared, err := d.iter(b, true)
	if err != nil {
		return err
	}
	var k int
	var f, v elem
	for {
		e, ok, err := it.next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		switch k % 3 {
		case 0:
			f = e
		case 1:
			v = e
		case 2:
			if !e.isInt {
				return corruptf("hash listpack field TTL is not an integer")
			}
			if e.i != 0 {
				rec.FieldTTLs++
			}
			if d.needFieldNames() {
				d.e1 = elemText(d.e1[:0], f)
				d.e2 = elemText(d.e2[:0], v)
				d.hashField(d.e1, d.e2, true)
				d.addElem(d.e1, d.e2, 0, e.i)
			}
		}
		k++
	}
	if k%3 != 0 {
		return corruptf("hash listpack with TTLs has %d entries, not a multiple of 3", k)
	}
	if err := d.checkCount(declared, k, "listpack"); err != nil {
		return err
	}
	rec.Elements = int64(k / 3)
	return nil
}

func (d *Decoder) readSetListpack() error {
	rec := &d.rec
	var b []byte
	var full int64
	var complete bool
	if d.collecting() {
		var err error
		if b, full, complete, err = d.readBlob(); err != nil {
			return err
		}
	} else {
		c, err := d.readLPCount()
		if err != nil {
			return err
		}
		if c.counted {
			rec.MemoryEstimate = sizeRobj + jeSize(c.full)
			rec.Elements = int64(c.n)
			return nil
		}
		b, full, complete = c.b, c.full, c.complete
	}
	rec.MemoryEstimate = sizeRobj + jeSize(full)
	if !complete {
		rec.Partial = true
		if n := headerCount(b, true); n > 0 {
			rec.Elements = int64(n)
		}
		return nil
	}
	it, declared, err := d.iter(b, true)
	if err != nil {
		return err
	}
	var k int
	for {
		e, ok, err := it.next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if d.collecting() {
			d.e1 = elemText(d.e1[:0], e)
			d.addElem(d.e1, nil, 0, 0)
		}
		k++
	}
	if err := d.checkCount(declared, k, "listpack"); err != nil {
		return err
	}
	rec.Elements = int64(k)
	return nil
}

func (d *Decoder) readIntset() error {
	rec := &d.rec
	b, full, complete, err := d.readBlob()
	if err != nil {
		return err
	}
	rec.MemoryEstimate = sizeRobj + jeSize(full)
	if !complete {
		rec.Partial = true
		if _, n, err := intsetHeader(b); err == nil {
			rec.Elements = int64(n)
		}
		return nil
	}
	enc, n, err := intsetCheck(b)
	if err != nil {
		return err
	}
	if d.collecting() {
		for i := range n {
			d.e1 = strconv.AppendInt(d.e1[:0], intsetGet(b, enc, i), 10)
			d.addElem(d.e1, nil, 0, 0)
		}
	}
	rec.Elements = int64(n)
	return nil
}

func (d *Decoder) readZipmap() error {
	rec := &d.rec
	b, full, complete, err := d.readBlob()
	if err != nil {
		return err
	}
	if !complete {
		rec.Partial = true
		if len(b) > 0 && b[0] < 254 {
			rec.Elements = int64(b[0])
		}
		rec.MemoryEstimate = sizeRobj + jeSize(full)
		return nil
	}
	it, err := newZMIter(b)
	if err != nil {
		return err
	}
	lpBytes := int64(lpEmptyBytes)
	var sdsBytes int64
	maxLen := 0
	for {
		f, v, ok, err := it.next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		lpBytes += int64(lpEntrySize(f) + lpEntrySize(v))
		sdsBytes += sdsAlloc(int64(len(f))) + sdsAlloc(int64(len(v)))
		maxLen = max(maxLen, len(f), len(v))
		if d.needFieldNames() {
			d.hashField(f, v, true)
			d.addElem(f, v, 0, 0)
		}
	}
	if b[0] < 254 && int(b[0]) != it.n {
		return corruptf("zipmap header says %d entries, found %d", b[0], it.n)
	}
	rec.Elements = int64(it.n)
	if rec.Elements > 128 || maxLen > 64 {
		rec.MemoryEstimate = sizeRobj + sizeDict + 8*dictSlots(rec.Elements) + rec.Elements*sizeDictEntry + sdsBytes
	} else {
		rec.MemoryEstimate = sizeRobj + jeSize(lpBytes)
	}
	return nil
}

func (d *Decoder) readListZiplist() error {
	rec := &d.rec
	b, full, complete, err := d.readBlob()
	if err != nil {
		return err
	}
	if !complete {
		rec.Partial = true
		if n := headerCount(b, false); n > 0 {
			rec.Elements = int64(n)
		}
		rec.MemoryEstimate = sizeRobj + sizeQuicklist + sizeQuicklistNode + jeSize(full)
		return nil
	}
	it, declared, err := newZLIter(b)
	if err != nil {
		return err
	}
	var pk listPacker
	for {
		e, ok, err := it.next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		pk.add(int64(e.lpSize()))
		if d.collecting() {
			d.e1 = elemText(d.e1[:0], e)
			d.addElem(d.e1, nil, 0, 0)
		}
	}
	if err := d.checkCount(declared, it.n, "ziplist"); err != nil {
		return err
	}
	rec.Elements = int64(it.n)
	rec.MemoryEstimate = pk.total()
	return nil
}

// readQuicklist reads RDB_TYPE_LIST_QUICKLIST (ziplist nodes, Redis
// 3.2-6.2) and RDB_TYPE_LIST_QUICKLIST_2 (container tag + listpack or plain
// node, Redis 7).
func (d *Decoder) readQuicklist(v2 bool) error {
	rec := &d.rec
	n, err := d.readLen()
	if err != nil {
		return err
	}
	mem := int64(sizeRobj + sizeQuicklist)
	var nodes int64
	var lastPacked bool
	var lastBytes int64

	for i := uint64(0); i < n; i++ {
		packed := true
		if v2 {
			d.mark = d.rd.offset()
			c, err := d.readLen()
			if err != nil {
				return err
			}
			switch c {
			case 1: // QUICKLIST_NODE_CONTAINER_PLAIN: one big element
				packed = false
			case 2: // QUICKLIST_NODE_CONTAINER_PACKED
			default:
				return corruptf("quicklist node container %d, want 1 (plain) or 2 (packed)", c)
			}
		}
		nodes++
		if !packed {
			h, have, err := d.readElem(&d.e1, d.collectLimit())
			if err != nil {
				return err
			}
			if have {
				d.addElem(d.e1, nil, 0, 0)
			} else if d.collecting() {
				d.valOver = true
			}
			rec.Elements++
			mem += sizeQuicklistNode + jeSize(h.n)
			lastPacked, lastBytes = false, h.n
			continue
		}
		var b []byte
		var full int64
		var complete bool
		if v2 && !d.collecting() {
			c, err := d.readLPCount()
			if err != nil {
				return err
			}
			if c.counted {
				rec.Elements += int64(c.n)
				mem += sizeQuicklistNode + jeSize(c.full)
				lastPacked, lastBytes = true, c.full
				continue
			}
			b, full, complete = c.b, c.full, c.complete
		} else {
			var err error
			if b, full, complete, err = d.readBlob(); err != nil {
				return err
			}
		}
		lastPacked, lastBytes = true, full
		if !complete {
			rec.Partial = true
			if c := headerCount(b, v2); c > 0 {
				rec.Elements += int64(c)
			}
			mem += sizeQuicklistNode + jeSize(full)
			continue
		}
		it, declared, err := d.iter(b, v2)
		if err != nil {
			return err
		}
		lpBytes := int64(lpEmptyBytes)
		cnt := 0
		for {
			e, ok, err := it.next()
			if err != nil {
				return err
			}
			if !ok {
				break
			}
			if !v2 {
				lpBytes += int64(e.lpSize())
			}
			if d.collecting() {
				d.e1 = elemText(d.e1[:0], e)
				d.addElem(d.e1, nil, 0, 0)
			}
			cnt++
		}
		if err := d.checkCount(declared, cnt, blobKind(v2)); err != nil {
			return err
		}
		rec.Elements += int64(cnt)
		if v2 {
			mem += sizeQuicklistNode + jeSize(full)
		} else {
			mem += sizeQuicklistNode + jeSize(lpBytes)
		}
	}
	// Redis 7.2 (RDB 11) saves a listpack-encoded list as a one-node
	// quicklist; small single nodes are listpacks on such servers.
	if v2 && d.meta.Version >= 11 && nodes == 1 && lastPacked && lastBytes <= listNodeLimit {
		rec.Encoding = EncListpack
		mem = sizeRobj + jeSize(lastBytes)
	}
	rec.MemoryEstimate = mem
	return nil
}

func (d *Decoder) readStream(t byte) error {
	rec := &d.rec
	nlp, err := d.readLen()
	if err != nil {
		return err
	}
	mem := int64(sizeRobj + sizeStream)
	var last int64
	var nodes raxCounter
	for i := uint64(0); i < nlp; i++ {
		h, err := d.readStrHdr()
		if err != nil {
			return err
		}
		if h.n != sizeStreamID || h.kind == strInt {
			return corruptf("stream node key of %d bytes, want 16", h.n)
		}
		if d.e1, _, err = d.readBody(d.e1[:0], h, sizeStreamID); err != nil {
			return err
		}
		nodes.add(d.e1)
		lh, err := d.readStrHdr()
		if err != nil {
			return err
		}
		if lh.kind == strInt || lh.n < lpEmptyBytes {
			return corruptf("stream listpack of %d bytes", lh.n)
		}
		if err := d.skipBody(lh); err != nil {
			return err
		}
		last = jeSize(lh.n)
		mem += last
	}
	if nlp > 0 && last < streamPrealloc {
		mem += streamPrealloc - last
	}
	mem += nodes.mem()
	d.mark = d.rd.offset()
	length, err := d.readLen()
	if err != nil {
		return err
	}
	rec.Elements = int64(min(length, math.MaxInt64))
	ids := 2 // last_id
	if t >= tStreamListpacks2 {
		ids += 5 // first_id, max_deleted_entry_id, entries_added
	}
	for range ids {
		if _, err := d.readLen(); err != nil {
			return err
		}
	}
	groups, err := d.readLen()
	if err != nil {
		return err
	}
	consumerSize := int64(sizeStreamConsumer70)
	if t >= tStreamListpacks3 {
		consumerSize = sizeStreamConsumer72
	}
	for g := uint64(0); g < groups; g++ {
		if _, err := d.skipStr(); err != nil { // group name
			return err
		}
		ids := 2
		if t >= tStreamListpacks2 {
			ids++ // entries_read
		}
		for range ids {
			if _, err := d.readLen(); err != nil {
				return err
			}
		}
		d.mark = d.rd.offset()
		pel, err := d.readLen()
		if err != nil {
			return err
		}
		var gpel raxCounter
		for p := uint64(0); p < pel; p++ {
			id, err := d.rd.next(sizeStreamID)
			if err != nil {
				return err
			}
			gpel.add(id)
			if err := d.rd.skip(8); err != nil { // delivery time
				return err
			}
			if _, err := d.readLen(); err != nil { // delivery count
				return err
			}
		}
		mem += sizeStreamCG + gpel.mem() + sizeStreamNACK*gpel.n
		consumers, err := d.readLen()
		if err != nil {
			return err
		}
		for c := uint64(0); c < consumers; c++ {
			name, err := d.skipStr()
			if err != nil {
				return err
			}
			times := int64(8) // seen time
			if t >= tStreamListpacks3 {
				times += 8 // active time
			}
			if err := d.rd.skip(times); err != nil {
				return err
			}
			d.mark = d.rd.offset()
			cpel, err := d.readLen()
			if err != nil {
				return err
			}
			var cp raxCounter
			for p := uint64(0); p < cpel; p++ {
				id, err := d.rd.next(sizeStreamID)
				if err != nil {
					return err
				}
				cp.add(id)
			}
			mem += consumerSize + name + cp.mem()
		}
	}
	rec.MemoryEstimate = mem
	return nil
}
