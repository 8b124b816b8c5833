package rdb

import (
	"strconv"
)

func (d *Decoder) readPlainSet() error {
	rec := &d.rec
	n, err := d.readLen()
	if err != nil {
		return err
	}
	limit := max(d.collectLimit(), maxIntText)
	var elems int64
	lp := newLoadPack(maxIntsetEntries, 0)
	for i := uint64(0); i < n; i++ {
		h, have, err := d.readElem(&d.e1, limit)
		if err != nil {
			return err
		}
		lp.add(h, d.e1, have)
		elems += sizeDictEntry + sdsAlloc(h.n)
		if have {
			d.addElem(d.e1, nil, 0, 0)
		} else if d.collecting() {
			d.valOver = true
		}
		rec.Elements++
	}
	if lp.allInt && rec.Elements <= maxIntsetEntries {
		// Redis 7.0 loads a small set of integers as an intset.
		rec.MemoryEstimate = sizeRobj + jeSize(intsetHeaderSize+lp.width*rec.Elements)
		return nil
	}
	if setListpack(d.meta.Version, rec.Elements, &lp) {
		rec.MemoryEstimate = sizeRobj + jeSize(lp.bytes)
		return nil
	}
	rec.MemoryEstimate = sizeRobj + sizeDict + 8*dictSlots(rec.Elements) + elems
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
