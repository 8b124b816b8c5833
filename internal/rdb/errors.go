package rdb

import (
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Sentinel causes carried by *FormatError; compare with errors.Is.
// Truncated input is reported with io.ErrUnexpectedEOF as the cause.
var (
	// ErrChecksum: the CRC64 trailer does not match the file's content.
	ErrChecksum = errors.New("checksum mismatch")
	// ErrUnsupported: a version, opcode, object type or module encoding this
	// decoder does not read.
	ErrUnsupported = errors.New("unsupported")
	// ErrCorrupt: bytes that cannot be what Redis wrote (bad length
	// encoding, listpack that does not add up, LZF that does not inflate).
	ErrCorrupt = errors.New("corrupt data")
)

// FormatError reports where and why decoding stopped. Offset is the byte
// offset in the input at which the problem was detected; Key is the key
// whose value was being decoded, if any (truncated to 64 bytes).
type FormatError struct {
	Offset int64
	Key    []byte
	Msg    string
	Err    error
}

func (e *FormatError) Error() string {
	s := "rdb: offset " + strconv.FormatInt(e.Offset, 10)
	if e.Key != nil {
		s += ": key " + strconv.Quote(string(e.Key))
	}
	s += ": " + e.Msg
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	if h := e.hint(); h != "" {
		s += " (" + h + ")"
	}
	return s
}

func (e *FormatError) Unwrap() error { return e.Err }

// hint says what a user can do about the error.
func (e *FormatError) hint() string {
	switch {
	case errors.Is(e.Err, io.ErrUnexpectedEOF):
		return "the file is truncated: copy it again or wait until the save finished; records before this offset were decoded"
	case errors.Is(e.Err, ErrChecksum):
		return "the file is damaged: take a fresh snapshot (BGSAVE) and copy it again"
	case errors.Is(e.Err, ErrUnsupported):
		return "this decoder reads RDB versions 1-12 (Redis 2.x-7.4, Valkey 7-8) and Valkey 9.0's VALKEY080; check which server wrote the file"
	case errors.Is(e.Err, ErrCorrupt):
		return "the file is damaged or not an RDB file; try redis-check-rdb on it"
	}
	return ""
}

func keyForError(k []byte) []byte {
	if k == nil {
		return nil
	}
	if len(k) > 64 {
		k = k[:64]
	}
	return append([]byte{}, k...)
}

func corruptf(format string, args ...any) error {
	return &decodeErr{msg: fmt.Sprintf(format, args...), cause: ErrCorrupt}
}

func unsupportedf(format string, args ...any) error {
	return &decodeErr{msg: fmt.Sprintf(format, args...), cause: ErrUnsupported}
}

// decodeErr is the internal error raised deep inside the decoder; Next
// turns it into a *FormatError with the offset and key.
type decodeErr struct {
	msg   string
	cause error
}

func (e *decodeErr) Error() string { return e.msg + ": " + e.cause.Error() }
func (e *decodeErr) Unwrap() error { return e.cause }
