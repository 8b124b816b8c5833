// Package keyslot is Redis Cluster's key-to-slot function: the hash tag
// and CRC16 (XMODEM) modulo 16384, as CLUSTER KEYSLOT computes it.
//
// It imports no package of this module.
package keyslot

import "strings"

// Slots is the number of Redis Cluster hash slots.
const Slots = 16384

// Slot returns the hash slot of key: the CRC16 of its hash tag's content,
// or of the whole key when it has none, modulo Slots.
func Slot(key string) int {
	if s, e, ok := Tag(key); ok {
		key = key[s:e]
	}
	return int(CRC16(0, key) % Slots)
}

// Tag returns the bounds of the content of key's hash tag: the text
// between the first '{' and the first '}' after it, when not empty (an
// empty tag, or none, hashes the whole key).
func Tag(key string) (start, end int, ok bool) {
	s := strings.IndexByte(key, '{')
	if s < 0 {
		return 0, 0, false
	}
	e := strings.IndexByte(key[s+1:], '}')
	if e <= 0 {
		return 0, 0, false
	}
	return s + 1, s + 1 + e, true
}

// CRC16 continues the CRC16 (XMODEM, polynomial 0x1021) c over s: start
// from 0; a CRC kept after a prefix is continued over what follows.
func CRC16[T string | []byte](c uint16, s T) uint16 {
	for i := 0; i < len(s); i++ {
		c = c<<8 ^ crcTable[byte(c>>8)^s[i]]
	}
	return c
}

// crcTable is the CRC16 by high byte.
var crcTable = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()
