// Package human writes numbers, sizes, durations and plurals the way every
// keyguard command prints them, and finds the word a user probably meant.
// It is the one home of these helpers: reports, the dashboard, the tools
// and the command line call it instead of keeping their own.
//
//	human.Bytes(1536)          // "1.5 KiB"
//	human.Count(1234567)       // "1,234,567"
//	human.Plural(1, "key")     // "1 key"
//
// It imports no package of this module.
package human

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Bytes is a size in binary units: 512 B, 1.5 KiB, 12.3 MiB.
func Bytes(n int64) string {
	const unit = 1024
	if n < unit && n > -unit {
		return strconv.FormatInt(n, 10) + " B"
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

// ParseBytes reads a positive size as Bytes writes it or as people type
// it: 1048576, 500KB, 64MiB, 1GiB (KiB, MiB, GiB binary; KB, MB, GB decimal).
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1000}, {"MB", 1000 * 1000}, {"GB", 1000 * 1000 * 1000}, {"B", 1}} {
		if v, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = strings.TrimSpace(v), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("%q is not a size: write it as 1048576, 500KB or 64MiB", s)
	}
	return n * mult, nil
}

// Count writes n with thousands separators: 1,234,567.
func Count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i := 0; i < len(s); i++ {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Duration writes a duration for people, to the second from one second
// on: 850ms, 90s → 1m30s, 3600s → 1h, 36h → 1d12h.
func Duration(d time.Duration) string {
	if d < 0 {
		return "-" + Duration(-d)
	}
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

// OrDash is s, or "-" for an empty s: the cell of a value not known or
// not set (an owner, a registry) in a table or a line.
func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Plural is n (with thousands separators) and the word, in the plural
// unless n is 1: "1 key", "1,200 keys", "2 matches", "0 entries". Words
// that do not change ("info") stay as they are.
func Plural[N int | int64](n N, word string) string {
	return Count(int64(n)) + " " + PluralWord(int64(n), word)
}

// PluralWord is the word alone, in the plural unless n is 1.
func PluralWord(n int64, word string) string {
	if n == 1 || word == "" {
		return word
	}
	switch {
	case word == "info" || strings.HasSuffix(word, "data"):
		return word
	case strings.HasSuffix(word, "s"), strings.HasSuffix(word, "x"), strings.HasSuffix(word, "ch"), strings.HasSuffix(word, "sh"):
		return word + "es"
	case strings.HasSuffix(word, "y") && len(word) > 1 && !strings.ContainsRune("aeiou", rune(word[len(word)-2])):
		return word[:len(word)-1] + "ies"
	}
	return word + "s"
}

// Article is "a" or "an" for word: "an e-mail", "a key", "an ID".
func Article(word string) string {
	if word == "" {
		return "a"
	}
	switch c := word[0]; {
	case strings.ContainsRune("aeiouAEIOU", rune(c)):
		return "an"
	case len(word) > 1 && strings.ToUpper(word[:2]) == word[:2] && strings.ContainsRune("FHLMNRSX", rune(c)):
		return "an" // an SDK, an HTTP request, an RDB file
	}
	return "a"
}

// Closest is the candidate nearest to word (case-insensitive edit
// distance, an adjacent transposition counting as one edit), or "" when
// none is within max edits.
func Closest(word string, candidates []string, max int) string {
	best, bestD := "", max+1
	lw := strings.ToLower(word)
	for _, c := range candidates {
		if d := EditDistance(lw, strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// EditDistance is the Levenshtein distance of a and b in bytes, counting an
// adjacent transposition as one edit.
func EditDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// Approx writes a duration without false precision: to the hour from ten
// hours on, to the minute from ten minutes on, else as Duration.
func Approx(d time.Duration) string {
	switch a := max(d, -d); {
	case a >= 10*time.Hour:
		d = d.Round(time.Hour)
	case a >= 10*time.Minute:
		d = d.Round(time.Minute)
	}
	return Duration(d)
}
