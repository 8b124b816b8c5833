package rdb

import (
	"encoding/binary"
	"math"
	"strconv"
)

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
	limit := max(d.collectLimit(), maxIntText)
	var elems int64
	lp := newLoadPack(maxListpackEntries, maxListpackValue)
	for i := uint64(0); i < n; i++ {
		h, have, err := d.readElem(&d.e1, limit)
		if err != nil {
			return err
		}
		score, err := d.readScore(binaryScore)
		if err != nil {
			return err
		}
		lp.add(h, d.e1, have)
		lp.addScore(score)
		elems += sdsAlloc(h.n) + sizeDictEntry + sizeZslNodeAvg
		if have {
			d.addElem(d.e1, nil, score, 0)
		} else if d.collecting() {
			d.valOver = true
		}
		rec.Elements++
	}
	if lp.fits(rec.Elements) {
		// Redis converts a small sorted set to a listpack after loading it.
		rec.MemoryEstimate = sizeRobj + jeSize(lp.bytes)
		return nil
	}
	rec.MemoryEstimate = sizeRobj + sizeZset + sizeZskiplist + sizeDict + 8*dictSlots(rec.Elements) + sizeZslHeader + elems
	return nil
}
