package keybuild

import (
	"fmt"
	"strconv"
	"testing"
	"unicode/utf8"
)

// A 4-segment key with an int and a text placeholder:
// "order:{orderId:int}:item:{sku}".
var (
	benchID  int64 = 1234567890
	benchSKU       = "sku-000123"
	sink     string
)

func BenchmarkBuild4Segments(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		k, err := Build(&orderItem, Int(benchID), String(benchSKU))
		if err != nil {
			b.Fatal(err)
		}
		sink = k.String()
	}
}

func BenchmarkSprintf4Segments(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sink = fmt.Sprintf("order:%d:item:%s", benchID, benchSKU)
	}
}

func BenchmarkConcat4Segments(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sink = "order:" + strconv.FormatInt(benchID, 10) + ":item:" + benchSKU
	}
}

// BenchmarkConcatValidated4Segments is + concatenation with the checks
// Build makes on the text value, written by hand: not empty, no control
// character, separator or brace, valid UTF-8, within max_key_bytes.
func BenchmarkConcatValidated4Segments(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if !validSegment(benchSKU) {
			b.Fatal("invalid")
		}
		k := "order:" + strconv.FormatInt(benchID, 10) + ":item:" + benchSKU
		if len(k) > 64 {
			b.Fatal("too long")
		}
		sink = k
	}
}

func validSegment(s string) bool {
	if s == "" {
		return false
	}
	ascii := true
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c == 0x7f || c == ':' || c == '{' || c == '}':
			return false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return ascii || utf8.ValidString(s)
}

func BenchmarkBuildHash(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		k, err := Build(&hashed, String("13800138000"))
		if err != nil {
			b.Fatal(err)
		}
		sink = k.String()
	}
}
