package report

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// fmtDur writes a duration for people: 90s → 1m30s, 3600s → 1h, 36h →
// 1d12h.
func fmtDur(d time.Duration) string {
	if d < time.Second {
		return d.String()
	}
	d = d.Round(time.Second)
	var b strings.Builder
	if n := d / (24 * time.Hour); n > 0 {
		b.WriteString(strconv.FormatInt(int64(n), 10) + "d")
		d -= n * 24 * time.Hour
	}
	for _, u := range []struct {
		d time.Duration
		s string
	}{{time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}} {
		if n := d / u.d; n > 0 {
			b.WriteString(strconv.FormatInt(int64(n), 10) + u.s)
			d -= n * u.d
		}
	}
	return b.String()
}

// fmtBytes is a human size in binary units: 512 B, 1.5 KiB, 12.3 MiB.
func fmtBytes(n int64) string {
	const unit = 1024
	if n < unit && n > -unit {
		return fmt.Sprintf("%d B", n)
	}
	f := float64(n)
	for _, u := range []string{"KiB", "MiB", "GiB", "TiB"} {
		f /= unit
		if f < unit && f > -unit || u == "TiB" {
			return fmt.Sprintf("%.1f %s", f, u)
		}
	}
	return ""
}

// fmtCount writes 1234567 as 1,234,567.
func fmtCount(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func secDur(s int64) time.Duration { return time.Duration(s) * time.Second }
func msDur(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }

// fmtApprox writes an approximate duration without false precision.
func fmtApprox(d time.Duration) string {
	switch {
	case d >= 10*time.Hour:
		d = d.Round(time.Hour)
	case d >= 10*time.Minute:
		d = d.Round(time.Minute)
	}
	return fmtDur(d)
}

// HumanDuration writes a duration for people: 90s → 1m30s, 36h → 1d12h.
func HumanDuration(d time.Duration) string { return fmtDur(d) }

// HumanBytes is a size in binary units: 512 B, 1.5 KiB, 12.3 MiB.
func HumanBytes(n int64) string { return fmtBytes(n) }

// HumanCount writes 1234567 as 1,234,567.
func HumanCount(n int64) string { return fmtCount(n) }
