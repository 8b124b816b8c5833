package rediscmd

import (
	"encoding"
	"net"
	"strconv"
	"strings"
	"time"
	"unsafe"
)

// numBufSize holds any number or RFC 3339 time go-redis formats.
const numBufSize = 64

// wire returns the bytes go-redis writes for argument a (its
// internal/proto Writer.WriteArg): strings and byte slices as they are,
// integers and bools in decimal, floats with strconv 'f' -1, durations as
// nanoseconds, times as RFC 3339 with nanoseconds, BinaryMarshaler's
// output. Numbers and times are formatted into buf; ok is false for a type
// go-redis refuses to send.
func wire(a any, buf *[numBufSize]byte) (s string, ok bool) {
	switch v := a.(type) {
	case string:
		return v, true
	case []byte:
		return bytesString(v), true
	case nil:
		return "", true
	case *string:
		if v == nil {
			return "", true
		}
		return *v, true
	case int:
		return appendInt(buf, int64(v)), true
	case int64:
		return appendInt(buf, v), true
	case float64:
		return appendFloat(buf, v), true
	case bool:
		if v {
			return "1", true
		}
		return "0", true
	case time.Duration:
		return appendInt(buf, v.Nanoseconds()), true
	case int8:
		return appendInt(buf, int64(v)), true
	case int16:
		return appendInt(buf, int64(v)), true
	case int32:
		return appendInt(buf, int64(v)), true
	case uint:
		return appendUint(buf, uint64(v)), true
	case uint8:
		return appendUint(buf, uint64(v)), true
	case uint16:
		return appendUint(buf, uint64(v)), true
	case uint32:
		return appendUint(buf, uint64(v)), true
	case uint64:
		return appendUint(buf, v), true
	case uintptr:
		return appendUint(buf, uint64(v)), true
	case float32:
		return appendFloat(buf, float64(v)), true
	case *int:
		return appendInt(buf, int64(deref(v))), true
	case *int8:
		return appendInt(buf, int64(deref(v))), true
	case *int16:
		return appendInt(buf, int64(deref(v))), true
	case *int32:
		return appendInt(buf, int64(deref(v))), true
	case *int64:
		return appendInt(buf, deref(v)), true
	case *uint:
		return appendUint(buf, uint64(deref(v))), true
	case *uint8:
		return appendUint(buf, uint64(deref(v))), true
	case *uint16:
		return appendUint(buf, uint64(deref(v))), true
	case *uint32:
		return appendUint(buf, uint64(deref(v))), true
	case *uint64:
		return appendUint(buf, deref(v)), true
	case *uintptr:
		return appendUint(buf, uint64(deref(v))), true
	case *float32:
		return appendFloat(buf, float64(deref(v))), true
	case *float64:
		return appendFloat(buf, deref(v)), true
	case *bool:
		if deref(v) {
			return "1", true
		}
		return "0", true
	case *time.Duration:
		return appendInt(buf, deref(v).Nanoseconds()), true
	case time.Time:
		return bytesString(v.AppendFormat(buf[:0], time.RFC3339Nano)), true
	case *time.Time:
		return bytesString(deref(v).AppendFormat(buf[:0], time.RFC3339Nano)), true
	case encoding.BinaryMarshaler:
		return marshal(v)
	case net.IP:
		return bytesString(v), true
	}
	return "", false
}

// marshal is out of line so that only this rare path allocates.
//
//go:noinline
func marshal(m encoding.BinaryMarshaler) (s string, ok bool) {
	defer func() {
		if recover() != nil { // a nil pointer receiver, for example
			s, ok = "", false
		}
	}()
	b, err := m.MarshalBinary()
	if err != nil {
		return "", false
	}
	return string(b), true
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func bytesString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

func appendInt(buf *[numBufSize]byte, n int64) string {
	return bytesString(strconv.AppendInt(buf[:0], n, 10))
}

func appendUint(buf *[numBufSize]byte, n uint64) string {
	return bytesString(strconv.AppendUint(buf[:0], n, 10))
}

func appendFloat(buf *[numBufSize]byte, f float64) string {
	return bytesString(strconv.AppendFloat(buf[:0], f, 'f', -1, 64))
}

// ArgText returns the bytes go-redis sends for command argument a (its
// Writer.WriteArg): strings and byte slices as they are, integers and
// bools in decimal, floats with strconv 'f' -1, durations in nanoseconds,
// times in RFC 3339 with nanoseconds, what a BinaryMarshaler makes; ok is
// false for a type go-redis refuses to send. Strings and byte slices
// (net.IP too), the usual keys, field names and values, are returned
// without copying: the text of a []byte argument is the caller's memory.
// Anything else is formatted into a new string.
func ArgText(a any) (string, bool) {
	switch v := a.(type) {
	case string:
		return v, true
	case []byte:
		return bytesString(v), true
	case net.IP:
		return bytesString(v), true
	}
	return formatKey(a)
}

//go:noinline
func formatKey(a any) (string, bool) {
	var buf [numBufSize]byte
	s, ok := wire(a, &buf)
	if !ok {
		return "", false
	}
	return strings.Clone(s), true
}

// keywordIs reports whether argument a matches the option keyword kw the
// way the server's strcasecmp does: ASCII case-insensitive, and the
// argument ends at its first NUL byte. kw must not contain NUL.
func keywordIs(a any, kw string) bool {
	switch v := a.(type) {
	case string:
		return cStringIs(v, kw)
	case []byte:
		return cStringIs(bytesString(v), kw)
	case int, int64, float64, bool, time.Duration, int8, int16, int32,
		uint, uint8, uint16, uint32, uint64, uintptr, float32:
		// Decimal digits, '-', '.', "NaN" or "+Inf": never an option keyword.
		return false
	}
	var buf [numBufSize]byte
	s, ok := wire(a, &buf)
	return ok && cStringIs(s, kw)
}

func cStringIs(s, kw string) bool {
	if len(s) < len(kw) || (len(s) > len(kw) && s[len(kw)] != 0) {
		return false
	}
	return equalFold(s[:len(kw)], kw)
}

// argLen is the length of argument a on the wire.
func argLen(a any) int {
	var buf [numBufSize]byte
	s, _ := wire(a, &buf)
	return len(s)
}

// argInt parses argument a as the server's string2ll does: an optional
// '-', no leading zeros or '+', no spaces, in range of int64, under 21
// bytes.
func argInt(a any) (int64, bool) {
	var buf [numBufSize]byte
	s, ok := wire(a, &buf)
	if !ok {
		return 0, false
	}
	return string2ll(s)
}

func string2ll(s string) (int64, bool) {
	if len(s) == 0 || len(s) >= 21 {
		return 0, false
	}
	if s == "0" {
		return 0, true
	}
	neg := false
	if s[0] == '-' {
		neg = true
		s = s[1:]
		if s == "" {
			return 0, false
		}
	}
	if s[0] < '1' || s[0] > '9' {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if v > (1<<64-1)/10 {
			return 0, false
		}
		v *= 10
		if v > 1<<64-1-uint64(c-'0') {
			return 0, false
		}
		v += uint64(c - '0')
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return int64(-v), true
	}
	if v > 1<<63-1 {
		return 0, false
	}
	return int64(v), true
}

// argAtoi reads argument a with C atoi (glibc: (int)strtol(s, NULL, 10)):
// leading white space, a sign, digits up to the first other byte,
// saturated to int64 and then truncated to a 32-bit int.
func argAtoi(a any) int {
	var buf [numBufSize]byte
	s, ok := wire(a, &buf)
	if !ok {
		return 0
	}
	return atoi(s)
}

func atoi(s string) int {
	i := 0
	for i < len(s) && (s[i] == ' ' || ('\t' <= s[i] && s[i] <= '\r')) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	var v uint64
	sat := false
	for ; i < len(s) && '0' <= s[i] && s[i] <= '9'; i++ {
		if v > (1<<63)/10 {
			sat = true
			continue
		}
		v = v*10 + uint64(s[i]-'0')
		if v > 1<<63 {
			sat = true
		}
	}
	var n int64
	switch {
	case sat && neg:
		n = -1 << 63
	case sat:
		n = 1<<63 - 1
	case neg:
		n = int64(-v) // v <= 1<<63 here
	case v > 1<<63-1:
		n = 1<<63 - 1
	default:
		n = int64(v)
	}
	return int(int32(n))
}
