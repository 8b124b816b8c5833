package rdb

import (
	"github.com/keyguard/keyguard/internal/jsonkeys"
	"github.com/keyguard/keyguard/internal/valueform"
)

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
			// The form, judged once, says what jsonkeys.Object would: a
			// '{' first, or white space only.
			rec.Form = valueform.Of(body)
			if complete && len(body) <= d.opts.JSONRaw {
				if len(body) > 0 && (rec.Form == valueform.Object || rec.Form == valueform.Empty) {
					rec.JSON = body
				}
			} else {
				rec.JSONKeys = jsonkeys.Top(rec.JSONKeys, body, d.jsonKeys, &d.names)
			}
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
	if isInt && d.jsonKeys > 0 {
		rec.Form = valueform.Number
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
