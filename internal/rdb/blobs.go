package rdb

import (
	"encoding/binary"
)

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
