// Package treemap lays values out as a squarified treemap: the one layout
// of the HTML report's memory map and the dashboard's.
//
//	rs := treemap.Squarify([]float64{6, 3, 1}, treemap.Rect{W: 960, H: 480})
//
// It imports no package of this module.
package treemap

import "math"

// Rect is a rectangle of a layout.
type Rect struct{ X, Y, W, H float64 }

// Squarify lays out values, largest first, in r: each rectangle's area is
// proportional to its value, and rows are grown while that brings the
// rectangles closer to squares (the squarified treemap of Bruls, Huizing
// and van Wijk). Zero values get empty rectangles.
func Squarify(values []float64, r Rect) []Rect {
	out := make([]Rect, len(values))
	var total float64
	for _, v := range values {
		total += max(v, 0)
	}
	if total <= 0 || r.W <= 0 || r.H <= 0 {
		return out
	}
	scale := r.W * r.H / total
	for i := 0; i < len(values); {
		short := min(r.W, r.H)
		j, sum := i+1, max(values[i], 0)*scale
		best := worstRatio(values[i:j], sum, short, scale)
		for ; j < len(values); j++ {
			s := sum + max(values[j], 0)*scale
			w := worstRatio(values[i:j+1], s, short, scale)
			if w > best {
				break
			}
			best, sum = w, s
		}
		if sum <= 0 {
			break // only zeros are left
		}
		thick := sum / short
		if j == len(values) { // the last row takes what is left, exactly
			thick = max(r.W, r.H)
		}
		at := 0.0
		for k := i; k < j; k++ {
			along := max(values[k], 0) * scale / sum * short
			if r.W >= r.H { // a column on the left
				out[k] = Rect{r.X, r.Y + at, thick, along}
			} else { // a row at the top
				out[k] = Rect{r.X + at, r.Y, along, thick}
			}
			at += along
		}
		if r.W >= r.H {
			r.X, r.W = r.X+thick, max(r.W-thick, 0)
		} else {
			r.Y, r.H = r.Y+thick, max(r.H-thick, 0)
		}
		i = j
	}
	return out
}

// worstRatio is the largest aspect ratio of a row of values laid along a
// side of length short, the row's area being sum.
func worstRatio(row []float64, sum, short, scale float64) float64 {
	lo, hi := math.Inf(1), 0.0
	for _, v := range row {
		a := max(v, 0) * scale
		lo, hi = min(lo, a), max(hi, a)
	}
	if lo <= 0 || sum <= 0 {
		return math.Inf(1)
	}
	s2, w2 := sum*sum, short*short
	return max(w2*hi/s2, s2/(w2*lo))
}
