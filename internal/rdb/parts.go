package rdb

import (
	"errors"
)

// ErrPartEnd is what Next returns at the end of a part of the file
// (Options.Until): the record boundary where the next part begins, at
// Offset. It is not sticky: calling Next again goes on past the boundary,
// for when the next part's decoder did not begin there (Began).
//
// A file cut into parts is read by one decoder per part, side by side:
// part i has From = cut[i-1] and Until = cut[i]. A record boundary is
// where a key's first opcode (expiry, LRU/LFU, or its type) or a file
// opcode (SELECTDB, RESIZEDB, AUX…) starts, so both sides of a cut
// find the same one: the first at or after the cut. The decoder of a
// later part skims the file up to it by lengths alone, which is a few
// times faster than decoding it, and so it cannot tell every damaged
// value from a good one: when an earlier part stops on an error before
// its end, the later parts' records are not the file's (a decoder
// reading the whole file would have stopped there), and the caller must
// drop them.
var ErrPartEnd = errors.New("rdb: end of this part of the file")

// Began reports the offset of the record boundary where this decoder's
// part began (Options.From), once it skimmed that far; false while it
// has not, or when the input ended or broke before it (then the part has
// no records, and the previous part reads on to the end).
func (d *Decoder) Began() (int64, bool) {
	if d.opts.From <= 0 {
		return 0, true
	}
	return d.began, d.began >= 0
}

// skipRecord consumes the key and value of a record of type t before
// Options.From: the same bytes readValue would, read by their lengths.
func (d *Decoder) skipRecord(t byte) error {
	if !d.skipShort() {
		if _, err := d.skipStr(); err != nil { // the key
			return err
		}
	}
	switch t {
	case tString, tHashZipmap, tListZiplist, tSetIntset, tZSetZiplist, tHashZiplist,
		tHashListpack, tZSetListpack, tSetListpack, tHashListpackExPreGA:
		if d.skipShort() {
			return nil
		}
		_, err := d.skipStr()
		return err
	case tHashListpackEx:
		if err := d.rd.skip(8); err != nil {
			return err
		}
		_, err := d.skipStr()
		return err
	case tList, tSet, tHash, tListQuicklist, tListQuicklist2, tZSet, tZSet2:
		n, err := d.readLen()
		if err != nil {
			return err
		}
		for range n {
			switch t {
			case tListQuicklist2:
				c, err := d.readLen()
				if err != nil {
					return err
				}
				if c != 1 && c != 2 {
					return corruptf("quicklist node container %d, want 1 (plain) or 2 (packed)", c)
				}
			case tHash:
				if _, err := d.skipStr(); err != nil {
					return err
				}
			}
			if _, err := d.skipStr(); err != nil {
				return err
			}
			switch t {
			case tZSet2:
				if err := d.rd.skip(8); err != nil {
					return err
				}
			case tZSet:
				l, err := d.rd.byte()
				if err != nil {
					return err
				}
				if l < 253 {
					if err := d.rd.skip(int64(l)); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	// Streams, modules, hashes with field TTLs: as readValue reads them,
	// looking for nothing.
	d.look(0)
	err := d.readValue(t)
	d.look(LookAll)
	return err
}

// skipShort is skipStr for the common string: raw, under 16 KiB, and
// already in the buffer with its length. It consumes nothing and returns
// false for any other, which skipStr then reads.
func (d *Decoder) skipShort() bool {
	rd := &d.rd
	r := rd.r
	if r+1 >= rd.w {
		return false
	}
	var n int
	switch b := rd.buf[r]; b >> 6 {
	case 0:
		n = 1 + int(b)
	case 1:
		n = 2 + (int(b&0x3f)<<8 | int(rd.buf[r+1]))
	default:
		return false
	}
	if n > rd.w-r {
		return false
	}
	d.mark = rd.base + int64(r) // as readStrHdr
	rd.r = r + n
	return true
}
