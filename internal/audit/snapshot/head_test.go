package snapshot

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzCheckHead: whatever a file starts with, the check of its first
// bytes answers (an RDB file, or an error that names what it is) and does
// not panic: gzip, the compressed formats, an append-only file, a Redis 7
// AOF manifest of any lines.
func FuzzCheckHead(f *testing.F) {
	for _, s := range []string{"REDIS0011", "VALKEY080", "\x1f\x8b\x08\x00", "(\xb5/\xfd", "*2\r\n$6\r\nSELECT\r\n",
		"file appendonly.aof.1.base.rdb seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n", "file a type", "file x type b", "file a b c type"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		in := &Input{Name: "dump.rdb", r: bytes.NewReader(b)}
		err := in.checkHead()
		if err != nil && !strings.Contains(err.Error(), "dump.rdb") {
			t.Fatalf("%q: the error does not name the file: %v", b, err)
		}
	})
}
