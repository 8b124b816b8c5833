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
	a := &Aggregator{top: newTopBuf(100_000, topWorse, topRank, topID, topName)}
	det := a.topDet.of("hash", "cache:product:detail:{productNo}", "node")
	for range 400_000 {
		key := "cache:product:detail:p" + strconv.Itoa(rng.IntN(10_000_000))
		size := int64(200)
		if rng.IntN(10) == 0 {
			size = int64(700 + rng.IntN(30))
		}
		a.pushTop(topItem{bytes: size, key: key, keyLen: int32(len(key)), hash: keyHash(key), ttl: -1, det: det})
	}
	for b.Loop() {
		a.reportTop(false)
	}
}
