package inventory

import (
	"math/bits"
	"time"
)

// ttlSketch summarises the remaining TTLs of a group in constant space:
// exact count, min and max, and a log-bucket histogram of seconds (16
// exact buckets below 16 s, then 4 per power of two) for the median. The
// histogram is allocated on the first TTL seen.
type ttlSketch struct {
	n        int64
	min, max time.Duration
	hist     *[ttlBuckets]uint32
}

const (
	ttlSubBits  = 2 // 4 buckets per power of two: a bucket is at most 25% wide, its middle within 12.5%
	ttlMaxOct   = 40
	ttlBuckets  = 16 + (ttlMaxOct-3)<<ttlSubBits
	ttlSubCount = 1 << ttlSubBits
)

func ttlSeconds(d time.Duration) int64 { return int64((d + 500*time.Millisecond) / time.Second) }

func ttlBucket(s int64) int {
	if s < 16 {
		if s < 0 {
			return 0
		}
		return int(s)
	}
	o := bits.Len64(uint64(s)) - 1 // 4.. ; s in [2^o, 2^(o+1))
	if o > ttlMaxOct {
		return ttlBuckets - 1
	}
	sub := int(s>>(o-ttlSubBits)) & (ttlSubCount - 1)
	return 16 + (o-4)<<ttlSubBits + sub
}

// ttlBucketRange is the [lo, hi) range of seconds of bucket i.
func ttlBucketRange(i int) (lo, hi int64) {
	if i < 16 {
		return int64(i), int64(i) + 1
	}
	o := (i-16)>>ttlSubBits + 4
	sub := int64((i - 16) & (ttlSubCount - 1))
	w := int64(1) << (o - ttlSubBits)
	lo = int64(1)<<o + sub*w
	return lo, lo + w
}

func (s *ttlSketch) add(d time.Duration) {
	if s.n == 0 || d < s.min {
		s.min = d
	}
	if s.n == 0 || d > s.max {
		s.max = d
	}
	s.n++
	if s.hist == nil {
		s.hist = new([ttlBuckets]uint32)
	}
	s.hist[ttlBucket(ttlSeconds(d))]++
}

func (s *ttlSketch) merge(o *ttlSketch) {
	if o.n == 0 {
		return
	}
	if s.n == 0 || o.min < s.min {
		s.min = o.min
	}
	if s.n == 0 || o.max > s.max {
		s.max = o.max
	}
	s.n += o.n
	if s.hist == nil {
		s.hist = new([ttlBuckets]uint32)
	}
	for i, c := range o.hist {
		s.hist[i] += c
	}
}

// p50 is the median in seconds: the middle of the bucket holding it,
// kept within the exact min and max.
func (s *ttlSketch) p50() int64 {
	if s.n == 0 {
		return 0
	}
	rank := (s.n + 1) / 2
	var seen int64
	for i, c := range s.hist {
		seen += int64(c)
		if seen >= rank {
			lo, hi := ttlBucketRange(i)
			v := lo + (hi-lo-1)/2
			return min(max(v, ttlSeconds(s.min)), ttlSeconds(s.max))
		}
	}
	return ttlSeconds(s.max)
}

// ttlClasses are the report's TTL histogram: how much memory expires on
// its own, and when (RedisInsight's "memory likely to be freed").
var ttlClasses = []struct {
	label string
	upTo  time.Duration // exclusive upper bound; 0 for the last
}{
	{"< 1m", time.Minute},
	{"1m-1h", time.Hour},
	{"1h-4h", 4 * time.Hour},
	{"4h-12h", 12 * time.Hour},
	{"12h-24h", 24 * time.Hour},
	{"1d-7d", 7 * 24 * time.Hour},
	{"7d-30d", 30 * 24 * time.Hour},
	{"> 30d", 0},
}

// TTL histogram slots: the classes, then no TTL, then unknown.
const (
	ttlSlotNone    = 8
	ttlSlotUnknown = 9
	ttlSlots       = 10
)

func ttlClass(d time.Duration) int {
	switch {
	case d == -1:
		return ttlSlotNone
	case d <= 0:
		return ttlSlotUnknown
	}
	for i, c := range ttlClasses[:len(ttlClasses)-1] {
		if d < c.upTo {
			return i
		}
	}
	return len(ttlClasses) - 1
}

// ttlSlotLabel names slot i of the TTL histogram.
func ttlSlotLabel(i int) string {
	switch {
	case i < len(ttlClasses):
		return ttlClasses[i].label
	case i == ttlSlotNone:
		return "no TTL"
	}
	return "unknown"
}
