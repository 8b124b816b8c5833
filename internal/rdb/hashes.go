package rdb

import (
	"bytes"
	"encoding/binary"
	"math"
)

// readPlainHash reads RDB_TYPE_HASH (minExp 0), RDB_TYPE_HASH_METADATA
// (minExp from the file: TTLs are stored as ttl-minExp+1, 0 = none), its
// pre-GA form (minExp -1: TTLs are absolute) and Valkey 9's
// RDB_TYPE_HASH_2 (valkey: each field's value is followed by its expiry
// in milliseconds, -1 = none).
func (d *Decoder) readPlainHash(minExp int64, valkey bool) error {
	rec := &d.rec
	n, err := d.readLen()
	if err != nil {
		return err
	}
	// Short names and values are read whole: the listpack a small hash
	// becomes on load stores integers in fewer bytes.
	nameLimit := maxIntText
	if d.needFieldNames() {
		nameLimit = max(maxFieldName, d.collectLimit())
	}
	var elems, ttls int64
	cut := int64(0)
	if minExp != 0 || valkey {
		cut = d.fieldsExpireBefore()
	}
	lp := newLoadPack(maxListpackEntries, maxListpackValue)
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
		}
		// Names are kept up to nameLimit bytes (longer ones are sampled
		// cut); a watched or collected value is read, cut to its limit.
		fh, nameComplete, err := d.readElemCut(&d.e1, nameLimit)
		if err != nil {
			return err
		}
		wantVal := nameComplete && d.wantsFieldValue(d.e1)
		valLimit := maxIntText
		if wantVal {
			valLimit = max(maxWatchedValue, d.collectLimit(), maxIntText)
		}
		vh, valComplete, err := d.readElemCut(&d.e2, valLimit)
		if err != nil {
			return err
		}
		if valkey {
			p, err := d.rd.next(8)
			if err != nil {
				return err
			}
			if e := int64(binary.LittleEndian.Uint64(p)); e > 0 {
				exp = e
			}
		}
		if exp != 0 {
			ttls++
			if exp < cut {
				// Expired when the file was written: Redis leaves the
				// field out on load.
				rec.FieldsExpired++
				d.meta.FieldsExpired++
				continue
			}
			rec.FieldTTLs++
		}
		lp.add(fh, d.e1, nameComplete)
		lp.add(vh, d.e2, valComplete)
		if d.needFieldNames() {
			d.hashField(d.e1, d.e2, wantVal)
		}
		if nameComplete && valComplete {
			d.addElem(d.e1, d.e2, 0, exp)
		} else if d.collecting() {
			d.valOver = true
		}
		elems += sizeDictEntry + sdsAlloc(fh.n) + sdsAlloc(vh.n)
		if exp != 0 {
			elems += 8 // field TTL metadata (7.4)
		}
		rec.Elements++
	}
	if ttls == 0 && lp.fits(rec.Elements) {
		// Redis loads a small hash as a listpack.
		rec.MemoryEstimate = sizeRobj + jeSize(lp.bytes)
		return nil
	}
	rec.MemoryEstimate = sizeRobj + sizeDict + 8*dictSlots(rec.Elements) + elems
	return nil
}

// fieldsExpireBefore is the time (Unix milliseconds) before which a hash
// field's expiry had passed when the file was written: its ctime. 0 (no
// field is left out) without a ctime, or under Options.KeepExpiredFields.
// Redis leaves out the fields expired when it loads the file, later
// still; those expired since the file was written are not known here.
func (d *Decoder) fieldsExpireBefore() int64 {
	if d.opts.KeepExpiredFields {
		return 0
	}
	t, ok := d.meta.Created()
	if !ok {
		return 0
	}
	return t.UnixMilli()
}

// ---- compact encodings ------------------------------------------------------------

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
// pairsBlob does, and returns the number of fields. It checks each entry
// as lpCountFast does (its size, its backlen, that it ends before the
// terminator) on the one walk that reads the names, decoding a value only
// when its field is watched. !ok: something lpIter would reject, or an
// odd number of entries; the caller then drops what was sampled and
// walks with lpIter.
func (d *Decoder) lpHashFields(b []byte) (int, bool) {
	declared, err := lpHeader(b)
	if err != nil {
		return 0, false
	}
	sample, watch := d.fieldSample > 0, d.watch
	rec := &d.rec
	if sample && cap(d.fieldBuf) == 0 {
		d.fieldBuf = make([]byte, 0, 1024)
	}
	end := len(b) - 1
	n := 0
	var name []byte // the field whose value comes next
	for p := lpHeaderSize; p < end; n++ {
		size := lpQuickSize(b[p])
		if size == 0 {
			var ok bool
			if size, ok = lpEntryLen(b, p, end); !ok {
				return 0, false
			}
		}
		next := p + size + 1
		if size < 128 {
			// The entry, its backlen byte, then at least the terminator.
			if q := p + size; q >= end || int(b[q]&127) != size {
				return 0, false
			}
		} else {
			bl := backlenSize(size)
			if p+size+bl > end || decodeBacklen(b[p+size:p+size+bl]) != size {
				return 0, false
			}
			next = p + size + bl
		}
		if n%2 == 1 {
			if watch && d.isWatched(name) {
				v, _ := lpText(b, p, &d.e2)
				d.watchValue(name, v)
			}
			p = next
			continue
		}
		inPlace := true                       // name points into b, which lives until the next record
		if c := b[p]; c >= 0x80 && c < 0xC0 { // lpText for a short string
			name = b[p+1 : p+size]
		} else {
			name, _ = lpText(b, p, &d.e1)
			inPlace = c >= 0xE0 && c <= 0xF0 // 12- and 32-bit strings; integers are formatted into d.e1
		}
		if sample {
			switch {
			case len(rec.Fields) >= d.fieldSample:
				rec.MoreFields = true
			case inPlace:
				// Most names: sampled where they lie, not copied.
				rec.Fields = append(rec.Fields, name[:min(len(name), maxFieldName):min(len(name), maxFieldName)])
			default:
				// Copied where fieldBuf has room, which it never
				// reallocates here: the names sampled in place and
				// those copied before stay where they point.
				name = name[:min(len(name), maxFieldName)]
				if l := len(d.fieldBuf); len(name) <= cap(d.fieldBuf)-l {
					d.fieldBuf = append(d.fieldBuf, name...)
					rec.Fields = append(rec.Fields, d.fieldBuf[l:len(d.fieldBuf):len(d.fieldBuf)])
				} else {
					rec.Fields = append(rec.Fields, bytes.Clone(name))
				}
			}
		}
		p = next
	}
	if n%2 != 0 || declared >= 0 && declared != n {
		return 0, false
	}
	return n / 2, true
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
	cut := d.fieldsExpireBefore()
	var k, start, gone int // gone: bytes of the expired fields' entries
	var f, v elem
	for {
		if pos := k % 3; pos == 0 { // a triplet starts: where its bytes begin
			start = d.lp.p
		}
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
			if e.i != 0 && e.i < cut {
				// Expired when the file was written: Redis deletes the
				// field from the listpack on load.
				rec.FieldsExpired++
				d.meta.FieldsExpired++
				gone += d.lp.p - start
				break
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
	rec.Elements = int64(k/3) - rec.FieldsExpired
	if gone > 0 {
		rec.MemoryEstimate = sizeRobj + 16 + jeSize(full-int64(gone))
	}
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
