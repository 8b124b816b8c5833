package registry

import (
	"strings"
	"testing"

	"github.com/keyguard/keyguard/finding"
)

// TestCheckValueOffsets: a bad byte in a placeholder's value is reported at
// its position in the key, not in the value, through Check and CheckEntry,
// for a hot key's copy too (its suffix before the value counts); angle
// brackets (markup) are flagged in values like quotes.
func TestCheckValueOffsets(t *testing.T) {
	r, err := Parse("k.yaml", []byte(`version: 1
domains:
  catalog: {owner: catalog-team}
keys:
  - key: "catalog:product:{name}"
    ttl: 1h
  - key: "{{catalog:{name}}}:tags:{tag}"
    ttl: 1h
    hot: {replicas: 4}
`))
	if err != nil {
		t.Fatal(err)
	}
	c := r.NewChecker()
	for _, tt := range []struct {
		key, want string // want: the charset message, "" for none
	}{
		{`catalog:product:a"b`, `quote '"' at byte 17`},
		{`catalog:product:"`, `quote '"' at byte 16`},
		{"catalog:product:<script>", `angle bracket '<' at byte 16`},
		{"catalog:product:x>y", `angle bracket '>' at byte 17`},
		{"catalog:product:a b", "space at byte 17"},
		{"catalog:product:a-b.c_d;e=f?g", ""},
		{`{catalog:ab}:tags:x"y`, `quote '"' at byte 19`},
		{`{catalog:ab#3}:tags:x"y`, `quote '"' at byte 21`}, // after the copy suffix
		{`{catalog:a"b#3}:tags:xy`, `quote '"' at byte 10`}, // before it
		{`{catalog:a<b#12}:tags:x`, `angle bracket '<' at byte 10`},
	} {
		for _, via := range []string{"Check", "CheckEntry"} {
			var got []string
			emit := func(f finding.Finding) {
				if f.Rule == finding.Charset {
					got = append(got, f.Message)
				}
			}
			var res Result
			if via == "Check" {
				res = c.Check(tt.key, emit)
			} else {
				res = c.CheckEntry(tt.key, r.Lookup(tt.key), emit)
			}
			if res.Entry == nil {
				t.Fatalf("%s(%q): unregistered", via, tt.key)
			}
			switch {
			case tt.want == "" && len(got) > 0:
				t.Errorf("%s(%q) = %q, want no charset finding", via, tt.key, got)
			case tt.want != "" && (len(got) != 1 || !strings.Contains(got[0], tt.want)):
				t.Errorf("%s(%q) = %q, want %q", via, tt.key, got, tt.want)
			}
			if tt.want != "" {
				at := strings.LastIndex(tt.want, " ")
				var n int
				for _, d := range tt.want[at+1:] {
					n = n*10 + int(d-'0')
				}
				if b := tt.key[n]; !strings.ContainsRune(`"<> `, rune(b)) {
					t.Errorf("%q: byte %d is %q, not the one reported", tt.key, n, b)
				}
			}
		}
	}
}
