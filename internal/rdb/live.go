package rdb

// The memory model for values read live (the live audit's MEMORY USAGE
// where the value itself was read): the same sizes as a key loaded from a
// snapshot, for a value written by SET or HSET.

// ListpackEmpty is the bytes of an empty listpack: header and end byte.
const ListpackEmpty = lpEmptyBytes

// ListpackEntry is the bytes value s takes in a listpack (an integer
// stored as one, as Redis does).
func ListpackEntry(s []byte) int64 { return int64(lpEntrySize(s)) }

// StringMemory is MEMORY USAGE of a string key of keyLen bytes whose
// value SET stored as an integer, an embedded or a raw string.
func StringMemory(keyLen int, value []byte) int64 {
	_, isInt := parseInt64(value)
	return keyOverhead(int64(keyLen)) + stringMem(int64(len(value)), isInt)
}

// ListpackMemory is MEMORY USAGE of a hash or sorted set key of keyLen
// bytes held as a listpack of lpBytes bytes.
func ListpackMemory(keyLen int, lpBytes int64) int64 {
	return keyOverhead(int64(keyLen)) + sizeRobj + jeSize(lpBytes)
}

// Listpack limits of a hash (hash-max-listpack-entries and -value at
// their defaults): a hash past either is a hashtable.
const (
	ListpackMaxEntries = maxListpackEntries
	ListpackMaxValue   = maxListpackValue
)
