package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/keyguard/keyguard/inventory"
	"github.com/keyguard/keyguard/rdb"
	"github.com/keyguard/keyguard/registry"
)

func runRDB(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "rdb", "rdb [--registry FILE] [--format text|json|csv|html] [--out FILE] [--fail-on SEV] [--match GLOB] [--db N] [--max-findings N] [--top N] FILE...",
		`  keyguard rdb dump.rdb
  keyguard rdb --format html --out keys.html dump.rdb
  keyguard rdb --format json --out cluster.json node1.rdb node2.rdb node3.rdb   # one Cluster, one report
  keyguard rdb --match 'order:*' --db 0 dump.rdb
  zcat dump.rdb.gz | keyguard rdb -

The audit of a snapshot: the same report as 'keyguard audit', from RDB
files (versions 1-12: Redis 2.x-7.4, Valkey 7-8) read anywhere, away from
production. Several files are the shards of one Cluster, decoded in
parallel and merged into one report. Remaining TTLs are counted from the
time the snapshot was taken; keys already expired then are left out.
Exit 2 (after writing the report) when a file is truncated or corrupt:
the report covers the keys before the damage, has complete: false and
the byte offset where each file stopped.`)
	fs.registryFlag(e)
	fs.outputFlags(reportFormats...)
	fs.failOnFlag()
	var (
		match       = fs.String("match", "", "report only keys matching this `glob` (Redis SCAN MATCH syntax: * ? [a-z] [^a] \\x)")
		db          = fs.Int("db", -1, "report only database `N`; -1 every database")
		maxFindings = fs.Int("max-findings", inventory.DefaultMaxFindings, "findings listed per rule; the report counts the rest")
		top         = fs.Int("top", inventory.DefaultTopKeys, "largest keys listed")
	)
	files, err := fs.parse(args)
	if err != nil {
		return err
	}
	switch {
	case len(files) == 0:
		return usagef("name at least one RDB file (several: the shards of one Cluster; - reads stdin)")
	case *db < -1:
		return usagef("--db must be a database number (0, 1, ...)")
	case *maxFindings < 0, *top < 0:
		return usagef("--max-findings and --top cannot be negative")
	}
	reg, err := fs.loadRegistry()
	if err != nil {
		return err
	}
	if e.getenv("GOGC") == "" {
		// What stays live is bounded (counters, capped lists, samples) and
		// the garbage is short-lived batches: collecting at 3× the live
		// heap rather than 2× skips collections while the heap grows to
		// its size, and peak RSS hardly moves (it is set by the report).
		defer debug.SetGCPercent(debug.SetGCPercent(200))
	}
	ins, err := openRDBs(e, files)
	defer func() {
		for _, in := range ins {
			in.close()
		}
	}()
	if err != nil {
		return err
	}
	out, err := fs.openOutput(e)
	if err != nil {
		return err
	}

	scan := rdbScan{
		reg:   reg,
		opts:  inventory.Options{MaxFindings: *maxFindings, TopKeys: *top},
		db:    *db,
		match: []byte(*match),
	}
	started := time.Now()
	var bar *progressBar
	if isTerminal(e.stderr) {
		bar = &progressBar{w: e.stderr}
	}
	stopBar := rdbProgress(bar, ins, started)
	agg, res := scan.run(ctx, ins)
	stopBar()

	meta := inventory.Meta{
		Source:    inventory.Source{Kind: "rdb", Target: strings.Join(files, ","), Nodes: len(ins)},
		Registry:  fs.opts.registry,
		StartedAt: started,
		Duration:  time.Since(started),
		Complete:  true,
		Notes:     scan.notes(ins, res),
	}
	for _, r := range res {
		if r.stop != nil {
			meta.Complete = false
			meta.Stopped = append(meta.Stopped, *r.stop)
		}
	}
	if e.getenv("GOGC") == "" {
		// What the report allocates is the report itself, live until it
		// is written, and the process ends after that: a collection in
		// between (the heap has just grown by the report) would scan it
		// for nothing. The deferred call above restores the setting.
		debug.SetGCPercent(-1)
	}
	rep := agg.Report(meta)
	if err := writeReport(out, fs.opts.format, rep); err != nil {
		return err
	}
	if !meta.Complete {
		return &rdbIncompleteError{stops: meta.Stopped, out: fs.opts.out}
	}
	return auditVerdict(rep.Summary.BySeverity, fs.threshold())
}

// rdbInput is one file of the command line, checked and open.
type rdbInput struct {
	name string // as given; "-" is stdin
	r    io.Reader
	file *os.File // nil for stdin
	size int64    // 0 unknown (a pipe)
	mod  time.Time
	read atomic.Int64 // bytes consumed, for the progress bar
	done atomic.Bool
}

func (in *rdbInput) Read(p []byte) (int, error) {
	n, err := in.r.Read(p)
	in.read.Add(int64(n))
	return n, err
}

func (in *rdbInput) close() {
	if in.file != nil {
		in.file.Close()
	}
}

// openRDBs opens every file and checks that it starts like an RDB file,
// so that a typo or a wrong file fails before anything is decoded or
// written.
func openRDBs(e *env, names []string) ([]*rdbInput, error) {
	var ins []*rdbInput
	seen := map[string]bool{}
	for _, name := range names {
		if seen[name] {
			return ins, usagef("%s is named twice: its keys would be counted twice", name)
		}
		seen[name] = true
		in := &rdbInput{name: name, r: e.stdin, mod: time.Now()}
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
				return ins, fmt.Errorf("%s is a directory: name the RDB file (dump.rdb) in it", name)
			case fi.Mode().IsRegular():
				in.size = fi.Size()
			}
			in.mod = fi.ModTime()
		}
		ins = append(ins, in)
		var head [9]byte
		n, err := io.ReadFull(in.r, head[:])
		switch {
		case n == 0 && (err == io.EOF || err == nil):
			return ins, fmt.Errorf("%s is empty: a snapshot holds at least a 9-byte header; copy it again once the save has finished", displayName(name))
		case err != nil && err != io.ErrUnexpectedEOF:
			return ins, fmt.Errorf("read %s: %w", displayName(name), err)
		case !rdbHeader(head[:n]):
			return ins, fmt.Errorf("%s is not an RDB file: it starts with %q, not REDIS and a 4-digit version", displayName(name), head[:n])
		}
		in.r = io.MultiReader(bytes.NewReader(head[:n]), in.r)
	}
	return ins, nil
}

func rdbHeader(b []byte) bool {
	if len(b) < 9 || string(b[:5]) != "REDIS" {
		return false
	}
	for _, c := range b[5:9] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func displayName(name string) string {
	if name == "-" {
		return "stdin"
	}
	return name
}

// rdbScan decodes files into one inventory.
type rdbScan struct {
	reg   *registry.Registry
	opts  inventory.Options
	db    int    // -1 every database
	match []byte // "" every key
	procs int    // cores to use; 0 GOMAXPROCS
}

// rdbResult is what one file gave besides its records.
type rdbResult struct {
	keys      int64 // records passed to the inventory
	expired   int64 // keys already expired when the snapshot was taken
	freqs     bool  // some record carried an LFU counter
	noCreated bool  // no ctime aux field: TTLs counted from the file's mtime
	stop      *inventory.NodeStop
}

// Decoding runs one goroutine per file, up to GOMAXPROCS files at a time,
// and aggregation a pool of goroutines with one aggregator each, merged at
// the end: whatever the arrival order the merged report is the same, so
// the records of any file can go to any aggregator. A decoder goroutine
// (which also looks each key up in the registry) and an aggregator take
// about as long per key; the cores the decoders leave get up to two
// aggregators per decoder, for the records heavy in findings. Memory does not grow with
// the file size: batches of records go through a fixed pool, and each
// aggregator is bounded (inventory's Memory section; most of it is the
// --max-findings per rule it keeps), so their number is capped too.
const (
	rdbBatchRecords = 512
	rdbBatchBytes   = 1 << 20 // of keys and kept names: 1 MB keys do not pile up
	maxAggregators  = 4
)

// rdbBatch is a run of records of one file, with the hash field names,
// JSON keys and __ns__ values the aggregator may ask for kept as spans of
// one arena, so the decoder copies them without an allocation per name.
//
// The keys of a batch share one buffer too: keys holds them end to end
// and each Record.Key is a view of it. Batches go round between the
// decoder and the aggregators with their buffers (see reset): the
// aggregator copies what it keeps (findings, top lists, samples,
// examples), so no string outlives the batch it came in.
type rdbBatch struct {
	recs     []inventory.Record
	keys     []byte // the records' keys, back to back
	extra    []rdbExtra
	arena    []byte // hash field names and __ns__ values
	spans    []rdbSpan
	jkeys    []string // JSON key names (the decoder interns them)
	keyBytes int
}

type rdbSpan struct{ lo, hi int32 }

// rdbExtra is what a record may need on the aggregator's side:
// spans[fields.lo:fields.hi] (hash field names) or jkeys[json.lo:json.hi]
// (JSON keys), and the __ns__ value of a hash.
type rdbExtra struct {
	entry        *registry.Entry // the key's template, looked up once by the decoder
	hash         bool
	ns           rdbSpan
	hasNS        bool
	fields, json rdbSpan
}

// reset empties the batch for reuse. Its buffers are reused too: the
// strings key and str handed out point into them, which is safe because
// nothing keeps them past the batch — the registry lookup keeps nothing,
// and inventory.Aggregator copies what it keeps
// (TestAddKeepsNoReferenceToRecordStrings in inventory checks that).
// Reusing them spares the garbage collector a new buffer per batch.
//
// The old records are not cleared: what they point to is the batch's own
// buffers, the aggregator's field slice, registry entries and the
// decoder's interned JSON names, all alive anyway, and appending a record
// overwrites all of it.
func (b *rdbBatch) reset() {
	b.recs, b.extra, b.keys, b.arena, b.spans, b.jkeys, b.keyBytes = b.recs[:0], b.extra[:0], b.keys[:0], b.arena[:0], b.spans[:0], b.jkeys[:0], 0
}

// rdbKeyChunk is the key buffer a batch starts with: 512 keys of 32 bytes.
const rdbKeyChunk = 16 << 10

// key appends k to the batch's key buffer and returns it as a string that
// is valid until the batch is reset. When the buffer grows, the strings
// handed out before keep pointing into the old one, which stays alive.
func (b *rdbBatch) key(k []byte) string {
	if len(k) == 0 {
		return ""
	}
	if b.keys == nil {
		b.keys = make([]byte, 0, max(rdbKeyChunk, len(k)))
	}
	start := len(b.keys)
	b.keys = append(b.keys, k...)
	return unsafe.String(&b.keys[start], len(k))
}

func (b *rdbBatch) keep(p []byte) rdbSpan {
	lo := len(b.arena)
	b.arena = append(b.arena, p...)
	return rdbSpan{int32(lo), int32(len(b.arena))}
}

// str is a kept name as a string, valid until the batch is reset; the
// aggregator's side calls it once the decoder is done with the batch.
func (b *rdbBatch) str(s rdbSpan) string {
	if s.hi == s.lo {
		return ""
	}
	return unsafe.String(&b.arena[s.lo], s.hi-s.lo)
}

// run decodes the files and returns the merged aggregator and what each
// file gave. A file that stops early does not stop the others.
func (s *rdbScan) run(ctx context.Context, ins []*rdbInput) (*inventory.Aggregator, []rdbResult) {
	procs := s.procs
	if procs <= 0 {
		procs = max(runtime.GOMAXPROCS(0), 1)
	}
	decoders := min(len(ins), procs)
	aggs := make([]*inventory.Aggregator, max(1, min(procs-decoders, 2*decoders, maxAggregators)))
	pool := make(chan *rdbBatch, 2*(decoders+len(aggs)))
	for range cap(pool) {
		pool <- &rdbBatch{}
	}
	work := make(chan *rdbBatch, cap(pool))

	var aggWG sync.WaitGroup
	hints := make([]*inventory.FieldHint, len(aggs))
	for i := range aggs {
		aggs[i] = inventory.New(s.reg, s.opts)
		hints[i] = aggs[i].FieldHint()
		aggWG.Add(1)
		go func() {
			defer aggWG.Done()
			var fields []string
			for b := range work {
				fields = s.aggregate(aggs[i], b, fields)
				b.reset()
				pool <- b
			}
		}()
	}

	res := make([]rdbResult, len(ins))
	jobs := make(chan int)
	var decWG sync.WaitGroup
	for range decoders {
		decWG.Add(1)
		go func() {
			defer decWG.Done()
			for i := range jobs {
				res[i] = s.file(ctx, ins[i], hints, pool, work)
				ins[i].done.Store(true)
			}
		}()
	}
	for i := range ins {
		jobs <- i
	}
	close(jobs)
	decWG.Wait()
	close(work)
	aggWG.Wait()
	for _, a := range aggs[1:] {
		aggs[0].Merge(a)
	}
	return aggs[0], res
}

// aggregate adds a batch to agg, answering NeedsFields from what the
// decoder kept.
func (s *rdbScan) aggregate(agg *inventory.Aggregator, b *rdbBatch, fields []string) []string {
	for i := range b.recs {
		r, x := &b.recs[i], &b.extra[i]
		if x.hash {
			if r.NSProbed && x.hasNS {
				r.NS, r.HasNS = b.str(x.ns), true
			}
			if x.fields.hi > x.fields.lo && agg.NeedsFieldsEntry(r.Key, x.entry) {
				fields = fields[:0]
				for _, sp := range b.spans[x.fields.lo:x.fields.hi] {
					fields = append(fields, b.str(sp))
				}
				r.Fields = fields
			}
		} else if x.json.hi > x.json.lo && agg.NeedsFieldsEntry(r.Key, x.entry) {
			r.Fields = b.jkeys[x.json.lo:x.json.hi]
		}
		agg.AddEntry(r, x.entry)
	}
	return fields
}

// nsField is the reserved hash field of namespace-guarded hashes.
const nsField = "__ns__"

// file decodes one file into batches for the aggregators.
func (s *rdbScan) file(ctx context.Context, in *rdbInput, hints []*inventory.FieldHint, pool, work chan *rdbBatch) (res rdbResult) {
	// The one template lookup of a key, shared by the decoder (whether to
	// read field names), NeedsNS (answered here), NeedsFieldsEntry and
	// AddEntry: done on the decoder's side because the registry is safe
	// for concurrent use and the aggregators are the slower side.
	var entry *registry.Entry
	look := func(key []byte) rdb.Look {
		k := unsafe.String(unsafe.SliceData(key), len(key)) // not kept: Lookup keeps nothing
		entry = nil
		if len(s.match) > 0 && !globMatch(s.match, key) {
			return 0 // skipped below
		}
		entry = s.reg.Lookup(k)
		var l rdb.Look
		if entry != nil && entry.Guard {
			l = rdb.LookWatched // NeedsNS: the __ns__ of every guarded hash
		}
		for _, h := range hints {
			if h.MayNeedFields(k, entry) {
				return l | rdb.LookNames
			}
		}
		return l // no aggregator will ask for its field names
	}
	dec := rdb.NewDecoder(in, rdb.Options{
		FieldSample: 33, // 32 names besides __ns__, as the audit's HRANDFIELD key 32
		WatchFields: []string{nsField},
		JSONKeys:    32,
		Look:        look,
	})
	var (
		createdMS int64
		created   bool
	)
	b := <-pool
	defer func() {
		if len(b.recs) > 0 {
			work <- b
		} else {
			pool <- b
		}
	}()
	stop := func(off int64, reason string) {
		res.stop = &inventory.NodeStop{Node: in.name, Reason: reason, Cursor: strconv.FormatInt(off, 10), Keys: res.keys}
	}
	for {
		r, err := dec.Next()
		if err != nil {
			if err != io.EOF {
				var fe *rdb.FormatError
				off, reason := dec.Offset(), err.Error()
				if errors.As(err, &fe) {
					off = fe.Offset
					reason = strings.TrimPrefix(reason, fmt.Sprintf("rdb: offset %d: ", off)) // the stop says where
				}
				stop(off, oneLine(reason))
			}
			return res
		}
		if s.db >= 0 && r.DB != s.db || len(s.match) > 0 && !globMatch(s.match, r.Key) {
			continue
		}
		if !created {
			// The aux fields come before the first key. ctime counts
			// seconds: a key that expired less than a second before the
			// save can pass for live with a TTL under a second.
			t, ok := dec.Meta().Created()
			if !ok {
				t, res.noCreated = in.mod, true
			}
			createdMS, created = t.UnixMilli(), true
		}
		ttl := time.Duration(-1)
		if r.ExpireAt != 0 {
			left := r.ExpireAt - createdMS
			if left <= 0 {
				res.expired++ // Redis drops it on load; a live audit would not see it
				continue
			}
			ttl = time.Duration(left) * time.Millisecond
		}
		rec := inventory.Record{
			Key: b.key(r.Key), DB: r.DB, Node: in.name, Type: string(r.Type), Encoding: r.Encoding,
			Bytes: r.MemoryEstimate, Elements: r.Elements, TTL: ttl, Freq: r.Freq,
		}
		if r.Type == rdb.TypeModule && r.Module != "" {
			rec.Type = r.Module // what TYPE answers for a module value
		}
		if r.Partial && r.Elements == 0 {
			rec.Elements = -1
		}
		x := rdbExtra{entry: entry} // looked up by look, before the value was read
		switch r.Type {
		case rdb.TypeHash:
			x.hash = true
			rec.NSProbed = x.entry != nil && x.entry.Guard
			for _, w := range r.Watched {
				if w.Name == nsField {
					x.ns, x.hasNS = b.keep(w.Value), true
				}
			}
			x.fields.lo = int32(len(b.spans))
			for _, f := range r.Fields {
				if string(f) != nsField {
					b.spans = append(b.spans, b.keep(f))
				}
			}
			x.fields.hi = int32(len(b.spans))
		case rdb.TypeString:
			x.json.lo = int32(len(b.jkeys))
			b.jkeys = append(b.jkeys, r.JSONKeys...)
			x.json.hi = int32(len(b.jkeys))
		}
		if r.Freq >= 0 {
			res.freqs = true
		}
		b.recs = append(b.recs, rec)
		b.extra = append(b.extra, x)
		b.keyBytes += len(rec.Key)
		res.keys++
		if len(b.recs) == rdbBatchRecords || b.keyBytes+len(b.arena) >= rdbBatchBytes {
			if ctx.Err() != nil {
				stop(dec.Offset(), "interrupted: "+context.Cause(ctx).Error())
				return res
			}
			work <- b
			b = <-pool
		}
	}
}

// notes explains what the report leaves out.
func (s *rdbScan) notes(ins []*rdbInput, res []rdbResult) []string {
	var notes []string
	var expired int64
	freqs := false
	for i, r := range res {
		expired += r.expired
		freqs = freqs || r.freqs
		if r.noCreated {
			notes = append(notes, fmt.Sprintf("%s does not say when it was written (no ctime aux field: Redis < 4.0): remaining TTLs are counted from its modification time", displayName(ins[i].name)))
		}
	}
	if expired > 0 {
		what := fmtThousands(expired) + " keys had"
		if expired == 1 {
			what = "1 key had"
		}
		notes = append(notes, what+" already expired when the snapshot was taken; they are left out, as Redis drops them on load")
	}
	if s.db >= 0 {
		notes = append(notes, fmt.Sprintf("only database %d was audited", s.db))
	}
	if len(s.match) > 0 {
		notes = append(notes, fmt.Sprintf("only keys matching %q were audited", s.match))
	}
	if !freqs {
		notes = append(notes, "hot-key data unavailable: the snapshot has no LFU counters (they are saved only under an LFU maxmemory-policy)")
	}
	return notes
}

// rdbIncompleteError is a run where some file stopped early (truncated,
// corrupt, interrupted); the partial report has been written. Unlike the
// live audit's incompleteError there is nothing to resume: the fix is a
// good copy of the file.
type rdbIncompleteError struct {
	stops []inventory.NodeStop
	out   string
}

func (e *rdbIncompleteError) Error() string {
	var parts []string
	for _, s := range e.stops {
		parts = append(parts, fmt.Sprintf("%s stopped at byte %s after %s keys: %s", displayName(s.Node), s.Cursor, fmtThousands(s.Keys), s.Reason))
	}
	msg := "incomplete: " + strings.Join(parts, "; ")
	if e.out != "" {
		msg += "; report of the keys before that in " + e.out
	} else {
		msg += "; the report covers the keys before that"
	}
	return msg
}

// rdbProgress redraws the progress bar every 250 ms until stop is
// called: bytes read of the total size, MB/s, ETA, files done.
func rdbProgress(bar *progressBar, ins []*rdbInput, started time.Time) (stop func()) {
	if bar == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				var read, total int64
				known, done := true, 0
				for _, in := range ins {
					read += in.read.Load()
					total += in.size
					known = known && in.size > 0
					if in.done.Load() {
						done++
					}
				}
				if !known {
					total = 0
				}
				bar.redraw(rdbProgressLine(read, total, time.Since(started), done, len(ins)))
			case <-done:
				return
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
		bar.clear()
	}
}

// rdbProgressLine is "rdb [####....]  42% 70/167 MB  350 MB/s  ETA 1s
// files 1/3";
// without a total (a pipe) just what was read and the rate.
func rdbProgressLine(read, total int64, elapsed time.Duration, filesDone, files int) string {
	const mb = 1 << 20
	line := fmt.Sprintf("rdb: %.0f MB", float64(read)/mb)
	if total > 0 {
		line = fmt.Sprintf("rdb %s %.0f/%.0f MB", meter(float64(read)/float64(total)), float64(read)/mb, float64(total)/mb)
	}
	if elapsed > 0 {
		rate := float64(read) / elapsed.Seconds()
		line += fmt.Sprintf("  %.0f MB/s", rate/mb)
		if total > 0 && rate > 0 {
			line += "  ETA " + time.Duration(float64(max(total-read, 0))/rate*float64(time.Second)).Round(time.Second).String()
		}
	}
	if files > 1 {
		line += fmt.Sprintf("  files %d/%d", filesDone, files)
	}
	return line
}
