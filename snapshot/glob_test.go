package snapshot

import (
	"bytes"
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/keyguard/keyguard/internal/redistest"
)

// globCases are patterns with what Redis 7.0's stringmatchlen answers for
// them (TestGlobAgainstRedis checks every line on a real server).
var globCases = []struct {
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
	{"a*b*c", "aXbYc", true},
	{"a*b*c", "abc", true},
	{"a*b*c", "acb", false},
	{"a**", "a", true},
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
	{"[]a", "a", false}, // empty class
	{"[]a", "]a", false},
	{"[^]", "x", true},
	{"[^]", "", false},
	{"[abc", "b", true}, // unclosed class
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

func TestGlob(t *testing.T) {
	for _, tc := range globCases {
		if got := globMatch([]byte(tc.pattern), []byte(tc.key)); got != tc.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", tc.pattern, tc.key, got, tc.want)
		}
	}
}

// TestGlobAgainstRedis asks a real server which keys SCAN MATCH selects,
// for the table above and for random patterns over an alphabet of
// metacharacters, and compares with globMatch.
func TestGlobAgainstRedis(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()

	keySet := map[string]bool{}
	for _, tc := range globCases {
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
	for _, tc := range globCases {
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
		var ours []string
		for _, k := range keys {
			if globMatch([]byte(pat), []byte(k)) {
				ours = append(ours, k)
			}
		}
		if !slices.Equal(server, ours) {
			t.Errorf("pattern %q: only Redis matches %q, only globMatch %q", pat, minus(server, ours), minus(ours, server))
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

// FuzzGlob checks that the matcher never panics and keeps the properties
// every pattern language has: a key matches itself escaped, "*" matches
// everything, a pattern without metacharacters matches only itself; the
// star-heavy seed answers at once (no exponential backtracking).
// TestGlobAgainstRedis is the check of the semantics.
func FuzzGlob(f *testing.F) {
	for _, tc := range globCases {
		f.Add([]byte(tc.pattern), []byte(tc.key))
	}
	f.Add(bytes.Repeat([]byte("*a"), 40), bytes.Repeat([]byte("a"), 200))
	f.Fuzz(func(t *testing.T, pattern, key []byte) {
		globMatch(pattern, key)
		if !globMatch([]byte("*"), key) {
			t.Fatalf("* does not match %q", key)
		}
		if len(key) > 0 && !globMatch(globEscape(key), key) {
			t.Fatalf("%q escaped as %q does not match itself", key, globEscape(key))
		}
		if !bytes.ContainsAny(pattern, "*?[\\") && globMatch(pattern, key) != bytes.Equal(pattern, key) {
			t.Fatalf("literal %q vs %q: %v", pattern, key, globMatch(pattern, key))
		}
	})
}

func globEscape(k []byte) []byte {
	var b []byte
	for _, c := range k {
		switch c {
		case '*', '?', '[', ']', '\\':
			b = append(b, '\\')
		}
		b = append(b, c)
	}
	return b
}
