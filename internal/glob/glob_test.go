package glob

import (
	"bytes"
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/keyguard/keyguard/internal/redistest"
)

// cases are patterns with what Redis 7.0's stringmatchlen answers for
// them (TestAgainstRedis checks every line on a real server).
var cases = []struct {
	pattern, key string
	want         bool
}{
	{"*", "", true}, // SCAN's shortcut
	{"", "", true},
	{"**", "", false}, // stringmatchlen never matches the empty key otherwise
	{"?", "", false},
	{"", "a", false},
	{"*", "anything:at:all", true},
	{"order:*", "order:1:base", true},
	{"order:*", "order", false},
	{"order:*", "order:", true},
	{"order:*:base", "order:1:base", true},
	{"order:*:base", "order:1:base:x", false},
	{"*1001*", "promo:sku:1001", true},
	{"*1001*", "promo:sku:100", false},
	{"promo:sku:?", "promo:sku:1", true},
	{"promo:sku:?", "promo:sku:12", false},
	{"a*b*c", "aXbYc", true},
	{"a*b*c", "abc", true},
	{"a*b*c", "acb", false},
	{"a*b*c", "aXXbYY", false},
	{"a**", "a", true},
	{"**a", "ba", true},
	{"a*?", "a", false},
	{"a*?", "ab", true},
	{"h?llo", "hello", true},
	{"h?llo", "hllo", false},
	{"h[ae]llo", "hallo", true},
	{"h[ae]llo", "hillo", false},
	{"h[^e]llo", "hallo", true},
	{"h[^e]llo", "hello", false},
	{"h[a-b]llo", "hbllo", true},
	{"h[b-a]llo", "hallo", true}, // reversed range
	{"h[a-b]llo", "hcllo", false},
	{"h[a-]llo", "h]llo", false}, // the range takes the ']': the class runs on
	{"h\\*llo", "h*llo", true},
	{"h\\*llo", "hello", false},
	{"h[\\]]llo", "h]llo", true},
	{"h[abc", "hb", true}, // unclosed class
	{"h[abc", "hbc", false},
	{"[]a", "a", false}, // empty class
	{"[]a", "]a", false},
	{"[^]", "x", true},
	{"[^]", "", false},
	{"[abc", "b", true},
	{"[abc", "bx", false},
	{"[a-]", "]", true},  // the range runs to ']'
	{"[a-]", "b", false}, // the range is ']'..'a', then the class is left open
	{"[a-]", "^", true},
	{"[\\]]", "]", true},
	{"[\\-]", "-", true},
	{"[a\\-z]", "b", false},
	{"[a\\-z]", "-", true},
	{"\\*", "*", true},
	{"\\*", "x", false},
	{"a\\", "a\\", true}, // a trailing backslash is literal
	{"\\?x", "?x", true},
	{"\\", "\\", true},
	{"[", "[", false},
	{"[", "x", false},
	{"[^", "x", true},
	{"x[", "x", false},
	{"*[", "x", false},
	{"[\x80-a]", "A", true}, // signed chars: 0x80 sorts below 0
	{"[\x80-a]", "\xff", true},
	{"[\x80-a]", "b", false},
	{"[a-\xff]", "b", false}, // 'a'..-1 is -1..'a'
	{"[a-\xff]", "\xff", true},
	{"\x00*", "\x00\x01", true},
	{"*\n", "line\n", true},
	{"user:[0-9]*", "user:7x", true},
	{"user:[0-9]*", "user:x7", false},
}

func TestMatch(t *testing.T) {
	for _, tc := range cases {
		if got := Match([]byte(tc.pattern), []byte(tc.key)); got != tc.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tc.pattern, tc.key, got, tc.want)
		}
		if got := MatchString(tc.pattern, tc.key); got != tc.want {
			t.Errorf("MatchString(%q, %q) = %v, want %v", tc.pattern, tc.key, got, tc.want)
		}
		if got := serverMatch(tc.pattern, tc.key); got != tc.want {
			t.Errorf("serverMatch(%q, %q) = %v, want %v", tc.pattern, tc.key, got, tc.want)
		}
	}
}

// TestAgainstRedis asks a real server which keys SCAN MATCH selects, for
// the table above and for random patterns over an alphabet of
// metacharacters, and compares with Match and with serverMatch (the
// reference the fuzz test holds Match to).
func TestAgainstRedis(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()

	keySet := map[string]bool{}
	for _, tc := range cases {
		if tc.key != "" {
			keySet[tc.key] = true
		}
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	const alpha = "ab]-^\\\x80\xff" // key bytes
	const palpha = "ab*?[]^-\\\x80\xff"
	for range 300 {
		keySet[randString(rnd, alpha, 1+rnd.IntN(6))] = true
	}
	keys := make([]string, 0, len(keySet))
	for k := range keySet {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	p := c.Pipeline()
	for _, k := range keys {
		p.Set(ctx, k, "1", 0)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}

	patterns := []string{}
	for _, tc := range cases {
		patterns = append(patterns, tc.pattern)
	}
	for range 400 {
		patterns = append(patterns, randString(rnd, palpha, rnd.IntN(7)))
	}
	for _, pat := range patterns {
		if pat == "" {
			continue // go-redis sends no MATCH for ""
		}
		var server []string
		var cursor uint64
		for {
			ks, next, err := c.Scan(ctx, cursor, pat, 1000).Result()
			if err != nil {
				t.Fatalf("SCAN MATCH %q: %v", pat, err)
			}
			server = append(server, ks...)
			if cursor = next; cursor == 0 {
				break
			}
		}
		slices.Sort(server)
		var ours, ref []string
		for _, k := range keys {
			if Match([]byte(pat), []byte(k)) {
				ours = append(ours, k)
			}
			if serverMatch(pat, k) {
				ref = append(ref, k)
			}
		}
		if !slices.Equal(server, ours) {
			t.Errorf("pattern %q: only Redis matches %q, only Match %q", pat, minus(server, ours), minus(ours, server))
		}
		if !slices.Equal(server, ref) {
			t.Errorf("pattern %q: only Redis matches %q, only serverMatch %q", pat, minus(server, ref), minus(ref, server))
		}
	}
}

func minus(a, b []string) []string {
	var d []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			d = append(d, x)
		}
	}
	return d
}

func randString(r *rand.Rand, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

// serverMatch is stringmatchlen (Redis 7.0, src/util.c, nocase off) step by
// step: a pointer and a length for the pattern and the string, the
// pattern read one byte past its end (the server's patterns are
// NUL-terminated), chars signed. SCAN's "*" shortcut is in Match's
// caller, here as in the server.
func serverMatch(pattern, str string) bool {
	if pattern == "*" {
		return true
	}
	skip := false
	return serverImpl([]byte(pattern+"\x00"), 0, len(pattern), []byte(str), 0, len(str), &skip, 0)
}

func serverImpl(pat []byte, p, plen int, s []byte, i, slen int, skipLonger *bool, nesting int) bool {
	if nesting > 1000 {
		return false
	}
	for plen > 0 && slen > 0 {
		switch pat[p] {
		case '*':
			for plen > 0 && pat[p+1] == '*' {
				p++
				plen--
			}
			if plen == 1 {
				return true
			}
			for slen > 0 {
				if serverImpl(pat, p+1, plen-1, s, i, slen, skipLonger, nesting+1) {
					return true
				}
				if *skipLonger {
					return false
				}
				i++
				slen--
			}
			*skipLonger = true
			return false
		case '?':
			i++
			slen--
		case '[':
			p++
			plen--
			not := pat[p] == '^'
			if not {
				p++
				plen--
			}
			match := false
			for {
				if pat[p] == '\\' && plen >= 2 {
					p++
					plen--
					if pat[p] == s[i] {
						match = true
					}
				} else if pat[p] == ']' {
					break
				} else if plen == 0 {
					p--
					plen++
					break
				} else if plen >= 3 && pat[p+1] == '-' {
					start, end, c := int(int8(pat[p])), int(int8(pat[p+2])), int(int8(s[i]))
					if start > end {
						start, end = end, start
					}
					p += 2
					plen -= 2
					if c >= start && c <= end {
						match = true
					}
				} else if pat[p] == s[i] {
					match = true
				}
				p++
				plen--
			}
			if not {
				match = !match
			}
			if !match {
				return false
			}
			i++
			slen--
		case '\\':
			if plen >= 2 {
				p++
				plen--
			}
			fallthrough
		default:
			if pat[p] != s[i] {
				return false
			}
			i++
			slen--
		}
		p++
		plen--
		if slen == 0 {
			for pat[p] == '*' {
				p++
				plen--
			}
			break
		}
	}
	return plen == 0 && slen == 0
}

// FuzzMatch holds Match and MatchString to the server's algorithm, and
// to the properties every pattern language has: a key matches itself
// escaped, "*" matches everything, a pattern without metacharacters
// matches only itself; the star-heavy seed answers at once (no
// exponential backtracking). TestAgainstRedis is the check of the
// semantics.
func FuzzMatch(f *testing.F) {
	for _, tc := range cases {
		f.Add([]byte(tc.pattern), []byte(tc.key))
	}
	f.Add(bytes.Repeat([]byte("*a"), 40), bytes.Repeat([]byte("a"), 200))
	f.Add([]byte("h[^a-c]l?o*"), []byte("hello"))
	f.Add([]byte(`h[\]x-`), []byte("h]"))
	f.Fuzz(func(t *testing.T, pattern, key []byte) {
		got := Match(pattern, key)
		if s := MatchString(string(pattern), string(key)); s != got {
			t.Fatalf("Match(%q, %q) = %v, MatchString %v", pattern, key, got, s)
		}
		if want := serverMatch(string(pattern), string(key)); got != want {
			t.Fatalf("Match(%q, %q) = %v, the server's algorithm says %v", pattern, key, got, want)
		}
		if !Match([]byte("*"), key) {
			t.Fatalf("* does not match %q", key)
		}
		if len(key) > 0 && !MatchString(Escape(string(key)), string(key)) {
			t.Fatalf("%q escaped as %q does not match itself", key, Escape(string(key)))
		}
		if !bytes.ContainsAny(pattern, "*?[\\") && got != bytes.Equal(pattern, key) {
			t.Fatalf("literal %q vs %q: %v", pattern, key, got)
		}
	})
}

// BenchmarkMatch: the patterns a --match or an investigation uses, on
// keys of the demo's shape.
func BenchmarkMatch(b *testing.B) {
	in := []struct{ p, s []byte }{
		{[]byte("order:*:base"), []byte("order:order:12345:base")},
		{[]byte("*1001*"), []byte("promo:sku:1001:detail")},
		{[]byte("user:[0-9]*"), []byte("user:7x")},
		{[]byte("cache:product:detail:??"), []byte("cache:product:detail:88")},
	}
	b.Run("bytes", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			Match(in[i&3].p, in[i&3].s)
			i++
		}
	})
	sin := make([]struct{ p, s string }, len(in))
	for i, x := range in {
		sin[i].p, sin[i].s = string(x.p), string(x.s)
	}
	b.Run("string", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			MatchString(sin[i&3].p, sin[i&3].s)
			i++
		}
	})
}
