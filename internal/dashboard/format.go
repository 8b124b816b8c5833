package dashboard

import (
	"fmt"
	"strconv"
	"time"

	"github.com/keyguard/keyguard/internal/audit/report"
)

// fmtCount writes n with thousands separators: 1,234,567.
func fmtCount(n int64) string { return report.HumanCount(n) }

// fmtBytes writes a size in binary units: 512 B, 1.5 KiB, 12 MiB, 3.2 GiB.
func fmtBytes(n int64) string {
	const unit = 1024
	if n < unit && n > -unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	f := float64(n)
	for _, u := range []string{"KiB", "MiB", "GiB", "TiB"} {
		f /= unit
		if f < unit && f > -unit || u == "TiB" {
			if f >= 100 || f <= -100 {
				return fmt.Sprintf("%.0f %s", f, u)
			}
			return fmt.Sprintf("%.1f %s", f, u)
		}
	}
	return ""
}

// fmtShort writes a count compactly for chart axes: 950, 12k, 3.4M.
func fmtShort(v float64) string {
	a := v
	if a < 0 {
		a = -a
	}
	switch {
	case a >= 1e9:
		return trimZero(fmt.Sprintf("%.1f", v/1e9)) + "G"
	case a >= 1e6:
		return trimZero(fmt.Sprintf("%.1f", v/1e6)) + "M"
	case a >= 1e4:
		return fmt.Sprintf("%.0fk", v/1e3)
	case a >= 1e3:
		return trimZero(fmt.Sprintf("%.1f", v/1e3)) + "k"
	}
	return trimZero(fmt.Sprintf("%.1f", v))
}

func trimZero(s string) string {
	if len(s) > 2 && s[len(s)-2:] == ".0" {
		return s[:len(s)-2]
	}
	return s
}

// fmtDur writes a duration for people: 850ms, 12s, 4m10s, 3h20m, 2d4h.
func fmtDur(d time.Duration) string {
	switch {
	case d < 0:
		return "-" + fmtDur(-d)
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.3gs", d.Seconds())
	case d < time.Hour:
		m, s := int(d/time.Minute), int(d%time.Minute/time.Second)
		if s == 0 {
			return fmt.Sprintf("%dm", m)
		}
		return fmt.Sprintf("%dm%ds", m, s)
	case d < 48*time.Hour:
		h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
		if m == 0 {
			return fmt.Sprintf("%dh", h)
		}
		return fmt.Sprintf("%dh%dm", h, m)
	}
	days, h := int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour)
	if h == 0 {
		return fmt.Sprintf("%dd", days)
	}
	return fmt.Sprintf("%dd%dh", days, h)
}

// fmtSec writes a TTL given in seconds.
func fmtSec(s int64) string { return fmtDur(time.Duration(s) * time.Second) }

// ttlText writes a remaining TTL in milliseconds: "none" for -1.
func ttlText(ms int64) string {
	if ms < 0 {
		return "none"
	}
	return fmtDur(time.Duration(ms) * time.Millisecond)
}

// fmtTime writes an instant in UTC, to the second.
func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// fmtAgo writes how long before now t was: "3m10s ago".
func fmtAgo(t, now time.Time) string {
	if t.IsZero() {
		return "never"
	}
	d := now.Sub(t).Round(time.Second)
	if d < 0 {
		return "in " + fmtDur(-d)
	}
	if d < time.Second {
		return "just now"
	}
	return fmtDur(d) + " ago"
}

// pct writes part of whole as a percentage: "12%", "0.4%", "<0.1%".
func pct(part, whole int64) string {
	if whole <= 0 || part <= 0 {
		return "0%"
	}
	p := float64(part) * 100 / float64(whole)
	switch {
	case p < 0.1:
		return "<0.1%"
	case p < 10:
		return trimZero(fmt.Sprintf("%.1f", p)) + "%"
	}
	return fmt.Sprintf("%.0f%%", p)
}
