package inventory

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// BenchmarkTopKeysUnique offers 1M keys, each once, at 3,000 sizes (most
// keys tie with the threshold's size), to a top list of 100,000, with and
// without the promise of unique keys (Options.UniqueKeys: no table of the
// buffer at each settle).
func BenchmarkTopKeysUnique(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	items := make([]offer, 1_000_000)
	for i := range items {
		key := "order:order:" + strconv.Itoa(rng.IntN(1<<40)) + ":base"
		items[i] = offer{score: int64(rng.IntN(3000) * 8), key: key, keyLen: len(key)}
	}
	for _, unique := range []bool{false, true} {
		b.Run("unique="+strconv.FormatBool(unique), func(b *testing.B) {
			for b.Loop() {
				a := &Aggregator{top: newTopBuf[topVal](100_000)}
				a.top.unique = unique
				for _, it := range items {
					if h, ok := beats(&a.top, it.score, it.key); ok {
						a.top.push(listKey{score: it.score, hash: h, keyLen: int32(it.keyLen)}, it.key, topVal{})
					}
				}
				a.top.list()
			}
		})
	}
}
