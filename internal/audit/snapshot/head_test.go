package snapshot

import (
	"bytes"
	"compress/gzip"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// FuzzCheckHead: whatever a file starts with, the check of its first
// bytes answers (an RDB file, or an error that names what it is) and does
// not panic: gzip and zstd (read), the other compressed formats, an append-only file, a Redis 7
// AOF manifest of any lines.
func FuzzCheckHead(f *testing.F) {
	for _, s := range []string{"REDIS0011", "VALKEY080", "\x1f\x8b\x08\x00", "(\xb5/\xfd", "*2\r\n$6\r\nSELECT\r\n",
		"file appendonly.aof.1.base.rdb seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n", "file a type", "file x type b", "file a b c type"} {
		f.Add([]byte(s))
	}
	// Whole gzip and zstd streams, of an RDB file's start and of text.
	zw, _ := zstd.NewWriter(nil)
	for _, s := range []string{"REDIS0011\xfa\tredis-ver", "notes", ""} {
		f.Add(zw.EncodeAll([]byte(s), nil))
		var b bytes.Buffer
		gw := gzip.NewWriter(&b)
		gw.Write([]byte(s))
		gw.Close()
		f.Add(b.Bytes())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		in := &Input{Name: "dump.rdb", r: bytes.NewReader(b)}
		err := in.checkHead()
		Close([]*Input{in})
		if err != nil && !strings.Contains(err.Error(), "dump.rdb") {
			t.Fatalf("%q: the error does not name the file: %v", b, err)
		}
	})
}
