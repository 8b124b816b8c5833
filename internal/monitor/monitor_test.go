package monitor

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
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
		{`1339518083.107412 [0 127.0.0.1:60866] "keys" "*"`, 0, "127.0.0.1:60866", []string{"keys", "*"}, 107412},
		{`1700000000.000001 [12 lua] "GET" "a b"`, 12, "lua", []string{"GET", "a b"}, 1},
		{`1.2 [0 [::1]:6379] "set" "k\"q\\" "\x00\xff\n\r\t\a\b"`, 0, "[::1]:6379", []string{"set", `k"q\`, "\x00\xff\n\r\t\a\b"}, 200000},
		{`1.2 [0 unix:/tmp/redis.sock] "ping"`, 0, "unix:/tmp/redis.sock", []string{"ping"}, 200000},
		{`1.2 [0 127.0.0.1:1] "get" "\xAb"`, 0, "127.0.0.1:1", []string{"get", "\xab"}, 200000},
	} {
		l, err := Parse(tt.line)
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

func TestParseRejects(t *testing.T) {
	for _, line := range []string{
		"",
		"OK",
		"+OK",
		`1796067219.1 "get" "k"`,
		`x.1 [0 lua] "get" "k"`,
		`1. [0 lua] "get" "k"`,
		`+1.5 [0 lua] "get" "k"`, // the RESP '+' is the reader's
		`1.5 [x lua] "get" "k"`,
		`1.5 [-1 lua] "get" "k"`,
		`1.5 [+1 lua] "get" "k"`,
		`1.5 [99999999999999999999 lua] "get" "k"`,
		`1.5 [0 lua]`,
		`1.5 [0 lua] get`,
		`1.5 [0 lua] "get" k`,
		`1.5 [0 lua] "get"  "k"`,
		`1.5 [0 lua] "get" "k`,
		`1.5 [0 lua] "get" "\xZZ"`,
		`1.5 [0 lua] "get" "\x4"`,
		`1.5 [0 lua] "get" "k\`,
		`1.5 [0 lua] "get" "\q"`, // the server writes no such escape
		`1.5 [0 ] "get"`,
		"1.2 [0 x]",
		`1.2 [0 1] "a""b"`,
		`1.2 [0 1] "a" `,
	} {
		if l, err := Parse(line); err == nil {
			t.Errorf("%q parsed: %+v", line, l)
		}
	}
}

func TestParseCut(t *testing.T) {
	full := `1.5 [0 10.0.0.5:1] "set" "promo:sku:1001" "{\"a\":1,\"b\":\"` + strings.Repeat("x", 40) + `\"}"`
	for _, tt := range []struct {
		at   int
		args []string
	}{
		{len(full), []string{"set", "promo:sku:1001", `{"a":1,"b":"` + strings.Repeat("x", 40) + `"}`}},
		{len(full) - 1, []string{"set", "promo:sku:1001"}},
		{strings.Index(full, `"{`), []string{"set", "promo:sku:1001"}},      // cut after the space
		{strings.Index(full, `\"a`) + 1, []string{"set", "promo:sku:1001"}}, // inside an escape
		{strings.Index(full, `"promo`) + 3, []string{"set"}},
	} {
		l, err := ParseCut(full[:tt.at])
		if err != nil || !slices.Equal(l.Args, tt.args) {
			t.Errorf("cut at %d (%q): %q %v, want %q", tt.at, full[:tt.at], l.Args, err, tt.args)
		}
	}
	for _, cut := range []string{`1.5 [0 10.0.0.5:1] "se`, `1.5 [0 10.0.0.5:1`, `1.5 [0 10.0.0.5:1] `} {
		if l, err := ParseCut(cut); err == nil {
			t.Errorf("%q parsed: %+v", cut, l)
		}
	}
}

// line writes a line as the server does (replicationFeedMonitors).
func line(sec int64, usec int, db int, source string, args []string) string {
	var b strings.Builder
	us := strconv.Itoa(usec)
	b.WriteString(strconv.FormatInt(sec, 10) + "." + strings.Repeat("0", 6-len(us)) + us + " [" + strconv.Itoa(db) + " " + source + "]")
	for _, a := range args {
		b.WriteString(" " + Quote(a))
	}
	return b.String()
}

// FuzzParse: any input parses or fails without panicking; a line written
// the way the server writes it parses back to what was written, for any
// source the server prints (address, [ipv6]:port, unix:path, lua) and
// arguments of any bytes; and that line cut anywhere gives back the
// arguments before the cut, whole, or fails.
func FuzzParse(f *testing.F) {
	f.Add(int64(1796067219), 685909, 0, "127.0.0.1:60708", "hset", "promo:sku:1001", "a\x00\xff\"\\", `1.5 [0 lua] "get" "k"`, 40)
	f.Add(int64(0), 0, 15, "[::1]:6379", "set", "a] \"b", "", `1.5 [0 [::1]:5] "x" "\x41"`, 0)
	f.Add(int64(1), 1, 2, "unix:/tmp/x.sock", "EVAL", "\r\n\t\a\b", "] \"", `garbage`, 33)
	f.Add(int64(1), 999999, 0, "lua", "set", "k", "{\"a\":1}", `1.000001 [0 10.0.0.5:1] "set" "\xff\x00\xAB"`, 30)
	f.Add(int64(1339518083), 107412, 3, "10.0.0.1:5000", "set", "k\"\\\x00\xff", "", `+1339518083.107412 [0 127.0.0.1:60866] "keys" "*"`, 50)
	f.Fuzz(func(t *testing.T, sec int64, usec, db int, source, a0, a1, a2, raw string, cut int) {
		Parse(raw) // must not panic
		ParseCut(raw)
		if sec < 0 || usec < 0 || usec > 999999 || db < 0 || db > 1<<20 || !validSource(source) {
			return
		}
		args := []string{a0, a1, a2}
		s := line(sec, usec, db, source, args)
		l, err := Parse(s)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if l.DB != db || l.Source != source || !slices.Equal(l.Args, args) || !l.Time.Equal(time.Unix(sec, int64(usec)*1000)) {
			t.Fatalf("%q parsed to %+v", s, l)
		}
		if cut < 0 || cut > len(s) {
			return
		}
		c, err := ParseCut(s[:cut])
		if err != nil {
			return
		}
		if c.DB != db || c.Source != source || len(c.Args) == 0 || !slices.Equal(c.Args, args[:len(c.Args)]) {
			t.Fatalf("%q cut at %d parsed to %+v", s, cut, c)
		}
	})
}

// validSource is a source the parser can tell from the arguments: any
// text without `] "` (addresses, [ipv6]:port, unix:path, lua).
func validSource(s string) bool {
	return s != "" && !strings.Contains(s, `] "`)
}

func TestQuoteRoundTrip(t *testing.T) {
	var all []byte
	for i := 0; i < 256; i++ {
		all = append(all, byte(i))
	}
	q := Quote(string(all))
	got, n, err := unquote(q)
	if err != nil || got != string(all) || n != len(q) {
		t.Fatalf("round trip of every byte: %v %d/%d", err, n, len(q))
	}
}

func BenchmarkParse(b *testing.B) {
	lines := []string{
		`1796067219.685909 [0 127.0.0.1:60708] "hset" "promo:sku:1001" "couponAmount" "10" "promoTotal" "30"`,
		`1796067219.685910 [0 127.0.0.1:60709] "set" "cache:product:detail:88" "{\"name\":\"x\",\"price\":1}" "EX" "600"`,
	}
	b.SetBytes(int64(len(lines[0])+len(lines[1])) / 2)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := Parse(lines[i&1]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
