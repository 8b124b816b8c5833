package inventory

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// BenchmarkReportTop builds the report's entries of a list of 100,000
// top keys taken from 400,000 offers in no order of size.
func BenchmarkReportTop(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	a := &Aggregator{top: newTopBuf[topVal](100_000), topDet: &topDetails{}}
	det := a.topDet.of("hash", "cache:product:detail:{productNo}", "node")
	for range 400_000 {
		key := "cache:product:detail:p" + strconv.Itoa(rng.IntN(10_000_000))
		size := int64(200)
		if rng.IntN(10) == 0 {
			size = int64(700 + rng.IntN(30))
		}
		a.top.push(listKey{score: size, hash: keyHash(key), keyLen: int32(len(key))}, key, topVal{ttl: -1, det: det})
	}
	for b.Loop() {
		a.reportTop(false)
	}
}
