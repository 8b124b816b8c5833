package registry

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// day is the unit ParseDuration adds to Go's durations.
const day = 24 * time.Hour

// ParseDuration reads a duration the way Go writes one (90s, 1h30m,
// 250ms) or with a leading count of days, the way keyguard prints long
// ones (7d, 1d12h, 1.5d). The registry's ttl fields and every duration
// flag of the command line read durations with it.
func ParseDuration(s string) (time.Duration, error) {
	bad := fmt.Errorf("%q is not a duration: write it as 90s, 10m, 1h30m, 7d or 1d12h", s)
	in := strings.TrimSpace(s)
	i := strings.IndexByte(in, 'd')
	if i < 0 {
		d, err := time.ParseDuration(in)
		if err != nil {
			return 0, bad
		}
		return d, nil
	}
	count, rest, neg := in[:i], in[i+1:], false
	if len(count) > 0 && (count[0] == '-' || count[0] == '+') {
		neg, count = count[0] == '-', count[1:]
	}
	if count == "" || strings.Trim(count, "0123456789.") != "" || (rest != "" && (rest[0] == '-' || rest[0] == '+')) {
		return 0, bad
	}
	n, err := strconv.ParseFloat(count, 64)
	if err != nil || n*float64(day) >= math.MaxInt64 {
		return 0, bad
	}
	d := time.Duration(n * float64(day))
	if rest != "" {
		r, err := time.ParseDuration(rest)
		if err != nil || d+r < d {
			return 0, bad
		}
		d += r
	}
	if neg {
		d = -d
	}
	return d, nil
}

// FormatDuration writes d as ParseDuration reads it, with days when it
// is at least one: 7d, 1d12h, 30m, 1h30m.
func FormatDuration(d time.Duration) string {
	if d < day || d%time.Second != 0 {
		return formatClock(d)
	}
	days := d / day
	s := strconv.FormatInt(int64(days), 10) + "d"
	if rest := d - days*day; rest > 0 {
		s += formatClock(rest)
	}
	return s
}
