package snapshot

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/redistest"
	"github.com/keyguard/keyguard/registry"
)

// gzipFile writes data gzip-compressed to dir/name and returns its path.
func gzipFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(data)
	zw.Close()
	return writeFile(t, dir, name, b.Bytes())
}

// zstdFile writes data zstd-compressed to dir/name and returns its path.
func zstdFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	zw, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer zw.Close()
	return writeFile(t, dir, name, zw.EncodeAll(data, nil))
}

// writeFile writes b to dir/name and returns its path.
func writeFile(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// auditFiles audits the files named, every database, and returns the
// report.
func auditFiles(t *testing.T, reg *registry.Registry, names ...string) *report.Report {
	t.Helper()
	ins, err := Open(names, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer Close(ins)
	res, err := Run(context.Background(), reg, ins, Options{DB: -1})
	if err != nil {
		t.Fatal(err)
	}
	return res.Report
}

// reportJSON audits the files named and returns the report as JSON, with
// what names the input (and when the run started and took) taken out.
func reportJSON(t *testing.T, reg *registry.Registry, names ...string) (string, bool) {
	t.Helper()
	rep := auditFiles(t, reg, names...)
	rep.StartedAt, rep.DurationMS = time.Time{}, 0
	if !rep.Complete {
		// Where a damaged file stopped is told in bytes of the file read:
		// of the compressed file for a gzip-compressed one.
		if rep.Coverage.Share <= 0 || rep.Coverage.Share >= 1 {
			t.Errorf("%s: incomplete, with coverage share %v", names, rep.Coverage.Share)
		}
		rep.Coverage.Share = 0
		for i := range rep.Coverage.NotCovered {
			rep.Coverage.NotCovered[i].Reason = strings.Replace(rep.Coverage.NotCovered[i].Reason, " of its decompressed content", "", 1)
		}
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, n := range names {
		s = strings.ReplaceAll(s, n, "INPUT")
	}
	return s, rep.Complete
}

// TestGzipInput: a backup kept gzip- or zstd-compressed (dump.rdb.gz,
// dump.rdb.zst) is read as the RDB file it holds, with the same report, on
// every real RDB file of other projects' test suites; a truncated one gives
// a partial report; other compressed formats, a broken stream and
// compressed data of something else are named.
func TestGzipInput(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(redistest.RDBFixtures(t), "*.rdb"))
	if len(files) < 50 {
		t.Fatalf("%d real RDB files; want the fixtures' 100 or so", len(files))
	}
	reg, err := registry.Parse("r.yaml", []byte("version: 1\nkeys: []\n"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	read := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Open([]string{f}, nil); err != nil {
			continue // not an RDB file to begin with
		}
		plain, plainDone := reportJSON(t, reg, f)
		for _, z := range []string{gzipFile(t, dir, filepath.Base(f)+".gz", data), zstdFile(t, dir, filepath.Base(f)+".zst", data)} {
			zipped, zippedDone := reportJSON(t, reg, z)
			if plain != zipped || plainDone != zippedDone {
				i := 0
				for i < min(len(plain), len(zipped)) && plain[i] == zipped[i] {
					i++
				}
				from := max(0, i-80)
				t.Errorf("%s: the compressed file gives another report (complete %v, %v), from byte %d:\n%.160s\n%.160s",
					filepath.Base(z), plainDone, zippedDone, i, plain[from:], zipped[from:])
			}
		}
		read++
	}
	if read < 50 {
		t.Fatalf("only %d fixtures read", read)
	}

	// Truncated: the keys before the cut, reported incomplete.
	big, err := os.ReadFile(redistest.RDBFixture(t, "hdt__cases_memory.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(big)
	zw.Close()
	cut := filepath.Join(dir, "cut.rdb.gz")
	os.WriteFile(cut, b.Bytes()[:b.Len()*2/3], 0o600)
	if _, done := reportJSON(t, reg, cut); done {
		t.Error("a truncated gzip file was reported complete")
	}
	whole, _ := os.ReadFile(zstdFile(t, dir, "whole.rdb.zst", big))
	cut = filepath.Join(dir, "cut.rdb.zst")
	os.WriteFile(cut, whole[:len(whole)*2/3], 0o600)
	// A zstd block is decoded whole or not at all (up to 128 KiB): a file
	// cut inside its first block is a stream that cannot be read, said
	// before anything is decoded (TestTruncatedShare cuts a larger one).
	ins, err := Open([]string{cut}, nil)
	Close(ins)
	if err == nil || !strings.Contains(err.Error(), "looks zstd-compressed but its content cannot be read (unexpected EOF)") {
		t.Errorf("a zstd file cut in its first block: %v", err)
	}

	for _, tt := range []struct {
		name string
		data []byte
		want string
	}{
		{"dump.rdb.zst", []byte{0x28, 0xb5, 0x2f, 0xfd, 0, 0, 0, 0, 0, 0}, "looks zstd-compressed but its content cannot be read"},
		{"notes.txt.zst", nil, "holds zstd-compressed data that is not an RDB file"},
		{"empty.rdb.zst", nil, "is empty"},
		{"cut.gz", nil, "looks gzip-compressed but its content cannot be read"},
		{"dump.rdb.lz4", []byte{0x04, 0x22, 0x4d, 0x18, 0, 0, 0, 0, 0}, "is lz4-compressed"},
		{"dump.rdb.xz", []byte{0xfd, '7', 'z', 'X', 'Z', 0, 0, 0, 0}, "is xz-compressed"},
		{"dump.rdb.bz2", []byte("BZh91AY&SY"), "is bzip2-compressed"},
		{"dump.zip", []byte("PK\x03\x04\x14\x00\x00\x00\x08"), "is zip-compressed"},
		{"notes.txt.gz", nil, "holds gzip-compressed data that is not an RDB file"},
		{"empty.rdb.gz", []byte{}, "is empty"},
		{"bad.gz", []byte{0x1f, 0x8b, 0, 0, 0, 0, 0, 0, 0, 0}, "looks gzip-compressed but is not"},
	} {
		p := filepath.Join(dir, tt.name)
		switch tt.name {
		case "notes.txt.gz":
			p = gzipFile(t, dir, tt.name, []byte("hello, these are notes\n"))
		case "empty.rdb.gz":
			p = gzipFile(t, dir, tt.name, nil)
		case "notes.txt.zst":
			p = zstdFile(t, dir, tt.name, []byte("hello, these are notes\n"))
		case "empty.rdb.zst":
			p = zstdFile(t, dir, tt.name, nil)
		case "cut.gz": // its header whole, its stream cut before the first bytes of content
			full, _ := os.ReadFile(gzipFile(t, dir, "full.gz", bytes.Repeat([]byte("REDIS0011 and more"), 100)))
			os.WriteFile(p, full[:12], 0o600)
		default:
			os.WriteFile(p, tt.data, 0o600)
		}
		ins, err := Open([]string{p}, nil)
		Close(ins)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
}

// TestTruncatedShare: a dump cut in half (copied while the save still
// wrote it, the commonest damage) is read to its end, yet holds half the
// keys: the report's coverage says about half, from the keys the file
// declares, not the 99.9% of its bytes read. The same file
// gzip- or zstd-compressed says the same.
func TestTruncatedShare(t *testing.T) {
	s := redistest.Start(t)
	ctx := context.Background()
	rdb := s.Client(t)
	pipe := rdb.Pipeline()
	for i := range 20000 {
		pipe.Set(ctx, fmt.Sprintf("cache:item:%d", i), strings.Repeat("v", 40), 0)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(s.Dir, "dump.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	half := filepath.Join(dir, "half.rdb")
	os.WriteFile(half, data[:len(data)/2], 0o600)
	reg, err := registry.Parse("r.yaml", []byte("version: 1\nkeys: []\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{half, gzipFile(t, dir, "half.rdb.gz", data[:len(data)/2]), zstdFile(t, dir, "half.rdb.zst", data[:len(data)/2])} {
		rep := auditFiles(t, reg, name)
		if rep.Complete || rep.Summary.Keys < 8000 || rep.Summary.Keys > 12000 { // the order of a dump's keys follows the server's hash seed
			t.Fatalf("%s: complete %v, %d keys; want about half of 20,000, incomplete", name, rep.Complete, rep.Summary.Keys)
		}
		if want := float64(rep.Summary.Keys) / 20000; rep.Coverage.Share > want+0.001 || rep.Coverage.Share < want-0.05 {
			t.Errorf("%s: %d keys of 20,000 read, coverage share %.3f; want %.3f", name, rep.Summary.Keys, rep.Coverage.Share, want)
		}
	}
}
