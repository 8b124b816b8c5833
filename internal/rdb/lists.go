package rdb

import (
	"math"
)

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
	// node sizes a node as the loading server holds it: inner nodes
	// LZF-compressed under list-compress-depth.
	depth := uint64(max(d.opts.ListCompressDepth, 0))
	node := func(i uint64, sz, clen int64) int64 {
		if depth > 0 && i >= depth && i+depth < n && clen > 0 && sz >= minCompressBytes && clen+minCompressImprove < sz {
			return sizeQuicklistNode + jeSize(sizeQuicklistLZF+clen)
		}
		return sizeQuicklistNode + jeSize(sz)
	}
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
			mem += node(i, h.n, lzfLen(h))
			lastPacked, lastBytes = false, h.n
			continue
		}
		var b []byte
		var full, clen int64
		var complete bool
		if v2 && !d.collecting() {
			c, err := d.readLPCount()
			if err != nil {
				return err
			}
			if c.counted {
				rec.Elements += int64(c.n)
				mem += node(i, c.full, c.clen)
				lastPacked, lastBytes = true, c.full
				continue
			}
			b, full, complete, clen = c.b, c.full, c.complete, c.clen
		} else {
			h, err := d.readStrHdr()
			if err != nil {
				return err
			}
			if b, full, complete, err = d.readBlobBody(h); err != nil {
				return err
			}
			clen = lzfLen(h)
		}
		lastPacked, lastBytes = true, full
		if !complete {
			rec.Partial = true
			if c := headerCount(b, v2); c > 0 {
				rec.Elements += int64(c)
			}
			mem += node(i, full, clen)
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
			mem += node(i, full, clen)
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

// lzfLen is the compressed length of an LZF string, 0 for others.
func lzfLen(h strHdr) int64 {
	if h.kind == strLZF {
		return h.clen
	}
	return 0
}
