package inventory

import (
	"math"
	"testing"
	"time"
)

func TestTTLSketch(t *testing.T) {
	var s ttlSketch
	for i := 1; i <= 1001; i++ {
		s.add(time.Duration(i*7) * time.Second)
	}
	p := s.p50()
	if exact := int64(501 * 7); math.Abs(float64(p-exact)) > 0.125*float64(exact) {
		t.Errorf("p50 %d, exact %d", p, exact)
	}
	if ttlSeconds(s.min) != 7 || ttlSeconds(s.max) != 7007 {
		t.Errorf("min %v max %v", s.min, s.max)
	}
	for sec := int64(0); sec < 1<<20; sec = sec*5/4 + 1 {
		lo, hi := ttlBucketRange(ttlBucket(sec))
		if sec < lo || sec >= hi {
			t.Fatalf("%d s in bucket [%d, %d)", sec, lo, hi)
		}
	}
}
