package snapshot

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/klauspost/compress/gzip"

	"github.com/keyguard/keyguard/internal/rdb"
)

// twin is what sameKeys knows of a file before reading it.
type twin struct {
	in   *Input
	repl string  // the repl-id AUX field: the replication history of the server that wrote it
	keys bool    // a key follows the file's header
	tail [8]byte // the last 8 bytes of an uncompressed file: its CRC64 (zero: none)
}

// sameKeys refuses files that hold the same keys, which a run would count
// once per file (several files are read as the nodes of one Cluster, or
// shards): one file under two names (a link, ./dump.rdb), a copy of a file
// (the same size and CRC64 trailer), or two snapshots of one server's data
// (the same replication ID: a master's and its replica's, or one server's
// at two times; every master of a Cluster has its own). Only files holding
// keys are compared by content: two copies of an empty snapshot count
// nothing twice. What cannot be read here is left for the decoders to
// report.
func sameKeys(ins []*Input) error {
	if len(ins) < 2 {
		return nil
	}
	var seen []twin
	var dup []string // one line per file that repeats an earlier one
	for _, in := range ins {
		if in.info == nil {
			continue // stdin, a stream
		}
		t := twin{in: in}
		if meta, keys, err := in.head(); err == nil {
			t.repl, _ = meta.AuxValue("repl-id")
			t.keys = keys
		}
		if in.codec == "" && in.Size > 9+8 {
			if _, err := in.file.ReadAt(t.tail[:], in.Size-8); err != nil {
				t.tail = [8]byte{}
			}
		}
		if why := t.repeats(seen); why != "" {
			dup = append(dup, why)
			continue
		}
		seen = append(seen, t)
	}
	const hint = "name each file once, one per master (several files are read as the nodes of one Cluster)"
	switch len(dup) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("%s: their keys would be counted twice; %s", dup[0], hint)
	}
	return fmt.Errorf("%d files hold the keys of another file named, which would be counted twice:\n\t%s\n%s",
		len(dup), strings.Join(dup, "\n\t"), hint)
}

// repeats says which of seen t holds the keys of, and how it knows; ""
// none.
func (t *twin) repeats(seen []twin) string {
	in := t.in
	for _, o := range seen {
		if os.SameFile(o.in.info, in.info) {
			return fmt.Sprintf("%s and %s are the same file", o.in.Display(), in.Display())
		}
	}
	for _, o := range seen {
		switch {
		case !o.keys || !t.keys:
		case o.in.codec == "" && in.codec == "" && o.in.Size == in.Size && t.tail != [8]byte{} && o.tail == t.tail:
			return fmt.Sprintf("%s is a copy of %s (the same size and CRC64 checksum)", in.Display(), o.in.Display())
		case t.repl != "" && o.repl == t.repl:
			return fmt.Sprintf("%s and %s are snapshots of one server's data (replication ID %s): a master's and its replica's, or one server's at two times", o.in.Display(), in.Display(), t.repl)
		}
	}
	return ""
}

// head reads what the file holds before its first key (rdb.Head),
// through a handle of its own: in's reader stays where it is.
func (in *Input) head() (*rdb.Meta, bool, error) {
	if in.codec == "" {
		return rdb.Head(io.NewSectionReader(in.file, 0, in.Size))
	}
	f, err := os.Open(in.Name)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	switch in.codec {
	case "gzip":
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, false, err
		}
		return rdb.Head(zr)
	case "zstd":
		zr, err := newZstd(f)
		if err != nil {
			return nil, false, err
		}
		defer zr.Close()
		return rdb.Head(zr)
	}
	return nil, false, fmt.Errorf("%s: codec %s", in.Display(), in.codec)
}
