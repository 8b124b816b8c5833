package report

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// Key changes between two key exports.
const (
	KeyAdded   = "added"
	KeyRemoved = "removed"
	KeyType    = "type"   // the key holds another type
	KeyGrown   = "grown"  // more bytes, past the thresholds
	KeyShrunk  = "shrunk" // fewer bytes, past the thresholds
)

// KeyChangeKinds are the kinds of change, in report order.
var KeyChangeKinds = []string{KeyAdded, KeyRemoved, KeyType, KeyGrown, KeyShrunk}

// KeyChange is one key that changed.
type KeyChange struct {
	Change   string `json:"change"`
	DB       int    `json:"db"`
	Key      string `json:"key"`
	Group    string `json:"group"` // the template or family: the new side's, else the old's
	OldType  string `json:"old_type,omitempty"`
	NewType  string `json:"new_type,omitempty"`
	OldBytes int64  `json:"old_bytes"` // -1 unknown or absent (null in JSON)
	NewBytes int64  `json:"new_bytes"`
}

// KeyDiffOptions tune KeyDiff.
type KeyDiffOptions struct {
	// A key whose size both sides know has grown or shrunk when it
	// changed by at least MinBytes and by at least Ratio of the old size.
	MinBytes int64
	Ratio    float64
	// BucketBytes is about how much of the inputs is compared in memory
	// at once: larger inputs are first split by a hash of the key into
	// buckets of this size, in temporary files under TempDir ("" the
	// system's). 0: 64 MiB.
	BucketBytes int64
	TempDir     string
	// SizeHint is the inputs' size in bytes when known (files), to
	// choose the number of buckets; 0 splits into 16.
	SizeHint int64
	// Stop, when set, is asked every few thousand rows; an error ends
	// the diff with it (an interrupt).
	Stop func() error
}

// maxBuckets bounds the temporary files open at once (one per bucket and
// side while splitting); past 256 × BucketBytes of input the buckets grow.
const maxBuckets = 256

// Default thresholds of a grown or shrunk key.
const (
	DefaultKeyDiffMinBytes = 1024
	DefaultKeyDiffRatio    = 0.5
)

// KeyDiffGroup counts the changes of one template or family.
type KeyDiffGroup struct {
	Group      string `json:"group"`
	Added      int64  `json:"added"`
	Removed    int64  `json:"removed"`
	Type       int64  `json:"type"`
	Grown      int64  `json:"grown"`
	Shrunk     int64  `json:"shrunk"`
	BytesDelta int64  `json:"bytes_delta"` // of the keys counted here
}

// KeyDiffSummary is what KeyDiff counted.
type KeyDiffSummary struct {
	OldKeys, NewKeys int64
	// SizeUnknown counts the keys on both sides whose size one side did
	// not measure (an empty bytes cell, a null): they are compared by
	// type only, never reported grown or shrunk.
	SizeUnknown int64
	Groups      []KeyDiffGroup // most changes first
}

// KeyDiff compares two key exports row by row and calls emit with every
// change: the keys of old missing from new (removed), of new missing from
// old (added), and of both whose type changed or whose size moved past
// the thresholds. The change emit is given is valid during the call: a
// caller that keeps it copies it (its strings may be kept). Inputs
// larger than a bucket are split by a hash of (db, key) into temporary
// files first, so memory is about one bucket whatever their size.
// Changes come bucket by bucket, sorted by db and key within a bucket:
// the same order for the same inputs on every run.
func KeyDiff(old, new *KeyReader, o KeyDiffOptions, emit func(*KeyChange) error) (*KeyDiffSummary, error) {
	if o.BucketBytes <= 0 {
		o.BucketBytes = 64 << 20
	}
	if o.MinBytes < 0 {
		o.MinBytes = 0
	}
	d := &keyDiff{o: o, emit: emit, groups: map[string]*KeyDiffGroup{}}
	buckets := 16
	if o.SizeHint > 0 {
		buckets = int(min(max(o.SizeHint/o.BucketBytes+1, 1), maxBuckets))
	}
	var err error
	if buckets == 1 {
		var ot *keyTable
		if ot, err = loadTable(&readerSource{r: old, n: &d.sum.OldKeys, stop: o.Stop}); err != nil {
			err = fmt.Errorf("old: %w", err)
		} else {
			err = d.compare(ot, &readerSource{r: new, n: &d.sum.NewKeys, stop: o.Stop})
		}
	} else {
		err = d.split(old, new, buckets)
	}
	if err != nil {
		return nil, err
	}
	for _, g := range d.groups {
		d.sum.Groups = append(d.sum.Groups, *g)
	}
	slices.SortFunc(d.sum.Groups, func(a, b KeyDiffGroup) int {
		return cmp.Or(cmp.Compare(b.total(), a.total()), strings.Compare(a.Group, b.Group))
	})
	return &d.sum, nil
}

func (g *KeyDiffGroup) total() int64 { return g.Added + g.Removed + g.Type + g.Grown + g.Shrunk }

type keyDiff struct {
	o      KeyDiffOptions
	emit   func(*KeyChange) error
	groups map[string]*KeyDiffGroup
	sum    KeyDiffSummary
}

// readerSource gives an export's rows one by one (a rowScan), counting
// them.
type readerSource struct {
	r    *KeyReader
	n    *int64
	stop func() error
}

func (s *readerSource) scan(v *keyRowView) error {
	var r KeyRow
	if err := s.r.Next(&r); err != nil {
		return err
	}
	*v = keyRowView{db: int32(r.DB), key: r.Key, typ: r.Type, group: r.Group, bytes: r.Bytes}
	if *s.n++; *s.n&4095 == 0 && s.stop != nil {
		return s.stop()
	}
	return nil
}

// compare diffs one bucket: old's rows by (db, key), new's streamed past
// them; the changes go to emit sorted by db and key.
//
// old is a table without pointers (keyTable), and so are the changes,
// kept as references to old's rows and to new's changed rows (copied to
// a table of their own), until they are emitted: a diff of two unrelated
// 1M-key snapshots holds ~1.8M changes, and as structs of strings, grown
// by append and sorted while the collector ran, its write barriers,
// scans and page faults were most of the run.
func (d *keyDiff) compare(old *keyTable, newRows rowScan) error {
	idx := old.index()
	matched := make([]bool, len(old.rows))
	new := &keyTable{} // new's rows that changed
	var changes []keyRef
	var r keyRowView
	for {
		err := newRows.scan(&r)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("new: %w", err)
		}
		i := idx.find(old, r.db, r.key)
		if i < 0 || matched[i] {
			// Not in old, or a key new holds twice: its second row.
			changes = append(changes, keyRef{change: changeAdded, old: -1, new: new.add(r.db, r.key, r.typ, r.group, r.bytes)})
			continue
		}
		matched[i] = true
		o := &old.rows[i]
		if o.bytes < 0 || r.bytes < 0 {
			d.sum.SizeUnknown++
		}
		ot := old.names.at(o.typ)
		switch {
		case ot != r.typ && ot != "" && r.typ != "":
			changes = append(changes, keyRef{change: changeType, old: int32(i), new: new.add(r.db, r.key, r.typ, r.group, r.bytes)})
		case o.bytes >= 0 && r.bytes >= 0 && d.moved(o.bytes, r.bytes):
			c := changeGrown
			if r.bytes < o.bytes {
				c = changeShrunk
			}
			changes = append(changes, keyRef{change: c, old: int32(i), new: new.add(r.db, r.key, r.typ, r.group, r.bytes)})
		}
	}
	// A key old holds twice counts once, as its last row (idx holds it).
	for _, v := range idx.slots {
		if i := int32(v) - 1; i >= 0 && !matched[i] {
			changes = append(changes, keyRef{change: changeRemoved, old: i, new: -1})
		}
	}
	sortChanges(changes, old, new)
	var c KeyChange // one for every call of emit
	for i := range changes {
		c = changes[i].keyChange(old, new)
		d.count(&c)
		if err := d.emit(&c); err != nil {
			return err
		}
	}
	return nil
}

// moved reports whether a size changed past both thresholds.
func (d *keyDiff) moved(old, new int64) bool {
	delta := new - old
	if delta < 0 {
		delta = -delta
	}
	return delta > 0 && delta >= d.o.MinBytes && float64(delta) >= d.o.Ratio*float64(old)
}

func (d *keyDiff) count(c *KeyChange) {
	g := d.groups[c.Group]
	if g == nil {
		g = &KeyDiffGroup{Group: c.Group}
		d.groups[c.Group] = g
	}
	switch c.Change {
	case KeyAdded:
		g.Added++
		g.BytesDelta += max(c.NewBytes, 0)
	case KeyRemoved:
		g.Removed++
		g.BytesDelta -= max(c.OldBytes, 0)
	case KeyType:
		g.Type++
		if c.OldBytes >= 0 && c.NewBytes >= 0 {
			g.BytesDelta += c.NewBytes - c.OldBytes
		}
	case KeyGrown:
		g.Grown++
		g.BytesDelta += c.NewBytes - c.OldBytes
	case KeyShrunk:
		g.Shrunk++
		g.BytesDelta += c.NewBytes - c.OldBytes
	}
}

// split writes both inputs into n bucket files each by a hash of (db,
// key), then compares bucket by bucket.
func (d *keyDiff) split(old, new *KeyReader, n int) error {
	dir, err := os.MkdirTemp(d.o.TempDir, "keyguard-diff-")
	if err != nil {
		return fmt.Errorf("key diff: temporary files: %w", err)
	}
	defer os.RemoveAll(dir)
	for side, in := range []*KeyReader{old, new} {
		count := &d.sum.OldKeys
		if side == 1 {
			count = &d.sum.NewKeys
		}
		if err := splitInto(dir, side, n, in, count, d.o.Stop); err != nil {
			return err
		}
	}
	for b := range n {
		if err := d.compareBucket(dir, b); err != nil {
			return err
		}
	}
	return nil
}

// compareBucket compares bucket b of both sides: old's read whole, new's
// streamed past it.
func (d *keyDiff) compareBucket(dir string, b int) error {
	old, err := loadBucket(dir, 0, b, d.o.Stop)
	if err != nil {
		return fmt.Errorf("old: %w", err)
	}
	src, f, err := openBucket(dir, 1, b, d.o.Stop)
	if err != nil {
		return err
	}
	defer f.Close()
	return d.compare(old, src)
}

// bucketOf is the bucket of (db, key) among n: a fixed hash (FNV-1a), so
// that a diff of the same inputs lists its changes in the same order on
// every run (a seed drawn per run changed which changes a text report
// listed first).
func bucketOf(db int, key string, n int) int {
	h := uint64(14695981039346656037)
	for i := 0; i < len(key); i++ {
		h ^= uint64(key[i])
		h *= 1099511628211
	}
	return int((h ^ uint64(db)*0x9e3779b97f4a7c15) % uint64(n))
}

func bucketPath(dir string, side, b int) string {
	return fmt.Sprintf("%s/%d-%d", dir, side, b)
}

func splitInto(dir string, side, n int, in *KeyReader, count *int64, stop func() error) error {
	files := make([]*os.File, n)
	ws := make([]*bufio.Writer, n)
	defer func() {
		for _, f := range files {
			if f != nil {
				f.Close()
			}
		}
	}()
	for b := range n {
		f, err := os.Create(bucketPath(dir, side, b))
		if err != nil {
			return fmt.Errorf("key diff: temporary files: %w", err)
		}
		files[b], ws[b] = f, bufio.NewWriterSize(f, 16<<10)
	}
	var r KeyRow
	var buf []byte
	what := [2]string{"old", "new"}[side]
	for {
		err := in.Next(&r)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		*count++
		if *count&4095 == 0 && stop != nil {
			if err := stop(); err != nil {
				return err
			}
		}
		b := bucketOf(r.DB, r.Key, n)
		buf = appendSlim(buf[:0], &r)
		if _, err := ws[b].Write(buf); err != nil {
			return fmt.Errorf("key diff: temporary files: %w", err)
		}
	}
	for _, w := range ws {
		if err := w.Flush(); err != nil {
			return fmt.Errorf("key diff: temporary files: %w", err)
		}
	}
	return nil
}

// appendSlim writes the fields the comparison reads: db, key, type,
// bytes, group.
func appendSlim(b []byte, r *KeyRow) []byte {
	b = binary.AppendVarint(b, int64(r.DB))
	for _, s := range []string{r.Key, r.Type, r.Group} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return binary.AppendVarint(b, r.Bytes)
}
