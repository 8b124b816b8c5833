package treemap

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// Every layout fills the rectangle: areas proportional to the values,
// inside the bounds, no two rectangles overlapping.
func TestSquarifyInvariants(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := 1; n <= 60; n++ {
		vals := make([]float64, n)
		var total float64
		for i := range vals {
			vals[i] = math.Floor(r.ExpFloat64()*1000) + float64(i%3) // some zeros
			if i%7 == 6 {
				vals[i] = 0
			}
			total += vals[i]
		}
		sort.Sort(sort.Reverse(sort.Float64Slice(vals)))
		box := Rect{X: 10, Y: 20, W: 960, H: 480}
		rs := Squarify(vals, box)
		if len(rs) != n {
			t.Fatalf("n=%d: %d rects", n, len(rs))
		}
		for i, q := range rs {
			want := vals[i] / total * box.W * box.H
			if math.Abs(q.W*q.H-want) > 1e-6*box.W*box.H {
				t.Errorf("n=%d rect %d area %g, want %g", n, i, q.W*q.H, want)
			}
			if vals[i] == 0 {
				continue // an empty rectangle, drawn nowhere
			}
			if q.X < box.X-1e-9 || q.Y < box.Y-1e-9 || q.X+q.W > box.X+box.W+1e-6 || q.Y+q.H > box.Y+box.H+1e-6 {
				t.Errorf("n=%d rect %d %+v outside %+v", n, i, q, box)
			}
			for j := range i {
				p := rs[j]
				ox := math.Min(p.X+p.W, q.X+q.W) - math.Max(p.X, q.X)
				oy := math.Min(p.Y+p.H, q.Y+q.H) - math.Max(p.Y, q.Y)
				if ox > 1e-6 && oy > 1e-6 {
					t.Errorf("n=%d rects %d and %d overlap: %+v %+v", n, j, i, p, q)
				}
			}
		}
	}
	if rs := Squarify([]float64{0, 0}, Rect{W: 10, H: 10}); rs[0] != (Rect{}) || rs[1] != (Rect{}) {
		t.Errorf("zeros: %+v", rs)
	}
}

// Squarified rows keep rectangles close to squares: equal values in a
// square make squares.
func TestSquarifySquares(t *testing.T) {
	for _, q := range Squarify([]float64{1, 1, 1, 1}, Rect{W: 100, H: 100}) {
		if math.Abs(q.W-50) > 1e-9 || math.Abs(q.H-50) > 1e-9 {
			t.Errorf("%+v, want 50×50", q)
		}
	}
}
