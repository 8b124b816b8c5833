package rdb

import (
	"errors"
	"io"
	"math"
)

// errHeadEnd is what next returns to Head at the first key.
var errHeadEnd = errors.New("rdb: first key")

// keyOpcode reports whether t begins a key's record: an expiry, an
// LRU/LFU hint or the value's type.
func keyOpcode(t byte) bool {
	switch t {
	case opExpireTime, opExpireTimeMS, opIdle, opFreq:
		return true
	}
	return isObjectType(t)
}

// Head reads an RDB file's header and what comes before its first key
// (AUX fields, functions, module data, RESIZEDB and SELECTDB), decoding
// no key: what the file says of the server that wrote it, for a caller
// that compares files before reading them. keys reports whether a key
// follows; false when the file ends first (it holds no key). A file
// that breaks before its first key returns the error.
func Head(r io.Reader) (meta *Meta, keys bool, err error) {
	d := NewDecoder(r, Options{SkipChecksum: true})
	d.head, d.until = true, math.MaxInt64
	rec, err := d.next()
	switch {
	case err == errHeadEnd || err == nil && rec != nil:
		return &d.meta, true, nil
	case err == io.EOF:
		return &d.meta, false, nil
	}
	return &d.meta, false, d.wrap(err)
}
