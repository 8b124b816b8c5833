package report

import (
	"math"
	"testing"
)

func TestSquarify(t *testing.T) {
	for _, vals := range [][]float64{{1}, {6, 6, 4, 3, 2, 2, 1}, {1000, 1, 1, 1}, {5, 5, 5, 5, 5, 5, 5, 5, 5}} {
		r := rect{10, 20, 600, 400}
		out := squarify(vals, r)
		var total, area float64
		for _, v := range vals {
			total += v
		}
		for i, o := range out {
			want := vals[i] / total * r.w * r.h
			if math.Abs(o.w*o.h-want) > 1e-6*r.w*r.h {
				t.Errorf("%v: rect %d area %.1f, want %.1f", vals, i, o.w*o.h, want)
			}
			if o.x < r.x-1e-9 || o.y < r.y-1e-9 || o.x+o.w > r.x+r.w+1e-6 || o.y+o.h > r.y+r.h+1e-6 {
				t.Errorf("%v: rect %d %+v outside %+v", vals, i, o, r)
			}
			area += o.w * o.h
		}
		if math.Abs(area-r.w*r.h) > 1e-6*r.w*r.h {
			t.Errorf("%v: rects cover %.1f of %.1f", vals, area, r.w*r.h)
		}
	}
	if out := squarify([]float64{0, 0}, rect{0, 0, 10, 10}); out[0].w != 0 {
		t.Errorf("zero values laid out: %+v", out)
	}
}
