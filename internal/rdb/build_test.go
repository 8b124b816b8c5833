package rdb

// A small RDB writer for tests, written from the format description in
// Redis's rdb.h/rdb.c, listpack.c, ziplist.c, intset.c and zipmap.c. It
// produces the byte fixtures for encodings Redis 7 can no longer write and
// the synthetic benchmark input.

import (
	"encoding/binary"
	"fmt"
	"math"
)

type rdbWriter struct {
	b   []byte
	ver int
}

func newRDB(ver int) *rdbWriter {
	return &rdbWriter{b: fmt.Appendf(nil, "REDIS%04d", ver), ver: ver}
}

func (w *rdbWriter) byte(c byte)       { w.b = append(w.b, c) }
func (w *rdbWriter) raw(p []byte)      { w.b = append(w.b, p...) }
func (w *rdbWriter) u32le(v uint32)    { w.b = binary.LittleEndian.AppendUint32(w.b, v) }
func (w *rdbWriter) u64le(v uint64)    { w.b = binary.LittleEndian.AppendUint64(w.b, v) }
func (w *rdbWriter) f64le(v float64)   { w.u64le(math.Float64bits(v)) }
func (w *rdbWriter) length(n uint64)   { w.b = appendLen(w.b, n) }
func (w *rdbWriter) str(s string)      { w.length(uint64(len(s))); w.b = append(w.b, s...) }
func (w *rdbWriter) bytesStr(p []byte) { w.length(uint64(len(p))); w.b = append(w.b, p...) }

// appendLen is rdbSaveLen: 00xxxxxx, 01xxxxxx xxxxxxxx, 0x80 + uint32 BE,
// 0x81 + uint64 BE.
func appendLen(b []byte, n uint64) []byte {
	switch {
	case n < 1<<6:
		return append(b, byte(n))
	case n < 1<<14:
		return append(b, byte(n>>8)|0x40, byte(n))
	case n <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(b, 0x80), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(b, 0x81), n)
}

// intStr writes an integer-encoded string (RDB_ENC_INT8/16/32).
func (w *rdbWriter) intStr(v int64) {
	switch {
	case v >= math.MinInt8 && v <= math.MaxInt8:
		w.b = append(w.b, 0xC0, byte(v))
	case v >= math.MinInt16 && v <= math.MaxInt16:
		w.b = binary.LittleEndian.AppendUint16(append(w.b, 0xC1), uint16(v))
	default:
		w.b = binary.LittleEndian.AppendUint32(append(w.b, 0xC2), uint32(v))
	}
}

// lzfStr writes s LZF-compressed (RDB_ENC_LZF: clen, len, data).
func (w *rdbWriter) lzfStr(s []byte) {
	c := lzfCompress(s)
	w.b = append(w.b, 0xC3)
	w.length(uint64(len(c)))
	w.length(uint64(len(s)))
	w.raw(c)
}

func (w *rdbWriter) aux(k, v string) { w.byte(opAux); w.str(k); w.str(v) }
func (w *rdbWriter) selectDB(n int)  { w.byte(opSelectDB); w.length(uint64(n)) }
func (w *rdbWriter) resize(k, e int) { w.byte(opResizeDB); w.length(uint64(k)); w.length(uint64(e)) }
func (w *rdbWriter) expireMS(ms int64) {
	w.byte(opExpireTimeMS)
	w.u64le(uint64(ms))
}
func (w *rdbWriter) key(t byte, k string) { w.byte(t); w.str(k) }

// finish appends EOF and, for version >= 5, the CRC64 trailer (or 0).
func (w *rdbWriter) finish(withCRC bool) []byte {
	w.byte(opEOF)
	if w.ver >= 5 {
		var sum uint64
		if withCRC {
			sum = CRC64(w.b)
		}
		w.u64le(sum)
	}
	return w.b
}

// lzfCompress is a small greedy LZF compressor (3-byte hash matches,
// literal runs of up to 32 bytes), enough to produce real back references.
func lzfCompress(in []byte) []byte {
	var out []byte
	var lit []byte
	flush := func() {
		for len(lit) > 0 {
			n := min(len(lit), 32)
			out = append(out, byte(n-1))
			out = append(out, lit[:n]...)
			lit = lit[n:]
		}
		lit = lit[:0]
	}
	last := map[[3]byte]int{}
	for i := 0; i < len(in); {
		if i+3 <= len(in) {
			k := [3]byte{in[i], in[i+1], in[i+2]}
			if j, ok := last[k]; ok && i-j-1 < 1<<13 {
				n := 0
				for i+n < len(in) && in[j+n] == in[i+n] && n < 264 {
					n++
				}
				if n >= 3 {
					flush()
					off := i - j - 1
					l := n - 2
					if l < 7 {
						out = append(out, byte(l<<5|off>>8), byte(off))
					} else {
						out = append(out, byte(7<<5|off>>8), byte(l-7), byte(off))
					}
					for k := i; k < i+n && k+3 <= len(in); k++ {
						last[[3]byte{in[k], in[k+1], in[k+2]}] = k
					}
					i += n
					continue
				}
			}
			last[k] = i
		}
		lit = append(lit, in[i])
		i++
	}
	flush()
	return out
}

// ---- compact encodings --------------------------------------------------------

// lpBuild encodes a listpack; elements are string or int64 (ints are stored
// with the smallest integer encoding, as lpAppendInteger does).
func lpBuild(elems ...any) []byte {
	b := make([]byte, lpHeaderSize)
	for _, e := range elems {
		start := len(b)
		switch v := e.(type) {
		case int64:
			switch {
			case v >= 0 && v <= 127:
				b = append(b, byte(v))
			case v >= -4096 && v <= 4095:
				u := uint16(v) & 0x1fff
				b = append(b, 0xC0|byte(u>>8), byte(u))
			case v >= math.MinInt16 && v <= math.MaxInt16:
				b = binary.LittleEndian.AppendUint16(append(b, 0xF1), uint16(v))
			case v >= -1<<23 && v < 1<<23:
				u := uint32(v)
				b = append(b, 0xF2, byte(u), byte(u>>8), byte(u>>16))
			case v >= math.MinInt32 && v <= math.MaxInt32:
				b = binary.LittleEndian.AppendUint32(append(b, 0xF3), uint32(v))
			default:
				b = binary.LittleEndian.AppendUint64(append(b, 0xF4), uint64(v))
			}
		case string:
			l := len(v)
			switch {
			case l < 64:
				b = append(b, 0x80|byte(l))
			case l < 4096:
				b = append(b, 0xE0|byte(l>>8), byte(l))
			default:
				b = binary.LittleEndian.AppendUint32(append(b, 0xF0), uint32(l))
			}
			b = append(b, v...)
		default:
			panic(fmt.Sprintf("lpBuild: %T", e))
		}
		b = appendBacklen(b, len(b)-start)
	}
	b = append(b, 0xFF)
	binary.LittleEndian.PutUint32(b, uint32(len(b)))
	n := len(elems)
	if n > 65534 {
		n = 65535
	}
	binary.LittleEndian.PutUint16(b[4:], uint16(n))
	return b
}

func appendBacklen(b []byte, l int) []byte {
	switch {
	case l <= 127:
		return append(b, byte(l))
	case l < 16383:
		return append(b, byte(l>>7), byte(l&127)|128)
	case l < 2097151:
		return append(b, byte(l>>14), byte(l>>7&127)|128, byte(l&127)|128)
	case l < 268435455:
		return append(b, byte(l>>21), byte(l>>14&127)|128, byte(l>>7&127)|128, byte(l&127)|128)
	}
	return append(b, byte(l>>28), byte(l>>21&127)|128, byte(l>>14&127)|128, byte(l>>7&127)|128, byte(l&127)|128)
}

// zlBuild encodes a ziplist (Redis 2.6+ encodings); elements are string or
// int64.
func zlBuild(elems ...any) []byte {
	b := make([]byte, zlHeaderSize)
	prev, tail := 0, zlHeaderSize
	for _, e := range elems {
		start := len(b)
		tail = start
		if prev < 254 {
			b = append(b, byte(prev))
		} else {
			b = binary.LittleEndian.AppendUint32(append(b, 0xFE), uint32(prev))
		}
		switch v := e.(type) {
		case int64:
			switch {
			case v >= 0 && v <= 12:
				b = append(b, 0xF1+byte(v))
			case v >= math.MinInt8 && v <= math.MaxInt8:
				b = append(b, 0xFE, byte(v))
			case v >= math.MinInt16 && v <= math.MaxInt16:
				b = binary.LittleEndian.AppendUint16(append(b, 0xC0), uint16(v))
			case v >= -1<<23 && v < 1<<23:
				u := uint32(v)
				b = append(b, 0xF0, byte(u), byte(u>>8), byte(u>>16))
			case v >= math.MinInt32 && v <= math.MaxInt32:
				b = binary.LittleEndian.AppendUint32(append(b, 0xD0), uint32(v))
			default:
				b = binary.LittleEndian.AppendUint64(append(b, 0xE0), uint64(v))
			}
		case string:
			l := len(v)
			switch {
			case l <= 63:
				b = append(b, byte(l))
			case l <= 16383:
				b = append(b, 0x40|byte(l>>8), byte(l))
			default:
				b = binary.BigEndian.AppendUint32(append(b, 0x80), uint32(l))
			}
			b = append(b, v...)
		default:
			panic(fmt.Sprintf("zlBuild: %T", e))
		}
		prev = len(b) - start
	}
	b = append(b, 0xFF)
	binary.LittleEndian.PutUint32(b, uint32(len(b)))
	binary.LittleEndian.PutUint32(b[4:], uint32(tail))
	n := len(elems)
	if n > 65534 {
		n = 65535
	}
	binary.LittleEndian.PutUint16(b[8:], uint16(n))
	return b
}

// intsetBuild encodes sorted values with element size enc (2, 4 or 8).
func intsetBuild(enc int, vals ...int64) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(enc))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(vals)))
	for _, v := range vals {
		switch enc {
		case 2:
			b = binary.LittleEndian.AppendUint16(b, uint16(v))
		case 4:
			b = binary.LittleEndian.AppendUint32(b, uint32(v))
		default:
			b = binary.LittleEndian.AppendUint64(b, uint64(v))
		}
	}
	return b
}

// zmBuild encodes a zipmap from field/value pairs, with free bytes after
// each value to exercise the "free" field.
func zmBuild(free int, kv ...string) []byte {
	zmLen := func(b []byte, l int) []byte {
		if l < 254 {
			return append(b, byte(l))
		}
		return binary.LittleEndian.AppendUint32(append(b, 254), uint32(l))
	}
	n := len(kv) / 2
	b := []byte{byte(min(n, 254))}
	for i := 0; i+1 < len(kv); i += 2 {
		b = zmLen(b, len(kv[i]))
		b = append(b, kv[i]...)
		b = zmLen(b, len(kv[i+1]))
		b = append(b, byte(free))
		b = append(b, kv[i+1]...)
		b = append(b, make([]byte, free)...)
	}
	return append(b, 0xFF)
}
