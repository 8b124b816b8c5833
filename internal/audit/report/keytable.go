package report

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math/bits"
	"os"
	"slices"
	"strings"
	"unsafe"
)

// keyTable is one side of a bucket of a key diff: what the comparison
// reads of each row, without pointers (the collector never reads it), the
// keys' bytes in one buffer, types and groups as numbers in a table of
// names.
type keyTable struct {
	data  []byte // the keys: a row's n bytes at off
	rows  []keyRow
	names names
}

type keyRow struct {
	off   int
	n     int32
	db    int32
	typ   uint32 // in names
	group uint32
	bytes int64 // -1 unknown
}

func (t *keyTable) key(r *keyRow) []byte { return t.data[r.off : r.off+int(r.n)] }

// keyString is r's key as a string sharing data's bytes, which are never
// written again once the table is loaded.
func (t *keyTable) keyString(r *keyRow) string {
	if r.n == 0 {
		return ""
	}
	return unsafe.String(&t.data[r.off], int(r.n))
}

// names numbers the types and groups of a side: few, repeated on every
// row.
type names struct {
	ids  map[string]uint32
	list []string
}

// id numbers s, which may be a transient view: a new name is copied.
func (n *names) id(s string) uint32 {
	if id, ok := n.ids[s]; ok {
		return id
	}
	if n.ids == nil {
		n.ids = map[string]uint32{}
	}
	id := uint32(len(n.list))
	s = strings.Clone(s)
	n.ids[s] = id
	n.list = append(n.list, s)
	return id
}

func (n *names) at(id uint32) string { return n.list[id] }

// add appends a row, copying its key (which may be a transient view).
func (t *keyTable) add(db int32, key, typ, group string, bytes int64) int32 {
	off := len(t.data)
	t.data = append(t.data, key...)
	t.rows = append(t.rows, keyRow{off: off, n: int32(len(key)), db: db, typ: t.names.id(typ), group: t.names.id(group), bytes: bytes})
	return int32(len(t.rows) - 1)
}

// keyRowView is a row as a rowScan gives it: its strings are valid until
// the next scan.
type keyRowView struct {
	db              int32
	key, typ, group string
	bytes           int64
}

// rowScan gives one side's rows one by one; io.EOF after the last.
type rowScan interface {
	scan(r *keyRowView) error
}

// bucketScan reads rows of appendSlim's (a bucket file, an export in
// KeysDiff); a row's strings share the reader's buffer, or buf for a long
// one.
type bucketScan struct {
	br   *bufio.Reader
	buf  []byte
	rows int
	stop func() error
}

func openBucket(dir string, side, b int, stop func() error) (*bucketScan, *os.File, error) {
	f, err := os.Open(bucketPath(dir, side, b))
	if err != nil {
		return nil, nil, fmt.Errorf("key diff: temporary files: %w", err)
	}
	return &bucketScan{br: bufio.NewReaderSize(f, 64<<10), stop: stop}, f, nil
}

func (s *bucketScan) scan(v *keyRowView) error {
	if s.rows++; s.rows&4095 == 0 && s.stop != nil {
		if err := s.stop(); err != nil {
			return err
		}
	}
	// Most rows lie whole in the reader's buffer: read where they lie.
	if b, _ := s.br.Peek(rowPeek); len(b) > 0 {
		if n, _ := parseSlim(b, v); n > 0 {
			s.br.Discard(n)
			return nil
		}
	}
	return s.scanLong(v)
}

// rowPeek is how much of the reader's buffer scan looks at for a row.
const rowPeek = 4 << 10

// parseSlim parses one row of appendSlim's at the start of b into v (its
// strings share b) and returns its length and where its key starts in b;
// 0 when b does not hold it whole.
func parseSlim(b []byte, v *keyRowView) (n, keyAt int) {
	db, p := binary.Varint(b)
	if p <= 0 {
		return 0, 0
	}
	var f [3]string
	for i := range f {
		size, w := binary.Uvarint(b[p:])
		if w <= 0 || size > uint64(len(b)-p-w) {
			return 0, 0
		}
		p += w
		if i == 0 {
			keyAt = p
		}
		if size > 0 {
			f[i] = unsafe.String(&b[p], int(size))
		}
		p += int(size)
	}
	size, w := binary.Varint(b[p:])
	if w <= 0 {
		return 0, 0
	}
	*v = keyRowView{db: int32(db), key: f[0], typ: f[1], group: f[2], bytes: size}
	return p + w, keyAt
}

// loadBucket reads a bucket file whole into a table whose keys are where
// they lie in the file's bytes (old's side: new's is streamed past it).
func loadBucket(dir string, side, b int, stop func() error) (*keyTable, error) {
	data, err := os.ReadFile(bucketPath(dir, side, b))
	if err != nil {
		return nil, fmt.Errorf("key diff: temporary files: %w", err)
	}
	t := &keyTable{data: data}
	var v keyRowView
	for p := 0; p < len(data); {
		n, keyAt := parseSlim(data[p:], &v)
		if n == 0 {
			return nil, fmt.Errorf("key diff: temporary file %s: %w", bucketPath(dir, side, b), io.ErrUnexpectedEOF)
		}
		t.rows = append(t.rows, keyRow{off: p + keyAt, n: int32(len(v.key)), db: v.db,
			typ: t.names.id(v.typ), group: t.names.id(v.group), bytes: v.bytes})
		p += n
		if len(t.rows)&4095 == 0 && stop != nil {
			if err := stop(); err != nil {
				return nil, err
			}
		}
	}
	return t, nil
}

// scanLong reads a row longer than rowPeek, or cut short, field by field.
func (s *bucketScan) scanLong(v *keyRowView) error {
	db, err := binary.ReadVarint(s.br)
	if err != nil {
		return err // io.EOF at the end
	}
	var ends [3]int
	s.buf = s.buf[:0]
	for i := range ends {
		n, err := binary.ReadUvarint(s.br)
		if err != nil || n > 1<<30 { // a key is at most 512 MiB
			return io.ErrUnexpectedEOF
		}
		at := len(s.buf)
		s.buf = slices.Grow(s.buf, int(n))[:at+int(n)]
		if _, err := io.ReadFull(s.br, s.buf[at:]); err != nil {
			return io.ErrUnexpectedEOF
		}
		ends[i] = len(s.buf)
	}
	size, err := binary.ReadVarint(s.br)
	if err != nil {
		return io.ErrUnexpectedEOF
	}
	view := func(from, to int) string {
		if from == to {
			return ""
		}
		return unsafe.String(&s.buf[from], to-from)
	}
	*v = keyRowView{db: int32(db), key: view(0, ends[0]), typ: view(ends[0], ends[1]), group: view(ends[1], ends[2]), bytes: size}
	return nil
}

// loadTable reads every row of a side into a table.
func loadTable(src rowScan) (*keyTable, error) {
	t := &keyTable{}
	var v keyRowView
	for {
		err := src.scan(&v)
		if errors.Is(err, io.EOF) {
			return t, nil
		}
		if err != nil {
			return nil, err
		}
		t.add(v.db, v.key, v.typ, v.group, v.bytes)
	}
}

// keyIndex finds a table's rows by (db, key): open addressing, a slot
// holds a row's index + 1 (0: empty); a key held twice keeps its last
// row, as a map written row by row would.
type keyIndex struct {
	slots []uint32
	seed  maphash.Seed
}

func (t *keyTable) index() *keyIndex {
	size := 1 << bits.Len(uint(len(t.rows)+len(t.rows)/2)) // at most 2/3 full
	x := &keyIndex{slots: make([]uint32, size), seed: maphash.MakeSeed()}
	mask := uint64(size - 1)
	for i := range t.rows {
		r := &t.rows[i]
		k := t.keyString(r)
		for s := x.hash(r.db, k) & mask; ; s = (s + 1) & mask {
			v := x.slots[s]
			if v == 0 {
				x.slots[s] = uint32(i) + 1
				break
			}
			if o := &t.rows[v-1]; o.db == r.db && t.keyString(o) == k {
				x.slots[s] = uint32(i) + 1
				break
			}
		}
	}
	return x
}

func (x *keyIndex) hash(db int32, key string) uint64 {
	return maphash.String(x.seed, key) ^ uint64(db)*0x9e3779b97f4a7c15
}

// find returns the row of t holding (db, key), or -1.
func (x *keyIndex) find(t *keyTable, db int32, key string) int {
	mask := uint64(len(x.slots) - 1)
	for s := x.hash(db, key) & mask; ; s = (s + 1) & mask {
		v := x.slots[s]
		if v == 0 {
			return -1
		}
		if o := &t.rows[v-1]; o.db == db && t.keyString(o) == key {
			return int(v - 1)
		}
	}
}

// The kinds of change of a keyRef, in KeyChangeKinds' order.
const (
	changeAdded uint8 = iota
	changeRemoved
	changeType
	changeGrown
	changeShrunk
)

// keyRef is one change of a bucket: the rows of old and new it is about
// (-1: absent).
type keyRef struct {
	change   uint8
	old, new int32
}

// keyChange is the KeyChange r stands for; its key shares the table's bytes.
func (r *keyRef) keyChange(old, new *keyTable) KeyChange {
	c := KeyChange{Change: KeyChangeKinds[r.change], OldBytes: -1, NewBytes: -1}
	if r.old >= 0 {
		o := &old.rows[r.old]
		c.DB, c.Key, c.Group, c.OldType, c.OldBytes = int(o.db), old.keyString(o), old.names.at(o.group), old.names.at(o.typ), o.bytes
	}
	if r.new >= 0 {
		n := &new.rows[r.new]
		c.DB, c.Key, c.Group, c.NewType, c.NewBytes = int(n.db), new.keyString(n), new.names.at(n.group), new.names.at(n.typ), n.bytes
	}
	return c
}

// sortChanges sorts a bucket's changes by db and key. Each is sorted as a
// record holding the first 32 bytes of its key as numbers, so that most
// comparisons read no key; keys alike in those bytes are compared whole,
// then by their place in changes (the same order on every run).
func sortChanges(changes []keyRef, old, new *keyTable) {
	type rec struct {
		p  [4]uint64 // the key's first 32 bytes, big-endian, zero after its end
		db int32
		i  int32
	}
	key := func(r *keyRef) []byte {
		if r.new >= 0 {
			return new.key(&new.rows[r.new])
		}
		return old.key(&old.rows[r.old])
	}
	db := func(r *keyRef) int32 {
		if r.new >= 0 {
			return new.rows[r.new].db
		}
		return old.rows[r.old].db
	}
	recs := make([]rec, len(changes))
	for i := range changes {
		c := &changes[i]
		var head [32]byte
		copy(head[:], key(c))
		recs[i] = rec{db: db(c), i: int32(i)}
		for w := range recs[i].p {
			recs[i].p[w] = binary.BigEndian.Uint64(head[8*w:])
		}
	}
	slices.SortFunc(recs, func(a, b rec) int {
		if a.db != b.db {
			return cmp.Compare(a.db, b.db)
		}
		for w := range a.p {
			if a.p[w] != b.p[w] {
				return cmp.Compare(a.p[w], b.p[w])
			}
		}
		if c := bytes.Compare(key(&changes[a.i]), key(&changes[b.i])); c != 0 {
			return c
		}
		return cmp.Compare(a.i, b.i)
	})
	sorted := make([]keyRef, len(changes))
	for i := range recs {
		sorted[i] = changes[recs[i].i]
	}
	copy(changes, sorted)
}
