package rdb

import (
	"encoding/binary"
	"strconv"
)

// Walkers for the compact encodings Redis serializes as one opaque string:
// listpack (Redis 7), ziplist (Redis 2.6-6.2), intset and zipmap (Redis
// 2.2-2.4). Each iterator validates every length against the blob before
// touching bytes, so arbitrary input yields an error, never a panic.

// elem is one decoded element of a compact encoding: either a string (s)
// or an integer (i, isInt).
type elem struct {
	s     []byte
	i     int64
	isInt bool
}

// ---- listpack -------------------------------------------------------------
//
//	<total-bytes uint32 LE> <num-elements uint16 LE, 65535 = unknown>
//	<entry>... <0xFF>
//	entry = <encoding+data> <backlen: size of encoding+data, 1-5 bytes>
//
//	0xxxxxxx                   7-bit unsigned int
//	10xxxxxx + data            string, 6-bit length
//	110xxxxx yyyyyyyy          13-bit signed int
//	1110xxxx yyyyyyyy + data   string, 12-bit length (big-endian bits)
//	11110000 <uint32 LE> data  string, 32-bit length
//	11110001 int16 LE, 11110010 int24 LE, 11110011 int32 LE, 11110100 int64 LE
//	11111111                   end of listpack

const lpHeaderSize = 6

type lpIter struct {
	b []byte
	p int
	n int // entries seen
}

// lpHeader validates the listpack header and returns the element count it
// declares (-1 when unknown).
func lpHeader(b []byte) (int, error) {
	if len(b) < lpHeaderSize+1 {
		return 0, corruptf("listpack of %d bytes is shorter than its header", len(b))
	}
	if total := binary.LittleEndian.Uint32(b); int64(total) != int64(len(b)) {
		return 0, corruptf("listpack header says %d bytes, blob has %d", total, len(b))
	}
	if b[len(b)-1] != 0xFF {
		return 0, corruptf("listpack does not end with 0xFF")
	}
	n := int(binary.LittleEndian.Uint16(b[4:]))
	if n == 65535 {
		n = -1
	}
	return n, nil
}

func newLPIter(b []byte) (*lpIter, int, error) {
	n, err := lpHeader(b)
	if err != nil {
		return nil, 0, err
	}
	return &lpIter{b: b, p: lpHeaderSize}, n, nil
}

func (it *lpIter) reset(b []byte) { it.b, it.p, it.n = b, lpHeaderSize, 0 }

// next returns the next element; ok is false at the end marker.
func (it *lpIter) next() (e elem, ok bool, err error) {
	b, p := it.b, it.p
	end := len(b) - 1 // index of the 0xFF terminator
	if p >= end {
		if p == end {
			return e, false, nil
		}
		return e, false, corruptf("listpack entry runs past the end")
	}
	c := b[p]
	var size int // encoding + data
	switch {
	case c&0x80 == 0:
		e.i, e.isInt, size = int64(c&0x7f), true, 1
	case c&0xC0 == 0x80:
		l := int(c & 0x3f)
		size = 1 + l
		if p+size > end {
			return e, false, corruptf("listpack string runs past the end")
		}
		e.s = b[p+1 : p+size]
	case c&0xE0 == 0xC0:
		if p+2 > end {
			return e, false, corruptf("listpack int runs past the end")
		}
		u := uint64(c&0x1f)<<8 | uint64(b[p+1])
		e.i, e.isInt, size = int64(u<<51)>>51, true, 2
	case c&0xF0 == 0xE0:
		if p+2 > end {
			return e, false, corruptf("listpack string header runs past the end")
		}
		l := int(c&0x0f)<<8 | int(b[p+1])
		size = 2 + l
		if p+size > end {
			return e, false, corruptf("listpack string runs past the end")
		}
		e.s = b[p+2 : p+size]
	default:
		switch c {
		case 0xF0:
			if p+5 > end {
				return e, false, corruptf("listpack string header runs past the end")
			}
			l := int64(binary.LittleEndian.Uint32(b[p+1:]))
			if int64(p)+5+l > int64(end) {
				return e, false, corruptf("listpack string of %d bytes runs past the end", l)
			}
			size = 5 + int(l)
			e.s = b[p+5 : p+size]
		case 0xF1, 0xF2, 0xF3, 0xF4:
			w := [...]int{2, 3, 4, 8}[c-0xF1]
			size = 1 + w
			if p+size > end {
				return e, false, corruptf("listpack int runs past the end")
			}
			var u uint64
			for k := w; k >= 1; k-- {
				u = u<<8 | uint64(b[p+k])
			}
			shift := uint(64 - 8*w)
			e.i, e.isInt = int64(u<<shift)>>shift, true
		case 0xFF:
			return e, false, corruptf("listpack end marker before the last byte")
		default:
			return e, false, corruptf("listpack entry with unknown encoding byte 0x%02x", c)
		}
	}
	bl := backlenSize(size)
	if p+size+bl > end {
		return e, false, corruptf("listpack entry backlen runs past the end")
	}
	if decodeBacklen(b[p+size:p+size+bl]) != size {
		return e, false, corruptf("listpack entry backlen does not match its size %d", size)
	}
	it.p = p + size + bl
	it.n++
	return e, true, nil
}

func backlenSize(l int) int {
	switch {
	case l <= 127:
		return 1
	case l < 16383:
		return 2
	case l < 2097151:
		return 3
	case l < 268435455:
		return 4
	}
	return 5
}

// decodeBacklen reads a backlen stored most-significant group first, every
// byte but the first with its high bit set.
func decodeBacklen(p []byte) int {
	v := 0
	for _, c := range p {
		v = v<<7 | int(c&127)
	}
	return v
}

// lpEntrySize is the number of bytes value s takes as a listpack entry
// (including backlen), applying the integer conversion lpAppend does. Used to
// estimate the listpack Redis 7 builds from older encodings.
func lpEntrySize(s []byte) int {
	if v, ok := parseInt64(s); ok {
		return lpIntEntrySize(v)
	}
	return lpStrEntrySize(len(s))
}

func lpStrEntrySize(l int) int {
	var n int
	switch {
	case l < 64:
		n = 1 + l
	case l < 4096:
		n = 2 + l
	default:
		n = 5 + l
	}
	return n + backlenSize(n)
}

func lpIntEntrySize(v int64) int {
	var n int
	switch {
	case v >= 0 && v <= 127:
		n = 1
	case v >= -4096 && v <= 4095:
		n = 2
	case v >= -32768 && v <= 32767:
		n = 3
	case v >= -8388608 && v <= 8388607:
		n = 4
	case v >= -2147483648 && v <= 2147483647:
		n = 5
	default:
		n = 9
	}
	return n + 1
}

func (e elem) lpSize() int {
	if e.isInt {
		return lpIntEntrySize(e.i)
	}
	return lpEntrySize(e.s)
}

// parseInt64 is Redis's string2ll: a canonical decimal integer (no '+', no
// leading zeros, no spaces) that fits in int64.
func parseInt64(s []byte) (int64, bool) {
	if len(s) == 0 || len(s) > 20 {
		return 0, false
	}
	if len(s) == 1 && s[0] == '0' {
		return 0, true
	}
	neg := false
	p := s
	if p[0] == '-' {
		neg = true
		p = p[1:]
		if len(p) == 0 {
			return 0, false
		}
	}
	if p[0] < '1' || p[0] > '9' {
		return 0, false
	}
	var v uint64
	for _, c := range p {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (1<<64-1-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return -int64(v), true
	}
	if v > 1<<63-1 {
		return 0, false
	}
	return int64(v), true
}

// ---- ziplist ---------------------------------------------------------------
//
//	<zlbytes uint32 LE> <zltail uint32 LE> <zllen uint16 LE, 65535 = unknown>
//	<entry>... <0xFF>
//	entry = <prevlen: 1 byte, or 0xFE + uint32 LE> <encoding> <data>
//
//	00pppppp                       string, 6-bit length
//	01pppppp qqqqqqqq              string, 14-bit big-endian length
//	10000000 <uint32 BE>           string, 32-bit length
//	11000000 int16, 11010000 int32, 11100000 int64, 11110000 int24,
//	11111110 int8 (all little-endian)
//	1111xxxx                       immediate 0..12 (xxxx-1), xxxx in 1..13
//	11111111                       end of ziplist

const zlHeaderSize = 10

type zlIter struct {
	b []byte
	p int
	n int
}

func zlHeader(b []byte) (int, error) {
	if len(b) < zlHeaderSize+1 {
		return 0, corruptf("ziplist of %d bytes is shorter than its header", len(b))
	}
	if total := binary.LittleEndian.Uint32(b); int64(total) != int64(len(b)) {
		return 0, corruptf("ziplist header says %d bytes, blob has %d", total, len(b))
	}
	if b[len(b)-1] != 0xFF {
		return 0, corruptf("ziplist does not end with 0xFF")
	}
	n := int(binary.LittleEndian.Uint16(b[8:]))
	if n == 65535 {
		n = -1
	}
	return n, nil
}

func newZLIter(b []byte) (*zlIter, int, error) {
	n, err := zlHeader(b)
	if err != nil {
		return nil, 0, err
	}
	return &zlIter{b: b, p: zlHeaderSize}, n, nil
}

func (it *zlIter) next() (e elem, ok bool, err error) {
	b, p := it.b, it.p
	end := len(b) - 1
	if p >= end {
		if p == end {
			return e, false, nil
		}
		return e, false, corruptf("ziplist entry runs past the end")
	}
	// prevlen
	if b[p] == 0xFE {
		p += 5
	} else {
		p++
	}
	if p >= end {
		return e, false, corruptf("ziplist entry header runs past the end")
	}
	c := b[p]
	switch c >> 6 {
	case 0:
		l := int(c & 0x3f)
		if p+1+l > end {
			return e, false, corruptf("ziplist string runs past the end")
		}
		e.s = b[p+1 : p+1+l]
		p += 1 + l
	case 1:
		if p+2 > end {
			return e, false, corruptf("ziplist string header runs past the end")
		}
		l := int(c&0x3f)<<8 | int(b[p+1])
		if p+2+l > end {
			return e, false, corruptf("ziplist string runs past the end")
		}
		e.s = b[p+2 : p+2+l]
		p += 2 + l
	case 2:
		if c != 0x80 {
			return e, false, corruptf("ziplist entry with unknown encoding byte 0x%02x", c)
		}
		if p+5 > end {
			return e, false, corruptf("ziplist string header runs past the end")
		}
		l := int64(binary.BigEndian.Uint32(b[p+1:]))
		if int64(p)+5+l > int64(end) {
			return e, false, corruptf("ziplist string of %d bytes runs past the end", l)
		}
		e.s = b[p+5 : p+5+int(l)]
		p += 5 + int(l)
	default:
		var w int
		switch c {
		case 0xC0:
			w = 2
		case 0xD0:
			w = 4
		case 0xE0:
			w = 8
		case 0xF0:
			w = 3
		case 0xFE:
			w = 1
		case 0xFF:
			return e, false, corruptf("ziplist end marker before the last byte")
		default:
			if c >= 0xF1 && c <= 0xFD {
				e.i, e.isInt = int64(c&0x0f)-1, true
				it.p = p + 1
				it.n++
				return e, true, nil
			}
			return e, false, corruptf("ziplist entry with unknown encoding byte 0x%02x", c)
		}
		if p+1+w > end {
			return e, false, corruptf("ziplist int runs past the end")
		}
		var u uint64
		for k := w; k >= 1; k-- {
			u = u<<8 | uint64(b[p+k])
		}
		shift := uint(64 - 8*w)
		e.i, e.isInt = int64(u<<shift)>>shift, true
		p += 1 + w
	}
	it.p = p
	it.n++
	return e, true, nil
}

// ---- intset ----------------------------------------------------------------
//
//	<encoding uint32 LE: 2, 4 or 8> <length uint32 LE> <length ints LE, sorted>

func intsetHeader(b []byte) (enc, n int, err error) {
	if len(b) < 8 {
		return 0, 0, corruptf("intset of %d bytes is shorter than its header", len(b))
	}
	enc = int(binary.LittleEndian.Uint32(b))
	if enc != 2 && enc != 4 && enc != 8 {
		return 0, 0, corruptf("intset with element size %d", enc)
	}
	l := int64(binary.LittleEndian.Uint32(b[4:]))
	return enc, int(l), nil
}

func intsetCheck(b []byte) (enc, n int, err error) {
	enc, n, err = intsetHeader(b)
	if err != nil {
		return 0, 0, err
	}
	if int64(8)+int64(n)*int64(enc) != int64(len(b)) {
		return 0, 0, corruptf("intset says %d elements of %d bytes, blob has %d bytes", n, enc, len(b))
	}
	return enc, n, nil
}

func intsetGet(b []byte, enc, i int) int64 {
	p := 8 + i*enc
	switch enc {
	case 2:
		return int64(int16(binary.LittleEndian.Uint16(b[p:])))
	case 4:
		return int64(int32(binary.LittleEndian.Uint32(b[p:])))
	}
	return int64(binary.LittleEndian.Uint64(b[p:]))
}

// ---- zipmap ----------------------------------------------------------------
//
//	<zmlen 1 byte, 254 = unknown> (<len>key<len><free>value<free bytes>)... <0xFF>
//	len = 1 byte if < 254, else 254 followed by uint32 (little-endian hosts)

type zmIter struct {
	b []byte
	p int
	n int
}

func newZMIter(b []byte) (*zmIter, error) {
	if len(b) < 2 {
		return nil, corruptf("zipmap of %d bytes is too short", len(b))
	}
	if b[len(b)-1] != 0xFF {
		return nil, corruptf("zipmap does not end with 0xFF")
	}
	if b[0] == 0xFF {
		// Redis stops counting at 254 ("count it"); it never writes 255.
		return nil, corruptf("zipmap count byte 255, want at most 254")
	}
	return &zmIter{b: b, p: 1}, nil
}

func (it *zmIter) readLen() (int, error) {
	b, p := it.b, it.p
	if p >= len(b) {
		return 0, corruptf("zipmap length runs past the end")
	}
	switch c := b[p]; {
	case c < 254:
		it.p++
		return int(c), nil
	case c == 254:
		if p+5 > len(b) {
			return 0, corruptf("zipmap length runs past the end")
		}
		it.p += 5
		l := int64(binary.LittleEndian.Uint32(b[p+1:]))
		if l > int64(len(b)) {
			return 0, corruptf("zipmap length %d runs past the end", l)
		}
		return int(l), nil
	}
	return -1, nil // 255: end
}

// next returns a field and its value.
func (it *zmIter) next() (field, value []byte, ok bool, err error) {
	l, err := it.readLen()
	if err != nil || l < 0 {
		if err == nil && it.p != len(it.b)-1 {
			err = corruptf("zipmap end marker before the last byte")
		}
		return nil, nil, false, err
	}
	if it.p+l > len(it.b)-1 {
		return nil, nil, false, corruptf("zipmap key runs past the end")
	}
	field = it.b[it.p : it.p+l]
	it.p += l
	vl, err := it.readLen()
	if err != nil {
		return nil, nil, false, err
	}
	if vl < 0 {
		return nil, nil, false, corruptf("zipmap key without value")
	}
	if it.p >= len(it.b)-1 {
		return nil, nil, false, corruptf("zipmap free byte runs past the end")
	}
	free := int(it.b[it.p])
	it.p++
	if it.p+vl+free > len(it.b)-1 {
		return nil, nil, false, corruptf("zipmap value runs past the end")
	}
	value = it.b[it.p : it.p+vl]
	it.p += vl + free
	it.n++
	return field, value, true, nil
}

// ---- fast listpack walks ------------------------------------------------------
//
// The decoder's hot paths walk listpacks without producing elements they
// do not need. They accept exactly what lpIter accepts; on anything else
// they report !ok and the caller walks again with lpIter, which names the
// problem. TestLPCountFast, TestLPHashFieldsMutated and TestFastPaths
// hold them to that.

// lpCountFast returns the number of entries of listpack b after checking
// its header, every entry's length and backlen, and the declared count.
// The common encodings are sized by lpQuickSize, inlined: a call per entry
// would cost more than the walk.
func lpCountFast(b []byte) (int, bool) {
	declared, err := lpHeader(b)
	if err != nil {
		return 0, false
	}
	end := len(b) - 1
	p, n := lpHeaderSize, 0
	for p < end {
		size := lpQuickSize(b[p])
		if size == 0 {
			var ok bool
			if size, ok = lpEntryLen(b, p, end); !ok {
				return 0, false
			}
		}
		if size < 128 {
			// p+size < end: the entry, its backlen byte, then at least the
			// terminator.
			if q := p + size; q >= end || int(b[q]&127) != size {
				return 0, false
			}
			p += size + 1
		} else {
			bl := backlenSize(size)
			if p+size+bl > end || decodeBacklen(b[p+size:p+size+bl]) != size {
				return 0, false
			}
			p += size + bl
		}
		n++
	}
	return n, declared < 0 || declared == n
}

// lpText returns the entry at p of a listpack lpCountFast accepted as the
// text Redis returns for it (an integer is rendered in *buf), and the
// position of the next entry.
func lpText(b []byte, p int, buf *[]byte) ([]byte, int) {
	c := b[p]
	if c >= 0x80 && c < 0xC0 {
		size := 1 + int(c&0x3f)
		return b[p+1 : p+size], p + size + backlenSize(size)
	}
	size, _ := lpEntryLen(b, p, len(b)-1)
	e := lpElemAt(b, p, size)
	if e.isInt {
		*buf = strconv.AppendInt((*buf)[:0], e.i, 10)
		e.s = *buf
	}
	return e.s, p + size + backlenSize(size)
}

// lpQuickSize is the encoding+data size of an entry of the common
// encodings, from its first byte c (small integers, short strings, 16- to
// 32-bit integers), without a bounds check; 0 for the others, which
// lpEntryLen sizes. Small enough to be inlined into the walks.
func lpQuickSize(c byte) int {
	switch {
	case c < 0x80:
		return 1
	case c < 0xC0:
		return 1 + int(c&0x3f)
	case c < 0xE0:
		return 2
	case c >= 0xF1 && c <= 0xF3: // 16-, 24-, 32-bit integers
		return int(c) - 0xF1 + 3
	}
	return 0
}

// lpEntryLen is the encoding+data size of the entry at b[p], checked to
// end before end (the terminator's index).
func lpEntryLen(b []byte, p, end int) (int, bool) {
	c := b[p]
	switch {
	case c < 0x80:
		return 1, true
	case c < 0xC0:
		size := 1 + int(c&0x3f)
		return size, p+size <= end
	case c < 0xE0:
		return 2, p+2 <= end
	case c < 0xF0:
		if p+2 > end {
			return 0, false
		}
		size := 2 + (int(c&0x0f)<<8 | int(b[p+1]))
		return size, p+size <= end
	case c == 0xF0:
		if p+5 > end {
			return 0, false
		}
		l := int64(binary.LittleEndian.Uint32(b[p+1:]))
		if int64(p)+5+l > int64(end) {
			return 0, false
		}
		return 5 + int(l), true
	case c <= 0xF3: // 16-, 24-, 32-bit integers
		size := int(c) - 0xF1 + 3
		return size, p+size <= end
	case c == 0xF4: // 64-bit integer
		return 9, p+9 <= end
	}
	return 0, false
}

// lpElemAt decodes the entry at b[p] of encoding+data size size, as
// lpEntryLen checked it.
func lpElemAt(b []byte, p, size int) elem {
	var e elem
	switch c := b[p]; {
	case c < 0x80:
		e.i, e.isInt = int64(c), true
	case c < 0xC0:
		e.s = b[p+1 : p+size]
	case c < 0xE0:
		u := uint64(c&0x1f)<<8 | uint64(b[p+1])
		e.i, e.isInt = int64(u<<51)>>51, true
	case c < 0xF0:
		e.s = b[p+2 : p+size]
	case c == 0xF0:
		e.s = b[p+5 : p+size]
	case c == 0xF1:
		e.i, e.isInt = int64(int16(binary.LittleEndian.Uint16(b[p+1:p+3]))), true
	case c == 0xF2:
		u := uint32(b[p+1]) | uint32(b[p+2])<<8 | uint32(b[p+3])<<16
		e.i, e.isInt = int64(int32(u<<8)>>8), true
	case c == 0xF3:
		e.i, e.isInt = int64(int32(binary.LittleEndian.Uint32(b[p+1:p+5]))), true
	default:
		e.i, e.isInt = int64(binary.LittleEndian.Uint64(b[p+1:p+9])), true
	}
	return e
}
