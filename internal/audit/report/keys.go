package report

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/keyguard/keyguard/internal/jsonout"
)

// KeyRow is one key of a key export (--keys): every key the audit read,
// one row each.
type KeyRow struct {
	DB       int
	Key      string        // the exact bytes
	Type     string        // "" unknown
	Encoding string        // "" unknown
	Bytes    int64         // -1 unknown
	Elements int64         // -1 unknown
	TTL      time.Duration // -1 no TTL, 0 unknown
	Group    string        // the template, or the family inferred for an unregistered key
	Kind     string        // KindTemplate or KindPrefix
	Owner    string
}

// Key export formats.
const (
	KeysCSV   = "csv"
	KeysJSONL = "jsonl"
)

// KeyExportFormats are the formats a key export is written in.
var KeyExportFormats = []string{KeysCSV, KeysJSONL}

// KeysDiff is the format of a key export a key diff writes for itself
// (an RDB file's keys, in a temporary file) and reads back with
// NewDiffKeyReader: only what the comparison reads (database, key, type,
// group, size), in binary, which neither a CSV writer nor a CSV reader
// has to escape or parse. Not a format for users: it has no header and
// may change with any version.
const KeysDiff = "diff"

// keysHeader is the CSV export's header row.
const keysHeader = "db,key,key_base64,type,encoding,bytes,elements,ttl_ms,group,kind,owner\n"

// KeyExport writes rows to one writer for any number of aggregators,
// each through its own KeyBuffer: a row is encoded into the buffer at
// once (it keeps no reference to the key), and a full buffer is written
// under a lock. Memory is the buffers, whatever the number of keys.
type KeyExport struct {
	mu     sync.Mutex
	w      io.Writer
	format string
	err    error
	rows   int64
}

// NewKeyExport starts an export in format (KeysCSV or KeysJSONL) to w,
// writing the CSV header.
func NewKeyExport(w io.Writer, format string) (*KeyExport, error) {
	x := &KeyExport{w: w, format: format}
	switch format {
	case KeysCSV:
		_, x.err = io.WriteString(w, keysHeader)
	case KeysJSONL, KeysDiff:
	default:
		return nil, fmt.Errorf("key export format %q: use csv or jsonl", format)
	}
	return x, x.err
}

// Buffer returns a buffer for one goroutine's rows.
func (x *KeyExport) Buffer() *KeyBuffer {
	return &KeyBuffer{x: x, buf: make([]byte, 0, keyBufSize+4096)}
}

// Err is the first error writing the export.
func (x *KeyExport) Err() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.err
}

// Rows is the number of rows written so far.
func (x *KeyExport) Rows() int64 {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.rows
}

func (x *KeyExport) write(b []byte, rows int64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.err != nil {
		return
	}
	if _, err := x.w.Write(b); err != nil {
		x.err = fmt.Errorf("write the key export: %w", err)
		return
	}
	x.rows += rows
}

const keyBufSize = 64 << 10

// KeyBuffer collects the rows of one goroutine. Not safe for concurrent
// use; Flush it before the export is closed.
type KeyBuffer struct {
	x    *KeyExport
	buf  []byte
	rows int64
}

// Add encodes r.
func (b *KeyBuffer) Add(r *KeyRow) {
	switch b.x.format {
	case KeysCSV:
		b.buf = appendKeyCSV(b.buf, r)
	case KeysDiff:
		b.buf = appendSlim(b.buf, r)
	default:
		b.buf = appendKeyJSON(b.buf, r)
	}
	b.rows++
	if len(b.buf) >= keyBufSize {
		b.Flush()
	}
}

// Flush writes the rows buffered.
func (b *KeyBuffer) Flush() {
	if len(b.buf) > 0 {
		b.x.write(b.buf, b.rows)
	}
	b.buf, b.rows = b.buf[:0], 0
}

// exportKey is the key as the export's key column shows it (as the
// reports' CSV does: invalid UTF-8 replaced, a leading formula character
// quoted), and its exact bytes in base64 when the column does not give
// them back.
func exportKey(k string, csv bool) (shown, b64 string) {
	shown = k
	if csv {
		shown = keyCell(k)
	} else if !utf8.ValidString(k) {
		shown = strings.ToValidUTF8(k, "\uFFFD")
	}
	// A CSV reader turns a quoted \r\n into \n: such keys need their bytes too.
	if shown != k || csv && strings.IndexByte(k, '\r') >= 0 {
		b64 = base64.StdEncoding.EncodeToString([]byte(k))
	}
	return shown, b64
}

func appendKeyCSV(b []byte, r *KeyRow) []byte {
	b = strconv.AppendInt(b, int64(r.DB), 10)
	key, b64 := exportKey(r.Key, true)
	b = append(b, ',')
	b = appendCSVField(b, key)
	b = append(b, ',')
	b = append(b, b64...)
	b = append(b, ',')
	b = appendCSVField(b, r.Type)
	b = append(b, ',')
	b = appendCSVField(b, r.Encoding)
	b = append(b, ',')
	b = appendKnown(b, r.Bytes)
	b = append(b, ',')
	b = appendKnown(b, r.Elements)
	b = append(b, ',')
	b = appendTTL(b, r.TTL)
	b = append(b, ',')
	b = appendCSVField(b, cell(r.Group))
	b = append(b, ',')
	b = append(b, kindName(r.Kind)...)
	b = append(b, ',')
	b = appendCSVField(b, cell(r.Owner))
	return append(b, '\n')
}

// kindName is a group kind as the export writes it: template or family.
func kindName(kind string) string {
	if kind == KindPrefix {
		return "family"
	}
	return kind
}

func appendKnown(b []byte, n int64) []byte {
	if n < 0 {
		return b
	}
	return strconv.AppendInt(b, n, 10)
}

// appendKnownJSON appends n, or null when it is unknown (negative).
func appendKnownJSON(b []byte, n int64) []byte {
	if n < 0 {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, n, 10)
}

func appendTTL(b []byte, ttl time.Duration) []byte {
	switch {
	case ttl == -1:
		return append(b, "-1"...)
	case ttl <= 0:
		return b
	}
	return strconv.AppendInt(b, max(ttl.Milliseconds(), 1), 10)
}

// appendCSVField appends s as encoding/csv writes a field: quoted when it
// holds a comma, a quote, a line break or starts with a space.
func appendCSVField(b []byte, s string) []byte {
	if s == "" || !strings.ContainsAny(s, ",\"\r\n") && s[0] != ' ' && s[0] != '\t' {
		return append(b, s...)
	}
	b = append(b, '"')
	for {
		i := strings.IndexByte(s, '"')
		if i < 0 {
			break
		}
		b = append(b, s[:i+1]...)
		b = append(b, '"')
		s = s[i+1:]
	}
	b = append(b, s...)
	return append(b, '"')
}

func appendKeyJSON(b []byte, r *KeyRow) []byte {
	b = append(b, `{"db":`...)
	b = strconv.AppendInt(b, int64(r.DB), 10)
	key, b64 := exportKey(r.Key, false)
	b = append(b, `,"key":`...)
	b = jsonout.AppendString(b, key)
	if b64 != "" {
		b = append(b, `,"key_base64":"`...)
		b = append(b, b64...)
		b = append(b, '"')
	}
	if r.Type != "" {
		b = append(b, `,"type":`...)
		b = jsonout.AppendString(b, r.Type)
	}
	if r.Encoding != "" {
		b = append(b, `,"encoding":`...)
		b = jsonout.AppendString(b, r.Encoding)
	}
	// Unknown sizes are null, never 0: a key whose memory was not
	// measured has no size, and a diff must not see it shrink to nothing.
	b = append(b, `,"bytes":`...)
	b = appendKnownJSON(b, r.Bytes)
	b = append(b, `,"elements":`...)
	b = appendKnownJSON(b, r.Elements)
	if r.TTL == -1 || r.TTL > 0 {
		b = append(b, `,"ttl_ms":`...)
		b = appendTTL(b, r.TTL)
	}
	b = append(b, `,"group":`...)
	b = jsonout.AppendString(b, r.Group)
	b = append(b, `,"kind":"`...)
	b = append(b, kindName(r.Kind)...)
	b = append(b, '"')
	if r.Owner != "" {
		b = append(b, `,"owner":`...)
		b = jsonout.AppendString(b, r.Owner)
	}
	return append(b, "}\n"...)
}

// DefaultMaxKeyLine bounds a line of a key list or key export as read
// (keyguard check -, preheat, diff): a key of 1 MiB fits with every byte
// escaped. Redis takes keys up to 512 MiB; a longer line is refused, with
// its number, rather than held in memory.
const DefaultMaxKeyLine = 8 << 20

// ErrLineTooLong is the error of a key list or export line over its limit.
var ErrLineTooLong = errors.New("line too long")

// LineTooLong is the error of line n over max bytes, which says what to do.
func LineTooLong(n int64, max int64) error {
	return fmt.Errorf("line %d: %w: over %d bytes (raise the limit with --max-line-bytes, or check that this is a list of keys, one a line)", n, ErrLineTooLong, max)
}

// lineLimit passes bytes through while no line (a record of the CSV: a
// newline outside quotes ends it) is longer than max, counting the lines.
// An export that starts with { is JSON lines, else CSV.
type lineLimit struct {
	r       io.Reader
	max     int64
	started bool
	csv     bool
	inQuote bool
	cur     int64 // bytes of the line under way
	line    int64 // its number, from 1
	err     error
}

func (l *lineLimit) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	n, err := l.r.Read(p)
	if n > 0 && !l.started {
		l.started, l.csv = true, p[0] != '{'
	}
	// From one byte that matters (a newline; a quote in CSV) to the next,
	// found with bytes.IndexByte: the bytes between only count.
	p = p[:n]
	nextQ, nextN := -1, -1 // where the next quote and newline are at or after i; -1: not looked for
	for i := 0; i < len(p); {
		if nextN < i {
			if nextN = bytes.IndexByte(p[i:], '\n'); nextN >= 0 {
				nextN += i
			} else {
				nextN = len(p)
			}
		}
		j := nextN
		if l.csv {
			if nextQ < i {
				if nextQ = bytes.IndexByte(p[i:], '"'); nextQ >= 0 {
					nextQ += i
				} else {
					nextQ = len(p)
				}
			}
			j = min(j, nextQ)
		}
		// p[i:j] are plain bytes of the line, then p[j] matters.
		if l.cur+int64(j-i) > l.max {
			// The lines before pass; this one stops at its first byte
			// over the limit.
			l.err = fmt.Errorf("key export %w", LineTooLong(l.line+1, l.max))
			return i + int(l.max-l.cur), nil
		}
		l.cur += int64(j - i)
		if i = j; i == len(p) {
			break
		}
		if p[i] == '\n' && !l.inQuote {
			l.line++
			l.cur = 0
			i++
			continue
		}
		if p[i] == '"' {
			l.inQuote = !l.inQuote
		}
		if l.cur++; l.cur > l.max {
			l.err = fmt.Errorf("key export %w", LineTooLong(l.line+1, l.max))
			return i, nil
		}
		i++
	}
	return n, err
}

// KeyReader reads a key export back, CSV or JSON lines (told apart by
// the first line), row by row.
type KeyReader struct {
	br    *bufio.Reader
	csv   *csv.Reader
	jsonl bool
	slim  *bucketScan // KeysDiff
	line  int
	// typ and group are the last row's (KeysDiff), whose strings the
	// next row takes again when its bytes are the same.
	typ, group string
}

// IsKeyExport reports whether the start of a file is a key export's.
func IsKeyExport(head []byte) bool {
	return bytes.HasPrefix(head, []byte(keysHeader[:len(keysHeader)-1])) || bytes.HasPrefix(head, []byte(`{"db":`))
}

// NewKeyReader reads an export from r, within DefaultMaxKeyLine.
func NewKeyReader(r io.Reader) (*KeyReader, error) { return NewKeyReaderLimited(r, DefaultMaxKeyLine) }

// NewKeyReaderLimited reads an export from r whose lines are at most
// maxLine bytes (<= 0: DefaultMaxKeyLine); a longer one is an error that
// wraps ErrLineTooLong and names the line.
func NewKeyReaderLimited(r io.Reader, maxLine int64) (*KeyReader, error) {
	if maxLine <= 0 {
		maxLine = DefaultMaxKeyLine
	}
	lim := &lineLimit{r: r, max: maxLine}
	br := bufio.NewReaderSize(lim, 1<<16)
	head, err := br.Peek(len(keysHeader))
	if errors.Is(err, ErrLineTooLong) {
		return nil, err
	}
	switch {
	case bytes.HasPrefix(head, []byte(keysHeader[:len(keysHeader)-1])):
		c := csv.NewReader(br)
		c.ReuseRecord = true
		c.FieldsPerRecord = strings.Count(keysHeader, ",") + 1
		if _, err := c.Read(); err != nil {
			return nil, err
		}
		return &KeyReader{csv: c, line: 1}, nil
	case bytes.HasPrefix(head, []byte(`{"db":`)), len(head) == 0:
		return &KeyReader{br: br, jsonl: true}, nil
	}
	return nil, errors.New("not a key export: it starts with neither the CSV header " + strconv.Quote(strings.TrimSpace(keysHeader)) + ` nor {"db":`)
}

// jsonRow is a JSON line of the export.
type jsonRow struct {
	DB        int    `json:"db"`
	Key       string `json:"key"`
	KeyBase64 string `json:"key_base64"`
	Type      string `json:"type"`
	Encoding  string `json:"encoding"`
	Bytes     *int64 `json:"bytes"`
	Elements  *int64 `json:"elements"`
	TTLMS     *int64 `json:"ttl_ms"`
	Group     string `json:"group"`
	Kind      string `json:"kind"`
	Owner     string `json:"owner"`
}

// NewDiffKeyReader reads an export in KeysDiff from r.
func NewDiffKeyReader(r io.Reader) *KeyReader {
	return &KeyReader{slim: &bucketScan{br: bufio.NewReaderSize(r, 1<<16)}}
}

// Next reads the next row into r; io.EOF after the last.
func (k *KeyReader) Next(r *KeyRow) error {
	if k.jsonl {
		return k.nextJSON(r)
	}
	if k.slim != nil {
		return k.nextSlim(r)
	}
	rec, err := k.csv.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return io.EOF
		}
		if errors.Is(err, ErrLineTooLong) {
			return err
		}
		return fmt.Errorf("key export: %w", err)
	}
	k.line++
	db, err := strconv.Atoi(rec[0])
	if err != nil {
		return fmt.Errorf("key export line %d: db %q is not a number", k.line, rec[0])
	}
	*r = KeyRow{DB: db, Key: rec[1], Type: rec[3], Encoding: rec[4], Group: uncell(rec[8]), Kind: unkind(rec[9]), Owner: uncell(rec[10]), Bytes: -1, Elements: -1}
	if rec[2] != "" {
		raw, err := base64.StdEncoding.DecodeString(rec[2])
		if err != nil {
			return fmt.Errorf("key export line %d: key_base64: %v", k.line, err)
		}
		r.Key = string(raw)
	}
	for i, dst := range []*int64{&r.Bytes, &r.Elements} {
		if s := rec[5+i]; s != "" {
			if *dst, err = strconv.ParseInt(s, 10, 64); err != nil {
				return fmt.Errorf("key export line %d: %q is not a number", k.line, s)
			}
		}
	}
	if s := rec[7]; s != "" {
		ms, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return fmt.Errorf("key export line %d: ttl_ms %q is not a number", k.line, s)
		}
		r.TTL = ttlOf(ms)
	}
	return nil
}

func ttlOf(ms int64) time.Duration {
	if ms == -1 {
		return -1
	}
	return time.Duration(ms) * time.Millisecond
}

func (k *KeyReader) nextJSON(r *KeyRow) error {
	for {
		line, err := k.br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			var long []byte
			long = append(long, line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = k.br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if errors.Is(err, ErrLineTooLong) {
			return err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			if err != nil {
				if errors.Is(err, io.EOF) {
					return io.EOF
				}
				return fmt.Errorf("key export: %w", err)
			}
			k.line++
			continue
		}
		k.line++
		var j jsonRow
		if uerr := json.Unmarshal(line, &j); uerr != nil {
			return fmt.Errorf("key export line %d: %v", k.line, uerr)
		}
		*r = KeyRow{DB: j.DB, Key: j.Key, Type: j.Type, Encoding: j.Encoding, Group: j.Group, Kind: unkind(j.Kind), Owner: j.Owner, Bytes: -1, Elements: -1}
		if j.KeyBase64 != "" {
			raw, derr := base64.StdEncoding.DecodeString(j.KeyBase64)
			if derr != nil {
				return fmt.Errorf("key export line %d: key_base64: %v", k.line, derr)
			}
			r.Key = string(raw)
		}
		if j.Bytes != nil {
			r.Bytes = *j.Bytes
		}
		if j.Elements != nil {
			r.Elements = *j.Elements
		}
		if j.TTLMS != nil {
			r.TTL = ttlOf(*j.TTLMS)
		}
		return nil
	}
}

// uncell undoes cell's quote mark before a formula character.
func uncell(s string) string {
	if len(s) >= 2 && s[0] == '\'' && strings.IndexByte("=+-@\t\r", s[1]) >= 0 {
		return s[1:]
	}
	return s
}

func unkind(k string) string {
	if k == "family" {
		return KindPrefix
	}
	return k
}

// nextSlim reads a row of KeysDiff (appendSlim's).
func (k *KeyReader) nextSlim(r *KeyRow) error {
	var v keyRowView
	if err := k.slim.scan(&v); err != nil {
		if errors.Is(err, io.EOF) {
			return io.EOF
		}
		return fmt.Errorf("key export: %w", err)
	}
	// The row's strings are views of the reader's buffer: copied, a type
	// or group the same as the row before's taken again.
	if v.typ != k.typ {
		k.typ = strings.Clone(v.typ)
	}
	if v.group != k.group {
		k.group = strings.Clone(v.group)
	}
	*r = KeyRow{DB: int(v.db), Key: strings.Clone(v.key), Type: k.typ, Group: k.group, Bytes: v.bytes, Elements: -1}
	return nil
}
