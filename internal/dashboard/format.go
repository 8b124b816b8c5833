package dashboard

import (
	"fmt"
	"time"

	"github.com/keyguard/keyguard/internal/human"
)

func fmtCount(n int64) string { return human.Count(n) }

func fmtBytes(n int64) string { return human.Bytes(n) }

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

func fmtDur(d time.Duration) string { return human.Approx(d) }

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
