package rdb

import (
	"testing"

	"github.com/keyguard/keyguard/internal/jsonkeys"
	"github.com/keyguard/keyguard/internal/valueform"
)

// readString takes a string for a JSON object by its form: an object or
// white space only, as jsonkeys.Object says.
func FuzzFormIsObject(f *testing.F) {
	for _, s := range []string{"", " ", "{", " \n{\"a\":1}", "[1]", "12", "null", "\xac\xed", "  x", "\t\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		form := valueform.Of(b)
		if got, want := form == valueform.Object || form == valueform.Empty, jsonkeys.Object(b); got != want {
			t.Fatalf("%q: form %v, jsonkeys.Object %v", b, form, want)
		}
	})
}
