package hotkey

import (
	"encoding/binary"
	"time"
)

// A value with logical expiry is stored as an envelope: a 5-byte marker,
// the soft deadline (unix ms, 8 bytes big-endian), then the value. The
// key keeps the template's TTL as a safety net; the soft deadline is
// what decides a refresh.
const (
	envelope    = "\x00kgx\x01"
	envelopeLen = len(envelope) + 8
)

// encodeLogical wraps v with the soft deadline soft.
func encodeLogical(v string, soft time.Time) string {
	b := make([]byte, envelopeLen, envelopeLen+len(v))
	copy(b, envelope)
	binary.BigEndian.PutUint64(b[len(envelope):], uint64(soft.UnixMilli()))
	return string(append(b, v...))
}

// decodeLogical unwraps an envelope: the value and its soft deadline in
// unix ms. A string that is not an envelope is returned whole with
// deadline 0 (already due) and ok false, so that a value written around
// the SDK gets refreshed into one.
func decodeLogical(s string) (v string, softMS int64, ok bool) {
	if len(s) < envelopeLen || s[:len(envelope)] != envelope {
		return s, 0, false
	}
	var ms uint64
	for i := len(envelope); i < envelopeLen; i++ {
		ms = ms<<8 | uint64(s[i])
	}
	if ms > 1<<62 {
		return s, 0, false
	}
	return s[envelopeLen:], int64(ms), true
}
