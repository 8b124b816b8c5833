package snapshot

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/cpu"

	"github.com/keyguard/keyguard/internal/audit/inventory"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/glob"
	"github.com/keyguard/keyguard/internal/hugepage"
	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/internal/jsonkeys"
	"github.com/keyguard/keyguard/internal/keyslot"
	"github.com/keyguard/keyguard/internal/progress"
	"github.com/keyguard/keyguard/internal/rdb"
	"github.com/keyguard/keyguard/registry"
)

// Options tune a run.
type Options struct {
	Inventory inventory.Options // MaxFindings, TopKeys…
	DB        int               // only this database; -1 every database
	Match     string            // only keys matching this glob (SCAN MATCH syntax); "" every key
	Procs     int               // cores to use; 0 GOMAXPROCS

	// TuneGC lets Run set the collector's pace for the run (a 3× heap
	// goal while decoding, none while the report is built). Leave it off
	// when the caller set GOGC or shares the process.
	TuneGC bool

	// Progress, when set, is called every ProgressEvery from a goroutine
	// of Run, and once at the end.
	Progress      func(Progress)
	ProgressEvery time.Duration

	partBytes int64 // files at least this large are cut into parts; 0 minPartBytes (tests set it)
	jsonRaw   int   // rdb.Options.JSONRaw; 0 jsonRawBytes, -1 none: the decoder reads every JSON value's keys (tests set it)
}

// Progress is a snapshot of a run.
type Progress struct {
	Read      int64 // bytes read, all files
	Total     int64 // bytes of all files; 0 unknown (a pipe)
	FilesDone int
	Files     int
	Elapsed   time.Duration
	Final     bool // the last update, when the run stops
}

// Result is the outcome of a run. Complete is false when a file stopped
// early (truncated, corrupt, interrupted); Stopped says where, with the
// byte offset as the cursor.
type Result struct {
	Report   *report.Report
	Complete bool
	Stopped  []report.NodeStop
}

// Decoding runs one goroutine per file, up to Procs files at a time;
// aggregation is an inventory.Pipeline whose aggregators also classify
// the keys (Helper.AddRead): a decoder reads every value as far as a
// class could ask, which costs it little, and the classification
// leaves the one goroutine a file has. Classifying and aggregating a
// key take more than decoding it, so a decoder gets up to two
// aggregators, one of them its own (inventory.Helper): it adds a batch
// itself when the others are behind, so that every goroutine has a core
// and none waits for one. With at least four cores per file, a large file is cut
// into parts read side by side (rdb.Options.From, Until), one per two
// cores: a later part skims the file up to its cut, which costs less
// than a decoder left without a core. Memory does not grow with the
// file size: batches go round a fixed pool, and each aggregator is
// bounded.
const (
	batchRecords   = 512
	batchBytes     = 1 << 20 // of keys and kept values: 1 MB keys do not pile up
	maxAggregators = 4
	minPartBytes   = 8 << 20 // smaller files are read by one decoder
	maxParts       = 4
)

// Run decodes the inputs (several: the shards of one Cluster) into one
// report. A file that stops early does not stop the others.
func Run(ctx context.Context, reg *registry.Registry, ins []*Input, opts Options) (*Result, error) {
	if len(ins) == 0 {
		return nil, errors.New("snapshot: no input")
	}
	if opts.TuneGC {
		// What stays live is bounded and the garbage is short-lived
		// batches: collecting at 3× the live heap rather than 2× skips
		// collections while the heap grows to its size.
		defer debug.SetGCPercent(debug.SetGCPercent(200))
		// The heap of a large file's run on 2 MiB pages: an RDB run of
		// 1M keys took ~4,200 page faults, a tenth of its CPU, and takes
		// ~1,800 so (bench/RESULTS.md).
		defer hugepage.Heap(warmHeap(ins))()
	}
	started := time.Now()
	procs := opts.Procs
	if procs <= 0 {
		procs = max(runtime.GOMAXPROCS(0), 1)
	}
	stopProgress := progressLoop(opts, ins, started)
	// A key export is written as keys are added: a run that must start
	// over (see decodeAll) would write its rows twice.
	split := opts.Inventory.Keys == nil
	agg, res, redo := decodeAll(ctx, reg, ins, opts, procs, split)
	if redo {
		for _, in := range ins {
			in.read.Store(0)
			in.done.Store(false)
		}
		agg, res, _ = decodeAll(ctx, reg, ins, opts, procs, false)
	}
	stopProgress()
	names := make([]string, len(ins))
	for i, in := range ins {
		names[i] = in.Name
	}
	meta := report.Meta{
		Source:    report.Source{Kind: "rdb", Target: strings.Join(names, ","), Nodes: len(ins)},
		Registry:  reg.File,
		StartedAt: started,
		Duration:  time.Since(started),
		Complete:  true,
		Notes:     notes(opts, ins, res),
	}
	for _, r := range res {
		if r.stop != nil {
			meta.Complete = false
			meta.Stopped = append(meta.Stopped, *r.stop)
		}
	}
	if opts.TuneGC {
		// What the report allocates is the report itself, live until it
		// is written: a collection in between would scan it for nothing.
		// The deferred call above restores the setting.
		if opts.Inventory.TopKeys+opts.Inventory.HotKeys >= longLists {
			// A long list's report (100,000 top keys: ~20 MB of entries,
			// order and names) is written to fresh pages, dear here,
			// unless the decoding's garbage is collected first and its
			// memory taken again: −12 to −39 ms in paired runs on the 1M
			// file (bench/RESULTS.md); with 50 top keys it would cost +3.
			runtime.GC()
		}
		debug.SetGCPercent(-1)
	}
	rep := agg.Report(meta)
	rep.Coverage = coverage(ins, res, opts.DB)
	return &Result{Report: rep, Complete: meta.Complete, Stopped: meta.Stopped}, nil
}

// warmHeap is how much of the heap Run asks 2 MiB pages for
// (hugepage.Heap): what a run of a large file holds at its peak, ~48 MB.
// A long top or hot list's memory beyond it is left to 4 KiB pages: asked
// for too (512 bytes a key), `--top 100000` ran no faster and held more
// (bench/RESULTS.md). None for files under warmMinBytes (Heap costs
// ~4 ms, a collection and the heap's growth, which a run of a small file
// does not win back) and for a stream (no size).
func warmHeap(ins []*Input) int {
	var total int64
	for _, in := range ins {
		total += max(in.Size, in.zsize)
	}
	if total < warmMinBytes {
		return 0
	}
	return warmBytes
}

const (
	warmMinBytes = 32 << 20
	warmBytes    = 48 << 20
)

// longLists is the length of the top and hot lists from which Run
// collects the decoding's garbage before building the report.
const longLists = 10_000

// decodeAll decodes the inputs into one Aggregator. With split, files are
// cut into parts where cores allow; redo then reports that a part
// stopped on damage before its end while a later part's records were
// already added: those are not the file's (a decoder reading it whole
// stops at the damage), and the caller must decode again without split.
func decodeAll(ctx context.Context, reg *registry.Registry, ins []*Input, opts Options, procs int, split bool) (agg *inventory.Aggregator, res []fileResult, redo bool) {
	type job struct {
		file int
		p    *part // nil: the whole file
	}
	var jobs []job
	nparts := make([]int, len(ins))
	for _, in := range ins {
		// A run that starts over reads every file again.
		split = split && in.file != nil && in.Size > 0
	}
	// One file holds each key once per database (Redis refuses to load
	// one that repeats a key); several files may share keys.
	opts.Inventory.UniqueKeys = len(ins) == 1
	for i, in := range ins {
		k := 1
		if split && in.Size >= cmp.Or(opts.partBytes, minPartBytes) {
			k = max(1, min(procs/len(ins)/2, maxParts))
		}
		var prev *part
		for j := range k {
			if k == 1 {
				jobs = append(jobs, job{i, nil})
				break
			}
			p := &part{began: make(chan int64, 1)}
			p.from = in.Size * int64(j) / int64(k)
			if prev != nil {
				prev.until, prev.next = p.from, p
			}
			jobs = append(jobs, job{i, p})
			prev = p
		}
		nparts[i] = k
	}
	// The parts of a file wait on each other: all of them run at once
	// (there are at most procs).
	decoders := min(len(jobs), procs)
	if len(jobs) > len(ins) {
		decoders = len(jobs)
	}
	// Each decoder has an aggregator of its own (a helper), which adds a
	// batch on the decoder's goroutine when the workers are behind: one
	// goroutine per core, none waiting for one.
	workers := max(1, min(procs, 2*decoders, maxAggregators)-decoders)
	// The decoder holds every value anyway: reading its names costs a
	// glance, and the censuses then do not depend on which aggregator a
	// key went to, nor in what order.
	opts.Inventory.FieldsEveryValue = true
	pipe := inventory.NewHelpedPipeline(reg, opts.Inventory, workers, decoders)
	aggregators := pipe.Aggregators()
	pool := make(chan *batch, 2*(decoders+aggregators))
	for range cap(pool) {
		pool <- &batch{}
	}
	s := &scan{reg: reg, pipe: pipe, pool: pool, db: opts.DB, match: []byte(opts.Match), skipFields: opts.Inventory.SkipFields,
		jsonRaw: max(cmp.Or(opts.jsonRaw, jsonRawBytes), 0)}
	s.json = make([]jsonReader, pipe.Aggregators())
	out := make([]fileResult, len(jobs))
	left := make([]atomic.Int32, len(ins))
	for i := range ins {
		left[i].Store(int32(nparts[i]))
	}
	work := make(chan int)
	var wg sync.WaitGroup
	for d := range decoders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := pipe.Helper(d)
			for j := range work {
				in := ins[jobs[j].file]
				out[j] = s.file(ctx, h, in, jobs[j].p)
				if left[jobs[j].file].Add(-1) == 0 {
					in.done.Store(true)
				}
			}
		}()
	}
	for j := range jobs {
		work <- j
	}
	close(work)
	wg.Wait()
	agg = pipe.Close()
	res = make([]fileResult, len(ins))
	j := 0
	for i := range ins {
		var again bool
		res[i], again = joinParts(out[j : j+nparts[i]])
		redo = redo || again
		j += nparts[i]
	}
	return agg, res, redo
}

// part is one part of a file read by its own decoder (rdb.Options.From,
// Until); next is the part after it.
type part struct {
	from, until int64
	began       chan int64 // this part's decoder sends where its records began, or -1: never (the file ended or broke before)
	next        *part
}

// joinParts joins the results of a file's parts. again: a part stopped
// on damage before its end while the next one had begun.
func joinParts(ps []fileResult) (res fileResult, again bool) {
	res = ps[0]
	for j := 1; j < len(ps); j++ {
		q := ps[j]
		if q.began < 0 {
			break // no records: the previous part read on to where the file ends
		}
		if prev := ps[j-1]; prev.end < 0 {
			// The previous part stopped before its end.
			if !prev.interrupted {
				return res, true
			}
			q.stop = nil // the run stopped: the first part's stop says where
		}
		res.keys += q.keys
		res.expired += q.expired
		res.empty += q.empty
		res.streams = res.streams || q.streams
		res.freqs = res.freqs || q.freqs
		res.noCreated = res.noCreated || q.noCreated
		res.resize = q.resize // it read every RESIZEDB up to where it stopped
		res.crc = q.crc       // the last part read the trailer
		res.slots.merge(&q.slots)
		res.covered += q.covered
		for db, n := range q.dbKeys {
			if res.dbKeys == nil {
				res.dbKeys = map[int]int64{}
			}
			res.dbKeys[db] += n
		}
		if res.stop == nil {
			res.stop = q.stop
		}
		res.end = q.end
	}
	if res.stop != nil {
		res.stop.Keys = res.keys
	}
	return res, false
}

// coverage says what the report counted of each file: its databases, the
// keys counted against the keys the file declares for them (RESIZEDB;
// expired keys and empty collections are declared but not counted), and
// every file that stopped before its end.
func coverage(ins []*Input, res []fileResult, onlyDB int) *report.Coverage {
	c := &report.Coverage{}
	var read, size int64
	for i, in := range ins {
		r := res[i]
		n := report.CoverageNode{Addr: DisplayName(in.Name), Role: "snapshot", ReplID: r.replID}
		if r.crc != 0 {
			n.CRC64 = strconv.FormatUint(r.crc, 16)
		}
		dbs := map[int]*report.CoverageDB{}
		get := func(db int) *report.CoverageDB {
			if d, ok := dbs[db]; ok {
				return d
			}
			d := &report.CoverageDB{DB: db, KeysStart: -1, KeysEnd: -1, Complete: r.stop == nil}
			dbs[db] = d
			return d
		}
		for _, h := range r.resize {
			if onlyDB < 0 || h.DB == onlyDB {
				get(h.DB).KeysStart = int64(h.Keys)
			}
		}
		for db, k := range r.dbKeys {
			get(db).Counted = k
		}
		for _, d := range dbs {
			n.DBs = append(n.DBs, *d)
		}
		slices.SortFunc(n.DBs, func(a, b report.CoverageDB) int { return a.DB - b.DB })
		c.Nodes = append(c.Nodes, n)
		// The part of the file decoded: all of it, or up to where it stopped.
		whole := max(in.Size, in.read.Load(), 1)
		done := whole
		if r.stop != nil {
			at := "stopped at byte " + r.stop.Cursor
			if in.codec != "" {
				at += " of its decompressed content"
			}
			c.NotCovered = append(c.NotCovered, report.Gap{Node: DisplayName(in.Name), Reason: at + ": " + r.stop.Reason})
			done = min(max(r.covered, 0), whole)
			sized := in.Size > 0
			if zread, zsize := in.position(); in.codec != "" && zsize > 0 {
				// The share of the compressed file read: of the
				// decompressed content, the size is not known.
				whole, done, sized = zsize, min(zread, zsize), true
			}
			f, declared := keysShare(n.DBs)
			switch {
			case sized && declared && float64(done) > f*float64(whole):
				// A truncated file is read to its end, yet holds only
				// part of the snapshot: its keys say which part.
				done = int64(f * float64(whole))
			case !sized:
				whole, done = unsized(n.DBs, done)
			}
		}
		read, size = read+done, size+whole
	}
	switch {
	case len(c.NotCovered) == 0:
		c.Share = 1
	default:
		c.Share = min(float64(read)/float64(size), 0.999) // the part of the files decoded
	}
	return c
}

// unsized is the share of an input of unknown length (a server's
// diskless snapshot, a pipe) that stopped after covered bytes, as bytes
// done of bytes whole: the bytes read say nothing of the bytes to come,
// so the share is the keys counted of those its databases declared
// (RESIZEDB), the whole scaled from the bytes read; an input that
// declared none claims nothing. (A database the input never reached
// declared nothing yet: the share leaves its keys out.)
func unsized(dbs []report.CoverageDB, covered int64) (whole, done int64) {
	f, ok := keysShare(dbs)
	if !ok || f == 0 || covered == 0 {
		return max(covered, 1), 0
	}
	return max(int64(float64(covered)/f), covered), covered
}

// keysShare is the share of the keys its databases declared (RESIZEDB)
// that an input stopped early counted; ok is false when none declared
// any. Expired keys are declared and not counted: the share errs low.
func keysShare(dbs []report.CoverageDB) (f float64, ok bool) {
	var counted, declared int64
	for _, d := range dbs {
		if d.KeysStart > 0 {
			counted, declared = counted+d.Counted, declared+d.KeysStart
		}
	}
	if declared == 0 {
		return 0, false
	}
	return min(float64(counted)/float64(declared), 1), true
}

// scan is what the decoders of one run share. Its fields are read for
// every record, by every decoder and aggregator; the padding keeps them
// off the cache lines of whatever is allocated next to it, which another
// core may write (the aggregators' list feeds are of its size class).
// With it and the batches padded a run took 5–6% less CPU on 1M and 5M
// keys (bench/RESULTS.md): a line another core writes is fetched again
// by each reader after each write.
type scan struct {
	_     cpu.CacheLinePad
	reg   *registry.Registry
	pipe  *inventory.Pipeline
	pool  chan *batch
	db    int    // -1 every database
	match []byte // "" every key

	skipFields bool // Options.Inventory.SkipFields: no field names are read

	json    []jsonReader // one per aggregator: the keys of the short JSON values, read there
	jsonRaw int          // rdb.Options.JSONRaw
	_       cpu.CacheLinePad
}

// jsonRawBytes is the longest JSON value whose keys an aggregator reads
// (rdb.Options.JSONRaw): the decoder copies it into the batch, which
// costs it less than reading its keys; a longer one it reads itself.
const jsonRawBytes = 1024

// jsonReader reads the keys of JSON values on one aggregator's goroutine.
// The readers of a run lie in one array: the padding keeps each one's
// last line apart from the next one's first, each written by another
// aggregator.
type jsonReader struct {
	sets  nameSets
	names jsonkeys.Interner
	keys  []string
	_     cpu.CacheLinePad
}

// set returns the set of raw's top-level keys, as the decoder would have
// read them (rdb.Options.JSONKeys).
func (j *jsonReader) set(raw string) *inventory.FieldSet {
	j.keys = jsonkeys.Top(j.keys[:0], unsafe.Slice(unsafe.StringData(raw), len(raw)), maxJSONKeys, &j.names)
	return j.sets.ofJSON(j.keys)
}

// fileResult is what one file gave besides its records.
type fileResult struct {
	keys      int64  // records passed to the inventory
	expired   int64  // keys already expired when the snapshot was taken
	empty     int64  // collections without elements the decoder skipped
	hashesExp int64  // hashes whose fields had all expired, skipped
	fieldsExp int64  // hash fields expired, left out
	sizing    string // how the memory figures relate to the file's writer (rdb.Meta.SizingNote)
	streams   bool   // some record is a stream
	freqs     bool   // some record carried an LFU counter
	noCreated bool   // no ctime aux field: TTLs counted from the file's mtime
	orphans   int64  // keys of slots the node does not serve (Input.OwnSlots)
	stop      *report.NodeStop
	dbKeys    map[int]int64    // records counted per database
	resize    []rdb.ResizeHint // the file's own key counts per database
	replID    string           // the file's repl-id field
	slots     slotSample       // the Cluster slots of one key in slotEvery
	crc       uint64           // the file's CRC64, read whole and checked; 0 not

	covered     int64 // bytes decoded (of a part: from where it began), when it stopped
	interrupted bool  // it stopped because the run was
	began       int64 // a part's records began at this offset; -1 never
	end         int64 // a part ended at this offset, where the next one began; -1 it did not
}

// batch is a run of records of one file. The keys, __ns__ values and
// short JSON values the records point to are kept in the batch's own
// buffers (the decoder writes the keys there itself), without an
// allocation per key; hash field names cross as shared
// inventory.FieldSets, not copies, and the keys of a JSON value are read
// by the aggregator that takes the batch (jsonReader). Batches go
// round between the decoders and the pipeline with their buffers (see
// reset), which is safe because an Aggregator copies what it keeps.
//
// A decoder writes a batch's fields for every record it adds, while an
// aggregator reads those of the batch before it (prep, for every
// record): the batches of a run are made one after the other, so the
// padding keeps each on cache lines of its own.
type batch struct {
	_        cpu.CacheLinePad
	recs     []inventory.Record
	json     []string // of recs[i]: a JSON value whose keys its aggregator reads (jsonReader), or ""
	prep     func(agg, i int, r *inventory.Record)
	keys     []byte // the records' keys, back to back
	arena    []byte // __ns__ values
	keyBytes int    // of keys and kept values, for the batch's bound
	_        cpu.CacheLinePad
}

// reset empties the batch for reuse. The old records are not cleared:
// what they point to is the batch's own buffers, registry entries and
// field sets, all alive anyway, and appending a
// record overwrites all of it.
func (b *batch) reset() {
	b.recs, b.json, b.keys, b.arena, b.keyBytes = b.recs[:0], b.json[:0], b.keys[:0], b.arena[:0], 0
}

// keyChunk is the key buffer a batch starts with: 512 keys of 32 bytes.
const keyChunk = 16 << 10

// key returns k as a string that is valid until the batch is reset: in
// place when k is what the decoder appended last to the batch's key
// buffer (rdb.Decoder.KeysInto), else appended to it. When the buffer
// grows, the strings handed out before keep pointing into the old one,
// which stays alive.
func (b *batch) key(k []byte) string {
	if len(k) == 0 {
		return ""
	}
	if n := len(b.keys); n >= len(k) && unsafe.SliceData(k) == &b.keys[n-len(k)] {
		return unsafe.String(unsafe.SliceData(k), len(k))
	}
	if b.keys == nil {
		b.keys = make([]byte, 0, max(keyChunk, len(k)))
	}
	start := len(b.keys)
	b.keys = append(b.keys, k...)
	return unsafe.String(&b.keys[start], len(k))
}

// keep copies p into the arena and returns it as a string valid until
// the batch is reset.
func (b *batch) keep(p []byte) string {
	if len(p) == 0 {
		return ""
	}
	if cap(b.arena)-len(b.arena) < len(p) {
		b.arena = make([]byte, 0, max(2*cap(b.arena), len(p), keyChunk)) // the old arena stays alive through its strings
	}
	start := len(b.arena)
	b.arena = append(b.arena, p...)
	b.keyBytes += len(p)
	return unsafe.String(&b.arena[start], len(p))
}

// nsField is the reserved hash field of namespace-guarded hashes.
const nsField = registry.NSField

// file decodes one file, or a part of it, into batches for the pipeline.
func (s *scan) file(ctx context.Context, h *inventory.Helper, in *Input, p *part) (res fileResult) {
	res.end = -1
	var src io.Reader = in
	var from, until int64
	if p != nil {
		from, until = p.from, p.until
	}
	var pr *partReader
	if in.file != nil && in.Size > 0 {
		// A regular file is read at its own offsets, so that a run can
		// read it again (see decodeAll).
		pr = &partReader{in: in, from: from, until: until}
		src = pr
	}
	// Every value is looked into as far as any class could ask (__ns__,
	// field names): the keys are classified by the aggregators
	// (Helper.AddRead), off this goroutine, which has the file to read.
	matched := true // the key matches opts.Match
	var look func(key []byte) rdb.Look
	if len(s.match) > 0 {
		look = func(key []byte) rdb.Look {
			if matched = glob.Match(s.match, key); !matched {
				return 0 // skipped below
			}
			return rdb.LookAll
		}
	}
	fieldSample, jsonKeys := 33, maxJSONKeys // 32 names besides __ns__, as the audit's HRANDFIELD key 32
	if s.skipFields {
		fieldSample, jsonKeys = 0, 0 // no census asks for names: none are read
	}
	dec := rdb.NewDecoder(src, rdb.Options{
		FieldSample: fieldSample,
		WatchFields: []string{nsField},
		JSONKeys:    jsonKeys,
		JSONRaw:     s.jsonRaw,
		Look:        look,
		From:        from,
		Until:       until,
	})
	signalled := from == 0 // a later part says where it began, once
	res.began = -1
	var (
		createdMS int64
		created   bool
		sets      nameSets // this file's field sets, each sent once
	)
	// Keys per database, counted while the database stays the same
	// (a map update per key costs more).
	curDB, curKeys := 0, int64(0)
	flushDB := func() {
		if curKeys > 0 {
			if res.dbKeys == nil {
				res.dbKeys = map[int]int64{}
			}
			res.dbKeys[curDB] += curKeys
			curKeys = 0
		}
	}
	defer flushDB()
	b := <-s.pool
	defer func() { s.send(h, b) }()
	// The decoder writes each key straight into the batch.
	take := func(nb *batch) {
		b = nb
		if b.keys == nil {
			b.keys = make([]byte, 0, keyChunk)
		}
		dec.KeysInto(&b.keys)
	}
	take(b)
	stop := func(off int64, reason string) {
		res.stop = &report.NodeStop{Node: in.Name, Reason: reason, Cursor: strconv.FormatInt(off, 10), Keys: res.keys}
		res.covered = off - max(res.began, 0)
	}
	for {
		mark := len(b.keys) // a record left out leaves its key behind
		r, err := dec.Next()
		if !signalled {
			if at, ok := dec.Began(); ok || err != nil {
				if !ok {
					at = -1
				}
				p.began <- at
				res.began, signalled = at, true
			}
		}
		if err == rdb.ErrPartEnd {
			at := dec.Offset()
			switch next := <-p.next.began; {
			case next == at:
				res.end = at
				res.empty = dec.Meta().EmptySkipped
				res.resize = dec.Meta().Resize
				res.covered = at - max(res.began, 0)
				return res
			case next >= 0:
				// Both decoders read the same lengths up to here: a
				// difference is a bug, and the records after it are
				// dropped by a run without parts.
				stop(at, fmt.Sprintf("the next part of the file began at byte %d, not here", next))
				return res
			}
			pr.until = 0
			continue // the next part never began: this one reads on
		}
		if err != nil {
			res.replID, _ = dec.Meta().AuxValue("repl-id")
			if err == io.EOF && dec.Meta().ChecksumVerified {
				res.crc = dec.Meta().Checksum
			}
			res.empty = dec.Meta().EmptySkipped
			res.hashesExp, res.fieldsExp = dec.Meta().HashesExpired, dec.Meta().FieldsExpired
			res.sizing = dec.Meta().SizingNote(in.Display())
			res.resize = dec.Meta().Resize
			res.covered = dec.Offset() - max(res.began, 0)
			if err != io.EOF {
				var fe *rdb.FormatError
				off, reason := dec.Offset(), err.Error()
				if errors.As(err, &fe) {
					off = fe.Offset
					reason = strings.TrimPrefix(reason, fmt.Sprintf("rdb: offset %d: ", off)) // the stop says where
				}
				if in.stream && errors.Is(err, io.ErrUnexpectedEOF) {
					// Not a truncated file: a link that ended.
					reason = "the snapshot ended early: the server stopped or the connection was lost (unexpected EOF); the keys before this byte were counted: run again"
				}
				stop(off, human.OneLine(reason))
			}
			return res
		}
		if !matched || s.db >= 0 && r.DB != s.db {
			b.keys = b.keys[:mark]
			continue
		}
		if !created {
			// The aux fields come before the first key. ctime counts
			// seconds: a key that expired less than a second before the
			// save can pass for live with a TTL under a second.
			t, ok := dec.Meta().Created()
			if !ok {
				t, res.noCreated = in.Mod, true
			}
			createdMS, created = t.UnixMilli(), true
		}
		ttl := time.Duration(-1)
		if r.ExpireAt != 0 {
			left := r.ExpireAt - createdMS
			if left <= 0 {
				res.expired++ // Redis drops it on load; a live audit would not see it
				b.keys = b.keys[:mark]
				continue
			}
			ttl = time.Duration(left) * time.Millisecond
		}
		b.add(r, ttl, in.Name, &sets)
		if in.owned != nil && int64(len(r.Key)) == r.KeyLen && !in.owned[keyslot.Slot(unsafe.String(unsafe.SliceData(r.Key), len(r.Key)))] {
			res.orphans++
		}
		if (res.keys < slotFirst || res.keys%slotEvery == 0) && int64(len(r.Key)) == r.KeyLen {
			res.slots.add(unsafe.String(unsafe.SliceData(r.Key), len(r.Key)))
		}
		if r.Freq >= 0 {
			res.freqs = true
		}
		res.streams = res.streams || r.Type == rdb.TypeStream
		res.keys++
		if r.DB != curDB {
			flushDB()
			curDB = r.DB
		}
		curKeys++
		if len(b.recs) == batchRecords || b.keyBytes >= batchBytes {
			if ctx.Err() != nil {
				stop(dec.Offset(), "interrupted: "+context.Cause(ctx).Error())
				res.interrupted = true
				return res
			}
			s.send(h, b)
			take(<-s.pool)
		}
	}
}

// partReader reads a file from its start for the decoder of one part,
// with its own offset (ReadAt), counting for Progress the bytes of the
// part, from..until (0: the end), so that the parts add up to the file.
type partReader struct {
	in          *Input
	from, until int64
	off         int64
}

func (r *partReader) Read(p []byte) (int, error) {
	n, err := r.in.file.ReadAt(p, r.off)
	end := r.off + int64(n)
	if r.until > 0 {
		end = min(end, r.until)
	}
	if start := max(r.off, r.from); end > start {
		r.in.read.Add(end - start)
	}
	r.off += int64(n)
	if err == nil && n == 0 {
		err = io.EOF
	}
	return n, err
}

// add appends the record of r to the batch, with all a class could ask
// for (Helper.AddRead).
func (b *batch) add(r *rdb.Record, ttl time.Duration, node string, sets *nameSets) {
	// Written in place, field by field: a record is three cache lines,
	// and append of a literal builds it aside first, then copies it.
	n := len(b.recs)
	if n == cap(b.recs) {
		b.recs = append(b.recs, inventory.Record{})
	}
	b.recs = b.recs[:n+1]
	b.json = append(b.json, "")
	rec := &b.recs[n]
	rec.Key, rec.DB, rec.Node, rec.Type, rec.Encoding = b.key(r.Key), r.DB, node, string(r.Type), r.Encoding
	rec.Bytes, rec.Elements, rec.TTL, rec.Freq = r.MemoryEstimate, r.Elements, ttl, r.Freq
	rec.NS, rec.HasNS, rec.NSProbed, rec.Fields, rec.Set, rec.Weight, rec.Form = "", false, false, nil, nil, 0, r.Form
	if r.Type == rdb.TypeModule && r.Module != "" {
		rec.Type = r.Module // what TYPE answers for a module value
	}
	if r.Partial && r.Elements == 0 {
		rec.Elements = -1
	}
	switch r.Type {
	case rdb.TypeHash:
		for _, w := range r.Watched {
			if w.Name == nsField {
				rec.NS, rec.HasNS = b.keep(w.Value), true
			}
		}
		// The names are hashed where the decoder left them; only a set
		// not seen before is copied (once, by sets).
		named := false
		for _, f := range r.Fields {
			if string(f) != nsField {
				named = true
				break
			}
		}
		if named {
			rec.Set = sets.OfBytesAny(r.Fields)
		} else {
			rec.Fields = noFields // if asked, counted as a value without names
		}
	case rdb.TypeString:
		if r.JSON != nil {
			b.json[n] = b.keep(r.JSON) // its keys are read by the aggregator (send)
		} else {
			rec.Set = sets.ofJSON(r.JSONKeys)
		}
	}
	b.keyBytes += len(rec.Key)
}

// nameSets is a file's field sets (inventory.FieldSets), with the sets of
// JSON keys found by the strings themselves: the decoder interns JSON key
// names (jsonkeys.Interner), so a value holding the same names as the
// last value of as many keys mostly holds the very same strings, which
// two pointers per key compare without reading a byte. Strings are never
// changed, and these are held here, so the same pointer and length are
// the same name.
type nameSets struct {
	inventory.FieldSets
	json [maxJSONKeys + 1]jsonSet // by count
}

// maxJSONKeys is the most JSON keys the decoder reads of a value.
const maxJSONKeys = 32

type jsonSet struct {
	keys []string // the value's keys, as the decoder gave them
	set  *inventory.FieldSet
}

// ofJSON returns the set of a JSON value's keys, as FieldSets.OfAny.
func (c *nameSets) ofJSON(keys []string) *inventory.FieldSet {
	if len(keys) == 0 || len(keys) > maxJSONKeys {
		return c.OfAny(keys)
	}
	l := &c.json[len(keys)]
	if l.set != nil && sameStrings(l.keys, keys) {
		return l.set
	}
	l.set = c.OfAny(keys)
	l.keys = append(l.keys[:0], keys...)
	return l.set
}

// sameStrings reports whether a and b (of one length) hold the very same
// strings: same bytes in memory, same lengths.
func sameStrings(a, b []string) bool {
	for i, s := range b {
		if len(a[i]) != len(s) || unsafe.StringData(a[i]) != unsafe.StringData(s) {
			return false
		}
	}
	return true
}

// noFields is the Fields of a hash that held no names (not nil: a
// class that asked counts it as a value without names).
var noFields = []string{}

// send hands b to the pipeline, which returns it to the pool once added.
func (s *scan) send(h *inventory.Helper, b *batch) {
	if len(b.recs) == 0 {
		s.pool <- b
		return
	}
	if b.prep == nil {
		b.prep = func(agg, i int, r *inventory.Record) {
			if raw := b.json[i]; raw != "" {
				r.Set = s.json[agg].set(raw)
			}
		}
	}
	h.AddRead(b.recs, b.prep, func() {
		b.reset()
		s.pool <- b
	})
}

// otherDBs adds to the note of --db N, when the files declare no key of
// database N (RESIZEDB) but keys of others, where those are: a wrong
// number reads as a clean, empty keyspace.
func otherDBs(db int, res []fileResult) string {
	declared := map[int]uint64{}
	for _, r := range res {
		for _, h := range r.resize {
			declared[h.DB] += h.Keys
		}
	}
	if declared[db] > 0 || len(declared) == 0 {
		return ""
	}
	var held []string
	for _, d := range slices.Sorted(maps.Keys(declared)) {
		if declared[d] > 0 {
			held = append(held, fmt.Sprintf("%d (%s)", d, human.Plural(int64(declared[d]), "key")))
		}
	}
	if len(held) == 0 {
		return ""
	}
	return fmt.Sprintf(", of which the snapshot declares no key; its keys are in database %s: give that number to --db, or no --db for every database", strings.Join(held, ", "))
}

// notes explains what the report leaves out.
func notes(opts Options, ins []*Input, res []fileResult) []string {
	var notes []string
	var expired, empty, hashesExp, fieldsExp int64
	freqs, streams := false, false
	for i, r := range res {
		expired += r.expired
		empty += r.empty
		hashesExp += r.hashesExp
		fieldsExp += r.fieldsExp
		streams = streams || r.streams
		freqs = freqs || r.freqs
		if r.sizing != "" {
			notes = append(notes, r.sizing)
		}
		if r.orphans > 0 {
			verb := "are"
			if r.orphans == 1 {
				verb = "is"
			}
			notes = append(notes, fmt.Sprintf("%s on %s %s in slots the node does not serve (left by a slot migration, or written to the node directly): it holds them and their memory, counted here, but clients are sent to another node for them and never read them", human.Plural(r.orphans, "key"), ins[i].Display(), verb))
		}
		if r.noCreated {
			notes = append(notes, fmt.Sprintf("%s does not say when it was written (no ctime aux field: Redis < 4.0): remaining TTLs are counted from its modification time", ins[i].Display()))
		}
	}
	if expired > 0 {
		what := human.Count(expired) + " keys had"
		if expired == 1 {
			what = "1 key had"
		}
		notes = append(notes, what+" already expired when the snapshot was taken; they are left out, as Redis drops them on load")
	}
	if empty > 0 {
		what := human.Count(empty) + " empty lists, sets, sorted sets or hashes were"
		if empty == 1 {
			what = "1 empty list, set, sorted set or hash was"
		}
		notes = append(notes, what+" left out (the snapshot holds them without elements; Redis drops them on load)")
	}
	if fieldsExp > 0 {
		note := human.Plural(fieldsExp, "hash field") + " had already expired when the snapshot was taken (Redis 7.4 field TTLs); they are left out of counts and sizes, as Redis drops them on load"
		switch {
		case hashesExp == 1:
			note += ", and 1 hash with no field left is left out as a key"
		case hashesExp > 1:
			note += ", and " + human.Plural(hashesExp, "hash") + " with no field left are left out as keys"
		}
		notes = append(notes, note)
	}
	if streams {
		notes = append(notes, "streams are sized as a server holds them once it has loaded the snapshot; MEMORY USAGE on the server that wrote it can be up to 4 KiB more per stream (its last node is preallocated)")
	}
	if opts.DB >= 0 {
		notes = append(notes, fmt.Sprintf("only database %d was audited", opts.DB)+otherDBs(opts.DB, res))
	}
	if note := slotGapNote(ins, res); note != "" && opts.Match == "" {
		notes = append(notes, note)
	}
	if opts.Match != "" {
		notes = append(notes, fmt.Sprintf("only keys matching %q were audited", opts.Match))
	}
	if !freqs {
		notes = append(notes, "hot-key data unavailable: the snapshot has no LFU counters (they are saved only under an LFU maxmemory-policy)")
	}
	return notes
}

// progressLoop calls opts.Progress every ProgressEvery until stop, then
// once more with Final set.
func progressLoop(opts Options, ins []*Input, started time.Time) (stop func()) {
	if opts.Progress == nil {
		return func() {}
	}
	every := opts.ProgressEvery
	snap := func() Progress {
		p := Progress{Files: len(ins), Elapsed: time.Since(started)}
		known := true
		for _, in := range ins {
			read, total := in.position()
			p.Read += read
			p.Total += total
			known = known && total > 0
			if in.done.Load() {
				p.FilesDone++
			}
		}
		if !known {
			p.Total = 0
		}
		return p
	}
	return progress.Start(every, func(final bool) {
		p := snap()
		p.Final = final
		opts.Progress(p)
	})
}
