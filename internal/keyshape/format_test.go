package keyshape

import (
	"strconv"
	"strings"
	"testing"

	"github.com/keyguard/keyguard/keytmpl"
)

func argHoles(v Verb) Shape {
	return VerbHole(v, "a"+strconv.Itoa(v.Arg), "")
}

func TestPrintf(t *testing.T) {
	for _, tt := range []struct {
		format, want string
		ok           bool
	}{
		{"user:%d:info", "user:{a0:int}:info", true},
		{"user:%s:%s", "user:{a0}:{a1}", true},
		{"%[2]s:%[1]d", "{a1}:{a0:int}", true},
		{"%2$s:%1$s", "{a1}:{a0}", true},
		{"rate:%x", "rate:{a0:hex}", true},
		{"100%%:%s", "100%:{a0}", true},
		{"%05d", "{a0:int}", true},
		{"a%nb", "a\nb", true},
		{"%-10s|", "{a0}|", true},
		{"%*d", "", false},
		{"%(name)s", "", false},
		{"trailing %", "", false},
		{"%[x]d", "", false},
		{"%0$s", "", false},
		{"no verbs", "no verbs", true},
	} {
		s, ok := Printf(tt.format, argHoles)
		if ok != tt.ok || ok && s.String() != tt.want {
			t.Errorf("Printf(%q) = %q, %v; want %q, %v", tt.format, s, ok, tt.want, tt.ok)
		}
	}
}

func TestBrace(t *testing.T) {
	for _, tt := range []struct {
		format, want string
		ok           bool
	}{
		{"user:{}:info", "user:{f0}:info", true},
		{"user:{0}:{1}", "user:{0}:{1}", true},
		{"user:{uid}:{scene}", "user:{uid}:{scene}", true},
		{"{{tag}}:{}", "{{tag}}:{f0}", true},
		{"{:>10}", "{f0}", true},
		{"{", "", false},
		{"}", "", false},
		{"{a{b}}", "", false},
	} {
		s, ok := Brace(tt.format, func(f Field) Shape {
			n := f.Name
			if n == "" {
				n = "f" + strconv.Itoa(f.Auto)
			}
			return Hole(keytmpl.Any, n, "")
		})
		if ok != tt.ok || ok && s.String() != tt.want {
			t.Errorf("Brace(%q) = %q, %v; want %q, %v", tt.format, s, ok, tt.want, tt.ok)
		}
	}
}

// FuzzPrintf holds Printf to its contract: no panic, and a format without
// '%' is its own literal.
func FuzzPrintf(f *testing.F) {
	for _, s := range []string{"user:%d:info", "%[2]s:%[1]d", "%2$s", "100%%", "%*d", "%", "%-08.3f", "a%nb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, format string) {
		s, ok := Printf(format, argHoles)
		if !strings.Contains(format, "%") {
			if lit, isLit := s.Literal(); !ok || !isLit || lit != format {
				t.Fatalf("Printf(%q) = %q, %v", format, s, ok)
			}
		}
		if ok {
			for _, p := range s.Parts {
				if !p.Hole && p.Lit == "" {
					t.Fatalf("empty literal part in %q", format)
				}
			}
		}
	})
}

// FuzzBrace: no panic, and a format without braces is its own literal.
func FuzzBrace(f *testing.F) {
	for _, s := range []string{"user:{}:info", "{0}{1}", "{{x}}", "{a!r:>3}", "{", "}}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, format string) {
		s, ok := Brace(format, func(f Field) Shape { return Hole(keytmpl.Any, f.Name, "") })
		if !strings.ContainsAny(format, "{}") {
			if lit, isLit := s.Literal(); !ok || !isLit || lit != format {
				t.Fatalf("Brace(%q) = %q, %v", format, s, ok)
			}
		}
	})
}
