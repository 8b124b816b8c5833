package keyslot

import (
	"strings"
	"testing"
)

func TestSlot(t *testing.T) {
	// Values from the Redis Cluster specification and CLUSTER KEYSLOT.
	for key, want := range map[string]int{
		"123456789": 0x31C3, "foo": 12182, "{user1000}.following": Slot("user1000"),
		"foo{}{bar}": Slot("foo{}{bar}"), "foo{{bar}}zap": Slot("{bar"), "foo{bar}{zap}": Slot("bar"), "": 0,
	} {
		if got := Slot(key); got != want {
			t.Errorf("Slot(%q) = %d, want %d", key, got, want)
		}
	}
	if Slot("foo{}{bar}") == Slot("bar") {
		t.Error("an empty hash tag is not a hash tag")
	}
	if a, b := CRC16(CRC16(0, "1234"), []byte("56789")), CRC16(0, "123456789"); a != b {
		t.Errorf("CRC16 continued over two parts = %#x, over the whole %#x", a, b)
	}
}

// FuzzSlot holds the table CRC to the bitwise definition.
func FuzzSlot(f *testing.F) {
	f.Add("123456789")
	f.Add("a{b}c")
	f.Fuzz(func(t *testing.T, key string) {
		tag := key
		if i := strings.IndexByte(key, '{'); i >= 0 {
			if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
				tag = key[i+1 : i+1+j]
			}
		}
		var crc uint16
		for i := 0; i < len(tag); i++ {
			crc ^= uint16(tag[i]) << 8
			for range 8 {
				if crc&0x8000 != 0 {
					crc = crc<<1 ^ 0x1021
				} else {
					crc <<= 1
				}
			}
		}
		if got := Slot(key); got != int(crc)&16383 {
			t.Fatalf("Slot(%q) = %d, bitwise %d", key, got, int(crc)&16383)
		}
	})
}
