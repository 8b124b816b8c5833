package registry

import (
	"strings"
	"testing"
)

// quietValuesSpelled is quietValues written out as its comment says, to
// hold the byte table to it.
func quietValuesSpelled(key string) bool {
	run := 0
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c >= '0' && c <= '9' {
			if run++; run >= 11 {
				return false
			}
			continue
		}
		run = 0
		if c <= ' ' || c >= 0x7f || strings.IndexByte("\"'`{}<>@", c) >= 0 {
			return false
		}
	}
	return true
}

func TestQuietValuesTable(t *testing.T) {
	for c := range 256 {
		for _, k := range []string{string(rune(0)) + "x", "a" + string([]byte{byte(c)}) + "b", "1234567890" + string([]byte{byte(c)})} {
			k = strings.TrimPrefix(k, "\x00")
			if got, want := quietValues(k), quietValuesSpelled(k); got != want {
				t.Errorf("quietValues(%q) = %v, want %v", k, got, want)
			}
		}
	}
	for _, k := range []string{"", "order:1234567890", "order:12345678901", "a1234567890b1234567890", "x@y", "a b", "é", "cart:{1}"} {
		if got, want := quietValues(k), quietValuesSpelled(k); got != want {
			t.Errorf("quietValues(%q) = %v, want %v", k, got, want)
		}
	}
}

func FuzzQuietValues(f *testing.F) {
	f.Add("order:12345678901:x")
	f.Add("a\x00b")
	f.Fuzz(func(t *testing.T, k string) {
		if got, want := quietValues(k), quietValuesSpelled(k); got != want {
			t.Errorf("quietValues(%q) = %v, want %v", k, got, want)
		}
	})
}

// TestQuietValuesRandom compares quietValues with its spelled-out form on
// keys drawn from digits and the bytes each branch looks at, at every
// alignment of digit runs across 8-byte words.
func TestQuietValuesRandom(t *testing.T) {
	const alphabet = "0123456789012345678901234567890123456789abcXYZ:_-\"'`{}@ \x00\x1f\x7f\x80\xff~!/"
	seed := uint64(1)
	next := func(n int) int {
		seed = seed*6364136223846793005 + 1442695040888963407
		return int(seed>>33) % n
	}
	for range 200000 {
		b := make([]byte, next(41))
		for i := range b {
			b[i] = alphabet[next(len(alphabet))]
		}
		k := string(b)
		if got, want := quietValues(k), quietValuesSpelled(k); got != want {
			t.Fatalf("quietValues(%q) = %v, want %v", k, got, want)
		}
	}
}
