package human

import "testing"

func TestOneLine(t *testing.T) {
	for in, want := range map[string]string{
		"":                          "",
		"ERR  wrong\r\n\tnumber \n": "ERR wrong number",
		"one":                       "one",
	} {
		if got := OneLine(in); got != want {
			t.Errorf("OneLine(%q) = %q, want %q", in, got, want)
		}
	}
}
