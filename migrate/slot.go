package migrate

import "strings"

// Slot returns the Redis Cluster hash slot of key: CRC16 (XMODEM) of its
// hash tag, or of the whole key when it has none, modulo 16384. The hash
// tag is the text between the first '{' and the first '}' after it, when
// that text is not empty.
func Slot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	var crc uint16
	for i := 0; i < len(key); i++ {
		crc = crc<<8 ^ crc16Table[byte(crc>>8)^key[i]]
	}
	return int(crc) & 16383
}

// crc16Table is CRC16-CCITT (XMODEM, polynomial 0x1021) by high byte.
var crc16Table = func() (t [256]uint16) {
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
