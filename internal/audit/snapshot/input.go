package snapshot

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/keyguard/keyguard/internal/keyslot"
)

// Input is one RDB file of a run, checked and open.
type Input struct {
	Name string // as given; "-" is stdin
	Size int64  // 0 unknown (a pipe)
	Mod  time.Time

	r      io.Reader
	file   *os.File    // nil for stdin and streams
	info   os.FileInfo // file's, for sameKeys
	closer io.Closer   // a stream's connection
	stream bool        // a snapshot arriving from a server (Stream), not a file
	// codec is what the file is compressed with, "gzip" or "zstd" ("":
	// none); it is then read whole (Size is 0), inflated ahead of the
	// decoder in a goroutine of its own.
	codec string
	ahead *ahead
	zstd  *zstd.Decoder
	// zsize and zread are a compressed file's size and the bytes of it
	// read so far: where the decoding is, in a file whose decompressed
	// size is not known.
	zsize int64
	zread atomic.Int64
	// owned are the Cluster slots the node that sent a stream serves
	// (OwnSlots); nil: not checked.
	owned []bool
	read  atomic.Int64
	done  atomic.Bool
}

// Read reads the file, counting the bytes for Progress.
func (in *Input) Read(p []byte) (int, error) {
	n, err := in.r.Read(p)
	in.read.Add(int64(n))
	return n, err
}

// Display is the name for messages: "stdin" for "-".
func (in *Input) Display() string { return DisplayName(in.Name) }

// Stream is an input read from r, a snapshot arriving over the network
// (a server's replication link), named name in reports; size 0 when
// unknown. Close closes closer.
func Stream(name string, r io.Reader, size int64, closer io.Closer) *Input {
	return &Input{Name: name, Size: max(size, 0), Mod: time.Now(), r: r, closer: closer, stream: true}
}

// OwnSlots says which Cluster slots the node whose snapshot in is
// serves: keys of other slots are counted as usual (the node holds them
// and their memory) and named in a note, since clients are sent
// elsewhere for them.
func (in *Input) OwnSlots(slots []int) {
	in.owned = make([]bool, keyslot.Slots)
	for _, s := range slots {
		if s >= 0 && s < keyslot.Slots {
			in.owned[s] = true
		}
	}
}

// Close closes every input opened from a file, and every stream.
func Close(ins []*Input) {
	for _, in := range ins {
		if in.ahead != nil {
			in.ahead.Close()
		}
		if in.zstd != nil {
			in.zstd.Close()
		}
		if in.file != nil {
			in.file.Close()
		}
		if in.closer != nil {
			in.closer.Close()
		}
	}
}

// Open opens every file ("-" reads stdin) and checks that each starts
// like an RDB file, so that a typo or a wrong file fails before anything
// is decoded or written. On error the inputs opened so far are returned
// too, for Close.
func Open(names []string, stdin io.Reader) ([]*Input, error) {
	var ins []*Input
	seen := map[string]bool{}
	for _, name := range names {
		if seen[name] {
			return ins, fmt.Errorf("%s is named twice: its keys would be counted twice", name)
		}
		seen[name] = true
		in := &Input{Name: name, r: stdin, Mod: time.Now()}
		if name != "-" {
			f, err := os.Open(name)
			if err != nil {
				return ins, err // "open NAME: no such file or directory"
			}
			in.file, in.r = f, f
			fi, err := f.Stat()
			switch {
			case err != nil:
				f.Close()
				return ins, err
			case fi.IsDir():
				f.Close()
				return ins, dirError(name)
			case fi.Mode().IsRegular():
				in.Size = fi.Size()
			}
			in.Mod, in.info = fi.ModTime(), fi
		}
		ins = append(ins, in)
		if err := in.checkHead(); err != nil {
			return ins, err
		}
	}
	return ins, sameKeys(ins)
}

// checkHead reads the input's first bytes and checks that they begin an
// RDB file. A gzip- or zstd-compressed file (a backup's dump.rdb.gz) is
// read through its decompressor, whole and in order (no parts, no progress
// in per cent: its size is not the snapshot's); other compressed formats
// are named, with the command that feeds their content to keyguard.
func (in *Input) checkHead() error {
	name := in.Display()
	var head [9]byte
	n, err := io.ReadFull(in.r, head[:])
	switch {
	case n == 0 && (err == io.EOF || err == nil):
		return fmt.Errorf("%s is empty: a snapshot holds at least a 9-byte header; copy it again once the save has finished", name)
	case err != nil && in.codec != "" && n < len(head):
		// The decompressor's own error: a stream broken or cut short.
		return fmt.Errorf("%s looks %s-compressed but its content cannot be read (%v): copy it again", name, in.codec, err)
	case err != nil && err != io.ErrUnexpectedEOF:
		return fmt.Errorf("read %s: %w", name, err)
	}
	in.r = io.MultiReader(bytes.NewReader(head[:n]), in.r)
	if rdbHeader(head[:n]) {
		return nil
	}
	if in.codec != "" {
		return fmt.Errorf("%s holds %s-compressed data that is not an RDB file: it starts with %q, not REDIS and a 4-digit version (Redis, Valkey up to 8) or VALKEY and a 3-digit one (Valkey 9)", name, in.codec, head[:n])
	}
	var zr io.Reader
	switch {
	case n >= 2 && head[0] == 0x1f && head[1] == 0x8b:
		in.codec = "gzip"
		zr, err = gzip.NewReader(zcount{in.r, &in.zread})
	case bytes.HasPrefix(head[:n], zstdMagic):
		in.codec = "zstd"
		in.zstd, err = newZstd(zcount{in.r, &in.zread})
		zr = in.zstd
	}
	if in.codec != "" {
		if err != nil {
			return fmt.Errorf("%s looks %s-compressed but is not (%v): copy it again", name, in.codec, err)
		}
		in.ahead = readAhead(zr)
		in.r, in.zsize, in.Size = in.ahead, in.Size, 0
		return in.checkHead()
	}
	for _, c := range compressed {
		if bytes.HasPrefix(head[:n], c.magic) {
			return fmt.Errorf("%s is %s-compressed: decompress it first, or feed it through a pipe: %s %s | keyguard rdb -", name, c.name, c.cat, name)
		}
	}
	if err := in.appendOnly(head[:n]); err != nil {
		return err
	}
	return fmt.Errorf("%s is not an RDB file: it starts with %q, not REDIS and a 4-digit version (Redis, Valkey up to 8) or VALKEY and a 3-digit one (Valkey 9)", name, head[:n])
}

// newZstd reads the zstd stream r on one goroutine (the read-ahead is
// the other core's work), with a window bounded as zstd -d bounds it
// unless told otherwise (--long=27, 128 MiB).
func newZstd(r io.Reader) (*zstd.Decoder, error) {
	return zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(1<<27))
}

// dirError is the error for a directory given as an RDB file: it names
// the snapshots the directory holds (a server's dir: dump.rdb, or the base
// of its appendonlydir), or says to name one.
func dirError(name string) error {
	var found []string
	for _, pat := range []string{"*.rdb", "*.rdb.gz", "*.rdb.zst", filepath.Join("appendonlydir", "*.base.rdb")} {
		m, _ := filepath.Glob(filepath.Join(name, pat))
		found = append(found, m...)
	}
	switch {
	case len(found) == 1:
		return fmt.Errorf("%s is a directory: it holds one snapshot, %s: keyguard rdb %s", name, filepath.Base(found[0]), found[0])
	case len(found) > 1:
		const most = 6
		more := ""
		if len(found) > most {
			more = fmt.Sprintf(" and %d more", len(found)-most)
			found = found[:most]
		}
		return fmt.Errorf("%s is a directory: name the snapshot to read (several only when they are the nodes of one Cluster): %s%s", name, strings.Join(found, ", "), more)
	}
	return fmt.Errorf("%s is a directory that holds no snapshot (*.rdb): name the RDB file (a server writes it where its dir and dbfilename settings say, dump.rdb by default)", name)
}

// appendOnly names an append-only file (AOF) or a Redis 7 AOF manifest
// given for a snapshot, and the snapshot to read instead; nil for
// anything else. head is the input's first bytes.
func (in *Input) appendOnly(head []byte) error {
	name := in.Display()
	switch {
	case len(head) >= 4 && head[0] == '*' && bytes.Contains(head, []byte("\r\n$")):
		return fmt.Errorf("%s is an append-only file (AOF: the commands the server logged), not a snapshot: read the snapshot instead, the appendonly.aof.N.base.rdb beside it in the appendonlydir of Redis 7 (an RDB when aof-use-rdb-preamble is on, the default), or one the server writes now (redis-cli --rdb dump.rdb)", name)
	case bytes.HasPrefix(head, []byte("file ")):
		// The manifest is small: its base file is the snapshot to read.
		b, _ := io.ReadAll(io.LimitReader(in.r, 1<<20))
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if t := slices.Index(f, "type"); len(f) >= 4 && f[0] == "file" && t > 0 && t+1 < len(f) && f[t+1] == "b" {
				base := f[1]
				if in.Name != "-" {
					base = filepath.Join(filepath.Dir(in.Name), base)
				}
				if strings.HasSuffix(f[1], ".rdb") {
					return fmt.Errorf("%s is the manifest of a Redis 7 append-only file: its base is the snapshot: keyguard rdb %s", name, base)
				}
				return fmt.Errorf("%s is the manifest of a Redis 7 append-only file whose base, %s, is an AOF of commands (aof-use-rdb-preamble no), not a snapshot: take one with redis-cli --rdb dump.rdb", name, base)
			}
		}
		return fmt.Errorf("%s is the manifest of a Redis 7 append-only file, not a snapshot: read the appendonly.aof.N.base.rdb it names, or take one with redis-cli --rdb dump.rdb", name)
	}
	return nil
}

// zcount counts the compressed bytes the decompressor reads of an input.
type zcount struct {
	r io.Reader
	n *atomic.Int64
}

func (z zcount) Read(p []byte) (int, error) {
	n, err := z.r.Read(p)
	z.n.Add(int64(n))
	return n, err
}

// position is how far the input has been read, of how much (0: not
// known): of the file's own bytes for a compressed file.
func (in *Input) position() (read, total int64) {
	if in.codec != "" {
		return in.zread.Load(), in.zsize
	}
	return in.read.Load(), in.Size
}

// zstdMagic begins a zstd frame.
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// compressed are the formats an RDB backup is often kept in that keyguard
// does not read itself, by their first bytes.
var compressed = []struct {
	name, cat string
	magic     []byte
}{
	{"lz4", "lz4 -dc", []byte{0x04, 0x22, 0x4d, 0x18}},
	{"xz", "xz -dc", []byte{0xfd, '7', 'z', 'X', 'Z', 0}},
	{"bzip2", "bzip2 -dc", []byte("BZh")},
	{"zip", "unzip -p", []byte("PK\x03\x04")},
}

// rdbHeader reports whether b starts as an RDB file: REDIS and four
// digits, or Valkey 9's VALKEY and three (the decoder names a format
// version it does not read).
func rdbHeader(b []byte) bool {
	var digits []byte
	switch {
	case len(b) >= 9 && string(b[:5]) == "REDIS":
		digits = b[5:9]
	case len(b) >= 9 && string(b[:6]) == "VALKEY":
		digits = b[6:9]
	default:
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// DisplayName is how reports and messages name an input: "stdin" for "-".
func DisplayName(name string) string {
	if name == "-" {
		return "stdin"
	}
	return name
}
