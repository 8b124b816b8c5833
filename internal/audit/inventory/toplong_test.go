package inventory

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestTopBufLong holds lists of thousands of keys (FuzzTopBuf's are short)
// to the reference, over many settles, at scores that tie (all one, a
// few), spread over the whole range of int64 (negatives, around powers
// of two, the largest) and LFU counters, with keys offered again (in
// another database, at another score) and each once.
func TestTopBufLong(t *testing.T) {
	dists := map[string]func(r *rand.Rand) int64{
		"one score":  func(*rand.Rand) int64 { return 4096 },
		"few scores": func(r *rand.Rand) int64 { return int64(r.IntN(4)) * 1000 },
		"counters":   func(r *rand.Rand) int64 { return int64(r.IntN(256)) },
		"wide": func(r *rand.Rand) int64 {
			switch r.IntN(8) {
			case 0:
				return -int64(r.IntN(1000))
			case 1:
				return math.MaxInt64 - int64(r.IntN(3))
			case 2:
				e := 8 + r.IntN(54)
				return 1<<e - 1 + int64(r.IntN(3)) // around a power of two
			}
			return int64(math.Exp(r.Float64() * 30))
		},
	}
	for name, score := range dists {
		for _, n := range []int{2000, 8000} {
			for _, unique := range []bool{false, true} {
				t.Run(name+"/"+strconv.Itoa(n)+"/unique="+strconv.FormatBool(unique), func(t *testing.T) {
					rng := rand.New(rand.NewPCG(uint64(n), 1))
					top := newTopBuf[int](n)
					top.unique = unique
					best := map[itemID]offer{}
					var offers []offer
					for i := range 30_000 {
						k := i
						if !unique && i%7 == 0 {
							k = rng.IntN(i + 1) // a key again, at another score
						}
						key := "order:" + strconv.Itoa(k)
						offerTracked(&top, offer{score: score(rng), key: key, keyLen: len(key), hash: keyHash(key), db: k % 2}, &offers, best)
					}
					checkTop(t, "top", n, listOffers(t, &top, offers), best, offerWorse)
				})
			}
		}
	}
}
