package rdb

import (
	"math"
)

func (d *Decoder) readStream(t byte) error {
	rec := &d.rec
	nlp, err := d.readLen()
	if err != nil {
		return err
	}
	// Each node as loaded: Redis allocates exactly the listpack's bytes
	// (the server that wrote the file may hold more in its last node,
	// which XADD preallocates).
	mem := int64(sizeRobj + sizeStream)
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
		mem += jeSize(lh.n)
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
