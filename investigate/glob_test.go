package investigate

import "testing"

func TestGlobMatch(t *testing.T) {
	for _, tt := range []struct {
		pattern, s string
		want       bool
	}{
		{"*", "", true},
		{"*1001*", "promo:sku:1001", true},
		{"*1001*", "promo:sku:100", false},
		{"promo:sku:?", "promo:sku:1", true},
		{"promo:sku:?", "promo:sku:12", false},
		{"h[ae]llo", "hello", true},
		{"h[^e]llo", "hello", false},
		{"h[^e]llo", "hallo", true},
		{"h[a-b]llo", "hbllo", true},
		{"h[b-a]llo", "hallo", true}, // a reversed range is swapped
		{"h[a-]llo", "h]llo", false},
		{`h\*llo`, "h*llo", true},
		{`h\*llo`, "hello", false},
		{`h[\]]llo`, "h]llo", true},
		{"h[abc", "hb", true}, // unterminated class runs to the end
		{"h[abc", "hbc", false},
		{`a\`, `a\`, true},
		{"a*b*c", "aXXbYYc", true},
		{"a*b*c", "aXXbYY", false},
		{"**a", "ba", true},
	} {
		if got := globMatch(tt.pattern, tt.s); got != tt.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
		if got := refMatch(tt.pattern, tt.s); got != tt.want {
			t.Errorf("refMatch(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
}

func TestHasSegment(t *testing.T) {
	for _, tt := range []struct {
		key  string
		want bool
	}{
		{"promo:sku:1001", true},
		{"1001:x", true},
		{"{order:1001}:items", true},
		{"order:order:1001:base", true},
		{"promo:sku:10012", false},
		{"promo:sku:21001", false},
		{"promo:sku:u1001", false},
		{"x:21001:1001", true},
	} {
		if got := hasSegment(tt.key, "1001", ':'); got != tt.want {
			t.Errorf("hasSegment(%q) = %v, want %v", tt.key, got, tt.want)
		}
	}
}

// refMatch follows the server's recursive stringmatchlen step by step; the
// fuzz test holds globMatch's backtracking loop to it.
func refMatch(p, s string) bool {
	for len(p) > 0 && len(s) > 0 {
		switch p[0] {
		case '*':
			for len(p) > 1 && p[1] == '*' {
				p = p[1:]
			}
			if len(p) == 1 {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if refMatch(p[1:], s[i:]) {
					return true
				}
			}
			return false
		case '?':
		case '[':
			q := p[1:]
			not := len(q) > 0 && q[0] == '^'
			if not {
				q = q[1:]
			}
			match := false
			for {
				if len(q) >= 2 && q[0] == '\\' {
					q = q[1:]
					if q[0] == s[0] {
						match = true
					}
				} else if len(q) > 0 && q[0] == ']' {
					break
				} else if len(q) == 0 {
					break
				} else if len(q) >= 3 && q[1] == '-' {
					lo, hi := q[0], q[2]
					if lo > hi {
						lo, hi = hi, lo
					}
					if s[0] >= lo && s[0] <= hi {
						match = true
					}
					q = q[2:]
				} else if q[0] == s[0] {
					match = true
				}
				q = q[1:]
			}
			if not {
				match = !match
			}
			if !match {
				return false
			}
			if len(q) == 0 { // unterminated: the pattern is used up
				p = q
				s = s[1:]
				continue
			}
			p = q // at the ']'
		case '\\':
			if len(p) >= 2 {
				p = p[1:]
			}
			if p[0] != s[0] {
				return false
			}
		default:
			if p[0] != s[0] {
				return false
			}
		}
		p, s = p[1:], s[1:]
	}
	if len(s) == 0 {
		for len(p) > 0 && p[0] == '*' {
			p = p[1:]
		}
	}
	return len(p) == 0 && len(s) == 0
}

// FuzzGlobMatch holds globMatch to the server's algorithm, and checks that
// an escaped text matches itself.
func FuzzGlobMatch(f *testing.F) {
	f.Add("*1001*", "promo:sku:1001")
	f.Add("h[^a-c]l?o*", "hello")
	f.Add(`h[\]x-`, "h]")
	f.Add(`a\`, `a\`)
	f.Add("a*b*c*d", "aXbXcXd")
	f.Fuzz(func(t *testing.T, pattern, s string) {
		if len(pattern) > 64 || len(s) > 64 {
			return // the reference is exponential on many stars
		}
		if got, want := globMatch(pattern, s), refMatch(pattern, s); got != want {
			t.Fatalf("globMatch(%q, %q) = %v, the server's algorithm says %v", pattern, s, got, want)
		}
		if !globMatch(globEscape(s), s) {
			t.Fatalf("escaped %q does not match itself", s)
		}
	})
}
