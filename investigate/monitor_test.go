package investigate

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseLine(t *testing.T) {
	for _, tt := range []struct {
		line   string
		db     int
		source string
		args   []string
		usec   int
	}{
		{`1796067219.685909 [0 127.0.0.1:60708] "eval" "redis.call('hset',KEYS[1],'a',1)" "1" "promo:sku:1001"`,
			0, "127.0.0.1:60708", []string{"eval", "redis.call('hset',KEYS[1],'a',1)", "1", "promo:sku:1001"}, 685909},
		{`1796067219.685986 [0 lua] "hset" "promo:sku:1001" "a" "1"`, 0, "lua", []string{"hset", "promo:sku:1001", "a", "1"}, 685986},
		{`1796067219.703608 [3 unix:/tmp/invtest/r.sock] "set" "x y" "a\x01\"\\b"`, 3, "unix:/tmp/invtest/r.sock", []string{"set", "x y", "a\x01\"\\b"}, 703608},
		{`1796067219.708851 [0 [::1]:57894] "get" "foo"`, 0, "[::1]:57894", []string{"get", "foo"}, 708851},
		{`1796067219.708851 [15 [2001:db8::1]:6379] "PING"`, 15, "[2001:db8::1]:6379", []string{"PING"}, 708851},
		{`1.000001 [0 10.0.0.5:1] "set" "k" "line\r\nnext\ttab\a\b"`, 0, "10.0.0.5:1", []string{"set", "k", "line\r\nnext\ttab\a\b"}, 1},
		{`1.5 [0 10.0.0.5:1] "set" "a] \"b" ""`, 0, "10.0.0.5:1", []string{"set", `a] "b`, ""}, 500000},
		{`1.000001 [0 10.0.0.5:1] "set" "\xff\x00\xAB"`, 0, "10.0.0.5:1", []string{"set", "\xff\x00\xab"}, 1},
	} {
		l, err := ParseLine(tt.line)
		if err != nil {
			t.Errorf("%s: %v", tt.line, err)
			continue
		}
		if l.DB != tt.db || l.Source != tt.source || !slices.Equal(l.Args, tt.args) || l.Time.Nanosecond()/1000 != tt.usec {
			t.Errorf("%s:\n got db %d source %q args %q usec %d\nwant db %d source %q args %q usec %d",
				tt.line, l.DB, l.Source, l.Args, l.Time.Nanosecond()/1000, tt.db, tt.source, tt.args, tt.usec)
		}
	}
}

func TestParseLineRejects(t *testing.T) {
	for _, line := range []string{
		"",
		"OK",
		`1796067219.1 "get" "k"`,
		`x.1 [0 lua] "get" "k"`,
		`1. [0 lua] "get" "k"`,
		`+1.5 [0 lua] "get" "k"`,
		`1.5 [x lua] "get" "k"`,
		`1.5 [-1 lua] "get" "k"`,
		`1.5 [0 lua]`,
		`1.5 [0 lua] get`,
		`1.5 [0 lua] "get" k`,
		`1.5 [0 lua] "get"  "k"`,
		`1.5 [0 lua] "get" "k`,
		`1.5 [0 lua] "get" "\xZZ"`,
		`1.5 [0 lua] "get" "\x4"`,
		`1.5 [0 lua] "get" "k\`,
		`1.5 [0 ] "get"`,
	} {
		if l, err := ParseLine(line); err == nil {
			t.Errorf("%q parsed: %+v", line, l)
		}
	}
}

// monitorLine writes a line as the server does (replicationFeedMonitors).
func monitorLine(sec int64, usec int, db int, source string, args []string) string {
	var b strings.Builder
	b.WriteString(strconv.FormatInt(sec, 10) + "." + leftPad(strconv.Itoa(usec), 6) + " [" + strconv.Itoa(db) + " " + source + "]")
	for _, a := range args {
		b.WriteString(" " + quoteArg(a))
	}
	return b.String()
}

func leftPad(s string, n int) string {
	for len(s) < n {
		s = "0" + s
	}
	return s
}

// FuzzParseLine: any input parses or fails without panicking, and a line
// written the way the server writes it parses back to what was written,
// for any source the server prints (address, [ipv6]:port, unix:path, lua)
// and arguments of any bytes.
func FuzzParseLine(f *testing.F) {
	f.Add(int64(1796067219), 685909, 0, "127.0.0.1:60708", "hset", "promo:sku:1001", "a\x00\xff\"\\", `1.5 [0 lua] "get" "k"`)
	f.Add(int64(0), 0, 15, "[::1]:6379", "set", "a] \"b", "", `1.5 [0 [::1]:5] "x" "\x41"`)
	f.Add(int64(1), 1, 2, "unix:/tmp/x.sock", "EVAL", "\r\n\t\a\b", "] \"", `garbage`)
	f.Add(int64(1), 999999, 0, "lua", "set", "k", "{\"a\":1}", `1.000001 [0 10.0.0.5:1] "set" "\xff\x00\xAB"`)
	f.Fuzz(func(t *testing.T, sec int64, usec, db int, source, a0, a1, a2, raw string) {
		ParseLine(raw) // must not panic
		parseLine(raw, true)
		if sec < 0 || usec < 0 || usec > 999999 || db < 0 || db > 1<<20 || !validSource(source) {
			return
		}
		args := []string{a0, a1, a2}
		line := monitorLine(sec, usec, db, source, args)
		l, err := ParseLine(line)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if l.DB != db || l.Source != source || !slices.Equal(l.Args, args) || !l.Time.Equal(time.Unix(sec, int64(usec)*1000)) {
			t.Fatalf("%q parsed to %+v", line, l)
		}
	})
}

// validSource is a source the parser can tell from the arguments: any
// text without `] "` (addresses, [ipv6]:port, unix:path, lua).
func validSource(s string) bool {
	return s != "" && !strings.Contains(s, `] "`)
}

func TestQuoteArgRoundTrip(t *testing.T) {
	var all []byte
	for i := 0; i < 256; i++ {
		all = append(all, byte(i))
	}
	q := quoteArg(string(all))
	got, n, err := unquoteArg(q)
	if err != nil || got != string(all) || n != len(q) {
		t.Fatalf("round trip of every byte: %v %d/%d", err, n, len(q))
	}
}

func BenchmarkParseLine(b *testing.B) {
	line := `1796067219.685909 [0 127.0.0.1:60708] "hset" "promo:sku:1001" "couponAmount" "10" "promoTotal" "30"`
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		if _, err := ParseLine(line); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCaptureLine is the work of the capture loop per MONITOR line:
// parse, then attribute (a key of the investigation, and one that is not).
func BenchmarkCaptureLine(b *testing.B) {
	lines := []string{
		`1796067219.685909 [0 127.0.0.1:60708] "hset" "promo:sku:1001" "couponAmount" "10" "promoTotal" "30"`,
		`1796067219.685910 [0 127.0.0.1:60709] "set" "cache:product:detail:88" "{\"name\":\"x\",\"price\":1}" "EX" "600"`,
	}
	bytes := 0
	for _, l := range lines {
		bytes += len(l) + 3
	}
	b.SetBytes(int64(bytes / len(lines)))
	a := NewAttributor(0, func(k string) bool { return hasSegment(k, "1001", ':') })
	i := 0
	for b.Loop() {
		l, err := ParseLine(lines[i%2])
		if err != nil {
			b.Fatal(err)
		}
		a.Feed(&l)
		i++
	}
}
