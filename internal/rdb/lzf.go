package rdb

// LZF decompression (the format of liblzf, which Redis uses for strings
// when rdbcompression is on). The compressed stream is a sequence of
// chunks, each starting with a control byte:
//
//	000LLLLL                 literal run of LLLLL+1 bytes that follow
//	LLLOOOOO [LLLLLLLL] OOOOOOOO
//	                         back reference: length LLL+2 (LLL=7 means an
//	                         extra length byte is added), offset
//	                         (OOOOO<<8 | OOOOOOOO)+1 bytes back in the output
//
// Every copy is bounds-checked against both buffers; a stream that would
// write past want bytes or read before the output start is corrupt.

// lzfDecompress inflates in into out[:0] and returns out[:want]. out must
// have capacity for want bytes.
func lzfDecompress(in, out []byte, want int) ([]byte, error) {
	out = out[:want]
	ip, op := 0, 0
	for ip < len(in) {
		ctrl := int(in[ip])
		ip++
		if ctrl < 1<<5 {
			n := ctrl + 1
			if ip+n > len(in) || op+n > want {
				return nil, corruptf("LZF literal run overflows (at input %d, output %d of %d)", ip, op, want)
			}
			copy(out[op:op+n], in[ip:ip+n])
			ip += n
			op += n
			continue
		}
		n := ctrl >> 5
		if n == 7 {
			if ip >= len(in) {
				return nil, corruptf("LZF back reference cut short")
			}
			n += int(in[ip])
			ip++
		}
		if ip >= len(in) {
			return nil, corruptf("LZF back reference cut short")
		}
		ref := op - (ctrl&0x1f)<<8 - 1 - int(in[ip])
		ip++
		n += 2
		if ref < 0 || op+n > want {
			return nil, corruptf("LZF back reference out of range (at output %d of %d)", op, want)
		}
		if op-ref >= n {
			copy(out[op:op+n], out[ref:ref+n])
			op += n
		} else {
			// Overlapping copy repeats a pattern; go byte by byte.
			for range n {
				out[op] = out[ref]
				op++
				ref++
			}
		}
	}
	if op != want {
		return nil, corruptf("LZF inflated to %d bytes, header says %d", op, want)
	}
	return out, nil
}

// lzfPrefix inflates only the first up to max bytes of the stream: enough
// to read a listpack, ziplist or intset header without holding a huge blob.
// Back references only point into output already produced, so a prefix
// needs no more input than it covers.
func lzfPrefix(in []byte, max int) []byte { return lzfPrefixAppend(nil, in, max) }

// lzfPrefixAppend is lzfPrefix appending to dst (reused by the decoder).
// The stream may be cut or corrupt: inflating stops quietly where it
// stops making sense.
func lzfPrefixAppend(dst, in []byte, max int) []byte {
	base := len(dst)
	ip := 0
	for ip < len(in) && len(dst)-base < max {
		ctrl := int(in[ip])
		ip++
		if ctrl < 1<<5 {
			n := ctrl + 1
			if ip+n > len(in) {
				n = len(in) - ip
			}
			dst = append(dst, in[ip:ip+n]...)
			ip += n
			continue
		}
		n := ctrl >> 5
		if n == 7 {
			if ip >= len(in) {
				break
			}
			n += int(in[ip])
			ip++
		}
		if ip >= len(in) {
			break
		}
		ref := len(dst) - (ctrl&0x1f)<<8 - 1 - int(in[ip])
		ip++
		if ref < base {
			break
		}
		for range n + 2 {
			dst = append(dst, dst[ref])
			ref++
		}
	}
	if len(dst)-base > max {
		dst = dst[:base+max]
	}
	return dst
}
