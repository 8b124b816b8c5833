package rdb

import (
	"errors"
	"io"
)

// reader is a buffered reader that knows its offset in the input and keeps
// the CRC64 of every byte consumed. Slices it returns point into its buffer
// and are valid until the next call.
type reader struct {
	src   io.Reader
	buf   []byte
	r, w  int   // unread bytes are buf[r:w]
	base  int64 // input offset of buf[0]
	crc   uint64
	crcAt int // buf[:crcAt] is already folded into crc; crcAt <= r
	noCRC bool
	err   error // sticky error from src (io.EOF included)
}

const readerBufSize = 256 << 10

// minReaderBuf must hold the largest fixed-size read (a 255-byte score).
const minReaderBuf = 4 << 10

func (rd *reader) init(src io.Reader, noCRC bool) {
	size := readerBufSize
	// In-memory inputs smaller than the buffer get a buffer their size.
	if l, ok := src.(interface{ Len() int }); ok && l.Len()+1 < size {
		size = max(minReaderBuf, l.Len()+1)
	}
	*rd = reader{src: src, buf: make([]byte, size), noCRC: noCRC}
}

// offset is the input offset of the next unread byte.
func (rd *reader) offset() int64 { return rd.base + int64(rd.r) }

// checksum folds everything consumed so far and returns the CRC64.
func (rd *reader) checksum() uint64 {
	rd.foldCRC()
	return rd.crc
}

func (rd *reader) foldCRC() {
	if !rd.noCRC && rd.crcAt < rd.r {
		rd.crc = crc64Update(rd.crc, rd.buf[rd.crcAt:rd.r])
	}
	rd.crcAt = rd.r
}

// fill makes at least n (<= len(buf)) bytes available, or returns
// io.ErrUnexpectedEOF (or the source's error) when the input ends first.
func (rd *reader) fill(n int) error {
	if rd.w-rd.r >= n {
		return nil
	}
	rd.foldCRC()
	if rd.r > 0 {
		copy(rd.buf, rd.buf[rd.r:rd.w])
		rd.base += int64(rd.r)
		rd.w -= rd.r
		rd.r, rd.crcAt = 0, 0
	}
	for rd.w < n {
		if rd.err != nil {
			return rd.readErr()
		}
		m, err := rd.src.Read(rd.buf[rd.w:])
		rd.w += m
		if err != nil {
			rd.err = err
		} else if m == 0 {
			// A Reader returning 0, nil forever must not hang us.
			rd.err = io.ErrNoProgress
		}
	}
	return nil
}

func (rd *reader) readErr() error {
	if rd.err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return rd.err
}

// byte and next are split in a fast path (the bytes are in the buffer)
// and a call for the rest; the decoder's hottest paths repeat the fast
// path inline.
func (rd *reader) byte() (byte, error) {
	if rd.r < rd.w {
		b := rd.buf[rd.r]
		rd.r++
		return b, nil
	}
	return rd.byteSlow()
}

func (rd *reader) byteSlow() (byte, error) {
	if err := rd.fill(1); err != nil {
		return 0, err
	}
	b := rd.buf[rd.r]
	rd.r++
	return b, nil
}

// next returns the next n bytes (n <= len(buf)).
func (rd *reader) next(n int) ([]byte, error) {
	if r := rd.r; n <= rd.w-r {
		rd.r = r + n
		return rd.buf[r : r+n : r+n], nil
	}
	return rd.nextSlow(n)
}

func (rd *reader) nextSlow(n int) ([]byte, error) {
	if err := rd.fill(n); err != nil {
		return nil, err
	}
	p := rd.buf[rd.r : rd.r+n : rd.r+n]
	rd.r += n
	return p, nil
}

// peek returns the next n bytes (n <= len(buf)) without consuming them.
// When the input ends first it consumes what there is, as appendN does.
func (rd *reader) peek(n int) ([]byte, error) {
	if rd.w-rd.r < n {
		if err := rd.fill(n); err != nil {
			rd.r = rd.w
			return nil, err
		}
	}
	return rd.buf[rd.r : rd.r+n : rd.r+n], nil
}

// nextAll is next for string bodies: when the input ends first it
// consumes what there is, as appendN does, so that the error's offset is
// where the input stopped.
func (rd *reader) nextAll(n int) ([]byte, error) {
	p, err := rd.next(n)
	if err != nil {
		rd.r = rd.w
	}
	return p, err
}

// view returns the next n bytes without copying them when they fit in the
// buffer, else appends them to spill. The slice is valid until the next
// read.
func (rd *reader) view(n int64, spill []byte) ([]byte, []byte, error) {
	if n <= int64(len(rd.buf)) {
		p, err := rd.nextAll(int(n))
		return p, spill, err
	}
	spill, err := rd.appendN(spill[:0], n)
	return spill, spill, err
}

// readFull reads exactly len(dst) bytes into dst.
func (rd *reader) readFull(dst []byte) error {
	for len(dst) > 0 {
		if rd.r >= rd.w {
			if err := rd.fill(1); err != nil {
				return err
			}
		}
		n := copy(dst, rd.buf[rd.r:rd.w])
		rd.r += n
		dst = dst[n:]
	}
	return nil
}

// appendN appends exactly n bytes to dst. The slice grows as data arrives,
// so a bogus length in a short file fails with io.ErrUnexpectedEOF instead
// of allocating n bytes up front.
func (rd *reader) appendN(dst []byte, n int64) ([]byte, error) {
	for n > 0 {
		if rd.r >= rd.w {
			if err := rd.fill(1); err != nil {
				return dst, err
			}
		}
		avail := int64(rd.w - rd.r)
		if avail > n {
			avail = n
		}
		dst = append(dst, rd.buf[rd.r:rd.r+int(avail)]...)
		rd.r += int(avail)
		n -= avail
	}
	return dst, nil
}

// skip consumes n bytes (still checksummed).
func (rd *reader) skip(n int64) error {
	for n > 0 {
		if rd.r >= rd.w {
			if err := rd.fill(1); err != nil {
				return err
			}
		}
		avail := int64(rd.w - rd.r)
		if avail > n {
			avail = n
		}
		rd.r += int(avail)
		n -= avail
	}
	return nil
}

// atEOF reports whether the input has no more bytes.
func (rd *reader) atEOF() bool {
	if rd.r < rd.w {
		return false
	}
	err := rd.fill(1)
	return errors.Is(err, io.ErrUnexpectedEOF)
}
