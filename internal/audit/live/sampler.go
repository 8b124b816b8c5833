package live

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"

	"github.com/keyguard/keyguard/internal/audit/inventory"
)

// The stratified sampler of --sample. Memory is heavy-tailed: a few big
// keys hold much of it, and a uniform sample that misses (or catches) one
// of them is off by its size over the sampling probability. SCAN gives
// every key's name for free, so each key is classified (template or
// family) before the sampler decides, and each class is a stratum with a
// probability of its own:
//
//   - the first pilotKeys keys of a stratum are probed (probability 1),
//     which measures the families of big keys the first time they show,
//     and so is every key of a stratum projected to be small (fewer keys
//     than censusSamples uniform draws need), up to half the budget;
//   - then, every few hundred keys, the budget left is shared out in
//     proportion to each stratum's root mean square size (the allocation
//     that minimizes the variance of the estimate for a given number of
//     probes), capped at 1: small families of big keys are probed whole,
//     large families of small keys thinly, never below a tenth of the
//     uniform probability.
//
// A key's probability is fixed before its size is known, so Σ size/p is
// an unbiased estimate of the memory and Σ (1-p)/p² size² over the probed
// keys an unbiased estimate of its variance, however the probabilities
// moved (inventory.Options.Weighted). Each probability is 1/w for a whole
// w, the weight the record carries into the counts.

const (
	pilotKeys   = 3    // keys of each stratum probed before it has a size estimate
	maxStrata   = 4096 // strata per database before new classes share one
	sampleFloor = 10   // a stratum's probability is at least the uniform one over this
	// censusSamples: a stratum projected to hold fewer keys than this many
	// uniform draws need is probed whole.
	censusSamples = 8
)

type stratumKey struct {
	db     int
	entry  int // a template's Entry.Index+1; 0 a family; -1 the strata past maxStrata
	family string
}

type stratum struct {
	seen  int64   // keys scanned
	pilot int     // keys probed whole before the stratum had sizes
	n     int64   // probed keys with a size
	wsum  float64 // Σ w of those
	wsq   float64 // Σ w·size² of those: wsq/wsum estimates the stratum's mean size²
	extra float64 // Σ (w-1) over every key scanned, probed or not
	w     int64   // keys are probed with probability 1/w
	rest  float64 // allocate's scratch: keys still to come
	rms   float64 // allocate's scratch: root mean square size
}

// sampler decides which scanned keys are probed, for every walker of a run.
type sampler struct {
	mu              sync.Mutex
	budget, total   float64 // keys to probe; keys in the keyspace at the start
	w0, wMax        int64   // the uniform weight; the largest
	scanned, chosen int64
	pilotLeft       int64 // pilot probes left: at most half the budget
	since           int   // keys since the last allocation
	strata          map[stratumKey]*stratum
	perDB           map[int]int
	n               int64 // probed keys with a size, all strata
	wsum, wsq       float64
	order           []*stratum
}

func newSampler(budget, total int64) *sampler {
	w0 := max(int64(math.Round(float64(total)/float64(budget))), 1)
	return &sampler{budget: float64(budget), total: float64(total), w0: w0, wMax: w0 * sampleFloor,
		pilotLeft: budget / 2, strata: map[stratumKey]*stratum{}, perDB: map[int]int{}}
}

// stratumOf finds (or opens) the stratum of a key of class cl in db.
func (s *sampler) stratumOf(db int, cl inventory.Class, open bool) *stratum {
	k := stratumKey{db: db}
	if cl.Entry != nil {
		k.entry = cl.Entry.Index + 1
	} else {
		k.family = cl.Family
	}
	if st := s.strata[k]; st != nil {
		return st
	}
	if s.perDB[db] >= maxStrata {
		k = stratumKey{db: db, entry: -1}
		if st := s.strata[k]; st != nil || !open {
			return st
		}
	}
	if !open {
		return nil
	}
	k.family = strings.Clone(k.family)
	st := &stratum{w: s.w0}
	s.strata[k] = st
	s.perDB[db]++
	return st
}

// choose decides whether a scanned key of class cl in db is probed, and
// with which weight.
func (s *sampler) choose(db int, cl inventory.Class, rng *rand.Rand) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stratumOf(db, cl, true)
	st.seen++
	s.scanned++
	if s.since++; s.since >= max(256, 4*len(s.strata)) {
		s.allocate()
	}
	if s.pilotLeft > 0 && (st.pilot < pilotKeys || s.small(st)) {
		st.pilot++
		s.pilotLeft--
		s.chosen++
		return 1, true
	}
	st.extra += float64(st.w - 1)
	if st.w > 1 && rng.Float64()*float64(st.w) >= 1 {
		return 0, false
	}
	s.chosen++
	return st.w, true
}

// small reports whether a stratum may hold fewer keys than censusSamples
// draws at the uniform probability would see: it is probed whole, since a
// sample of a few keys says little of the rest, and the sizes that decide
// its weight come only after the probes' round trips, while its other keys
// go by. Its share of the keys is taken at a low bound, two standard
// deviations of its count below the count: early in the walk a few keys of
// a rare family (the big keys) can come close together, and a share taken
// at face value would give the next of them the uniform probability before
// any size of the family is known (one 2 MiB key of 24 missed that way
// widens a margin from 3% to 33%).
func (s *sampler) small(st *stratum) bool {
	seen := float64(st.seen)
	return (seen-2*math.Sqrt(seen))*s.total <= float64(censusSamples*s.w0)*float64(s.scanned)
}

// observe takes the sizes of probed records into their strata.
func (s *sampler) observe(db int, recs []inventory.Record, cls []inventory.Class) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range recs {
		b, w := recs[i].Bytes, float64(recs[i].Weight)
		if w <= 0 || b < 0 {
			continue
		}
		st := s.stratumOf(db, cls[i], false)
		if st == nil {
			continue
		}
		sq := w * float64(b) * float64(b)
		st.n++
		st.wsum += w
		st.wsq += sq
		s.n++
		s.wsum += w
		s.wsq += sq
	}
}

// margin is the 95% margin of the memory estimate from the strata: the
// variance Σ (w-1)·size² over every key scanned, with each stratum's
// keys' size² taken as the stratum's mean size² (estimated from all its
// probed keys). It is steadier than the same sum over the probed keys
// alone, which a stratum's few big keys make skewed: a sample that met
// fewer of them than usual gives both a low figure and a low margin.
func (s *sampler) margin() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var v float64
	for _, st := range s.strata {
		if st.wsum > 0 {
			v += st.extra * st.wsq / st.wsum
		}
	}
	return int64(math.Ceil(1.96 * math.Sqrt(v)))
}

// allocate shares the budget left among the strata in proportion to their
// root mean square sizes (capped at probability 1), over the keys each is
// projected to still hold.
func (s *sampler) allocate() {
	s.since = 0
	left := s.total - float64(s.scanned)
	if left <= 0 || s.n == 0 {
		return // the keyspace grew past its start, or no size yet: keep the weights
	}
	grow := left / float64(s.scanned)
	budget := s.budget - float64(s.chosen)
	pooled := s.wsq / s.wsum
	s.order = s.order[:0]
	var sum float64 // Σ rest·rms over the strata not capped
	for _, st := range s.strata {
		st.rest = float64(st.seen) * grow
		if st.n >= 2 {
			st.rms = math.Sqrt(st.wsq / st.wsum)
		} else {
			// Too few sizes of its own: lean on every size seen.
			st.rms = math.Sqrt((st.wsq + pooled) / (st.wsum + 1))
		}
		sum += st.rest * st.rms
		s.order = append(s.order, st)
	}
	slices.SortFunc(s.order, func(a, b *stratum) int { return cmp.Compare(b.rms, a.rms) })
	i := 0
	for ; i < len(s.order) && budget > 0 && sum > 0; i++ {
		st := s.order[i]
		if budget/sum*st.rms < 1 {
			break
		}
		st.w = 1
		budget -= st.rest
		sum -= st.rest * st.rms
	}
	for _, st := range s.order[i:] {
		p := 0.0
		if budget > 0 && sum > 0 {
			p = budget / sum * st.rms
		}
		st.w = s.wMax
		if p > 0 {
			st.w = min(max(int64(math.Round(1/p)), 1), s.wMax)
		}
	}
}

// sampleKey adds a key SCAN returned to b when the sample takes it: with
// the stratified sampler's probability for its class, or the uniform one
// (Options.SampleUniform).
func (w *walker) sampleKey(b *batch, key []byte, slot int) {
	s := w.r.smp
	if s == nil {
		if w.rng.Float64() < w.r.ratio {
			w.addKey(b, string(key), slot)
		}
		return
	}
	k := string(key)
	wt, ok := s.choose(w.plan.db, w.cls.Template(k), w.rng)
	if !ok {
		return
	}
	w.addKey(b, k, slot)
	b.recs[len(b.recs)-1].Weight = wt
}

// observeSizes hands the sizes of a probed batch to the sampler.
func (w *walker) observeSizes(recs []inventory.Record, cls []inventory.Class) {
	if s := w.r.smp; s != nil {
		s.observe(w.plan.db, recs, cls)
	}
}
