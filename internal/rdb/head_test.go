package rdb

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/keyguard/keyguard/internal/redistest"
)

// TestHead: on every real file of other projects' test suites, Head reads
// the AUX fields the whole decoding reads before its first key, and says
// a key follows exactly when the decoding returns one; cut anywhere
// before the first key, a file gives Head's error, not a panic.
func TestHead(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(redistest.RDBFixtures(t), "*.rdb"))
	if len(files) < 50 {
		t.Fatalf("%d real RDB files; want the fixtures' 100 or so", len(files))
	}
	withKeys, withAux := 0, 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		d := NewDecoder(bytes.NewReader(data), Options{KeepEmpty: true, SkipChecksum: true})
		_, first := d.Next()
		full := d.Meta()
		meta, keys, err := Head(bytes.NewReader(data))
		name := filepath.Base(f)
		// A key follows unless the decoding met the end first (a file
		// whose first key is damaged has one).
		switch want := first != io.EOF; {
		case first == nil && err != nil:
			t.Errorf("%s: Head: %v; the decoding returned a key", name, err)
		case err == nil && keys != want:
			t.Errorf("%s: Head: keys %v; the decoding: %v", name, keys, first)
		case err == nil && !slices.Equal(meta.Aux, full.Aux):
			t.Errorf("%s: Head's AUX fields %v, the decoding's %v", name, meta.Aux, full.Aux)
		}
		if keys {
			withKeys++
		}
		if len(meta.Aux) > 0 {
			withAux++
		}
		for cut := 0; cut < len(data) && cut < 400; cut++ {
			Head(bytes.NewReader(data[:cut])) // must return
		}
	}
	if withKeys < 40 || withAux < 20 {
		t.Errorf("%d files with keys, %d with AUX fields: the fixtures are not what this test expects", withKeys, withAux)
	}
}

// FuzzHead: on any bytes Head returns, and agrees with the whole
// decoding: its AUX fields are the decoding's, and a key follows when
// the decoding gets past the file's opcodes (a record, or an error inside
// a key), never when the decoding ends first.
func FuzzHead(f *testing.F) {
	for _, data := range corpus(f) {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		meta, keys, err := Head(bytes.NewReader(data))
		if err != nil {
			return
		}
		d := NewDecoder(bytes.NewReader(data), Options{KeepEmpty: true, SkipChecksum: true})
		_, first := d.Next()
		if keys == (first == io.EOF) {
			t.Fatalf("Head: keys %v; the decoding: %v", keys, first)
		}
		if !keys && !slices.Equal(meta.Aux, d.Meta().Aux) {
			t.Fatalf("Head's AUX fields %v, the decoding's %v", meta.Aux, d.Meta().Aux)
		}
	})
}
