package live

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/keyguard/keyguard/internal/audit/inventory"
	"github.com/keyguard/keyguard/internal/jsonkeys"
	"github.com/keyguard/keyguard/internal/resp"
	"github.com/keyguard/keyguard/internal/valueform"
)

// encodings are the per-key commands of a walk, encoded once.
type encodings struct {
	typ, pttl, mem, freq, hgetNS resp.KeyCmd
	hashFields, jsonHead         resp.KeyCmd // the field probes: HRANDFIELD key 32, GETRANGE key 0 4095
	hashPairs                    resp.KeyCmd // HRANDFIELD key 32 WITHVALUES: field names and __ns__
	count                        [len(countCmds)]resp.KeyCmd
	// values: the first probe of a hash or string may read its value
	// (the ACL user may run HRANDFIELD and GETRANGE); set once the
	// permissions are known.
	values bool
	mod    models    // memory from the values read (model.go)
	fam    *famTypes // unregistered families' types (guess.go)
	// names shares the field names and JSON keys read: the same few
	// dozen names on most keys of a template.
	names jsonkeys.Interner
}

func newEncodings(samples int) encodings {
	e := encodings{
		typ:        resp.NewKeyCmd([]string{"TYPE"}),
		pttl:       resp.NewKeyCmd([]string{"PTTL"}),
		mem:        resp.NewKeyCmd([]string{"MEMORY", "USAGE"}, "SAMPLES", strconv.Itoa(max(samples, 0))),
		freq:       resp.NewKeyCmd([]string{"OBJECT", "FREQ"}),
		hgetNS:     resp.NewKeyCmd([]string{"HGET"}, "__ns__"),
		hashFields: resp.NewKeyCmd([]string{"HRANDFIELD"}, strconv.Itoa(fieldProbeCount)),
		jsonHead:   resp.NewKeyCmd([]string{"GETRANGE"}, "0", strconv.Itoa(jsonPrefixBytes-1)),
		hashPairs:  resp.NewKeyCmd([]string{"HRANDFIELD"}, strconv.Itoa(fieldProbeCount), "WITHVALUES"),
		fam:        &famTypes{},
	}
	for i, c := range countCmds {
		e.count[i] = resp.NewKeyCmd([]string{c})
	}
	return e
}

// fieldProbe is the field-name probe of a type: HRANDFIELD for a hash,
// the head of a string for its top-level JSON keys.
func (e *encodings) fieldProbe(t string) resp.KeyCmd {
	if t == "hash" {
		return e.hashFields
	}
	return e.jsonHead
}

// firstProbe is the first command on a key whose template declares its
// type (after OBJECT FREQ): a reply of that type proves the type. For a
// hash or a string it reads the value, which answers the element count
// too: HRANDFIELD key 32 WITHVALUES returns every field of a hash of fewer
// than 32 (its field names, __ns__, and its memory by the model), GETRANGE
// key 0 4095 all of a string shorter than 4096 bytes. Only longer values
// send the count (and HGET) in the count stage. Other types, or without
// HRANDFIELD and GETRANGE, it is the element count.
func (e *encodings) firstProbe(g string) resp.KeyCmd {
	switch {
	case g == "hash" && e.values:
		return e.hashPairs
	case g == "string" && e.values:
		return e.jsonHead
	}
	cc, _ := e.countOf(g)
	return cc
}

// readsValue: the first probe of a key of type g reads its value.
func (e *encodings) readsValue(g string) bool { return e.values && (g == "hash" || g == "string") }

// separateNS: __ns__ of a guessed hash needs its own HGET (HRANDFIELD
// may not be sent).
func (e *encodings) separateNS(g string, ns bool) bool { return ns && g == "hash" && !e.values }

// countOf is the element count command of a type (ok false for module
// types).
func (e *encodings) countOf(t string) (resp.KeyCmd, bool) {
	i := countIndex(t)
	if i < 0 {
		return resp.KeyCmd{}, false
	}
	return e.count[i], true
}

// batch is the keys of one SCAN reply on their way through the probes.
type batch struct {
	cursor  string // the cursor SCAN was called with
	next    string // the cursor it returned
	scanned int64  // keys it returned, sampled or not
	recs    []inventory.Record
	class   []inventory.Class // of each record, from its key
	tpl     []*tmpl           // the prober's state of its template (models.of)
	fam     []*family         // unregistered: the walker's record of its family (nil: none yet)
	drop    []uint8           // why a record is skipped (dropNone: it is added)
	guess   []string          // the template's type, whose count goes with the probes; "" unknown
	ns      []bool            // HGET key __ns__ goes with the element count (a guarded hash)
	fld     []bool            // a field probe goes with the element count (the class asks for field names)
	fldRead []bool            // the field probe's reply was read into the record
	stage   []uint8           // what the count stage still reads
	slot    []int32           // the Cluster slot of each record; -1 for SCAN
	// pend are keys listed and not classified yet (from pendNext on, in
	// pendStr once the first is): the prober classifies them as it writes
	// their probes, so the server starts on the first while it classifies
	// the others.
	pend     listing
	pendNext int
	pendStr  string
	// Of each record as its probes are written: MEMORY USAGE left to the
	// model, and the model's bytes (-1: the value was not read whole).
	skip []bool
	est  []int64
	// names holds the field names read, each record's Fields a slice of
	// it: the aggregator keeps none of them (Aggregator.Add), and the
	// batch is reused only once it is added.
	names []string

	// A Cluster walk's batch is whole slots.
	slots    []int   // the slots listed
	slotKeys []int64 // keys in each, as listed
	badSlots []int   // slots dropped whole: not served any more, or a key answered MOVED or ASK
	lost     bool    // the node no longer serves its slots
}

// part is one group of commands of a pipeline: the probes of records
// [from, to) of b, or b's count stage.
type part struct {
	b        *batch
	from, to int
	counts   bool
}

// tailOf is how many of a batch's n keys have their probes sent after the
// listing (SCAN, or a chunk's GETKEYSINSLOT) in their pipeline. The server
// works on them while the prober reads the listing's reply and writes the
// next pipeline, so it does not wait for the prober between pipelines;
// their replies, and those of the count stage sent after them, are read
// once the next pipeline is written.
func tailOf(n int) int { return (n + 3) / 4 }

// produce is the prober. Each round trip carries the probes of the last
// batch listed, the listing of the next one (SCAN, or GETKEYSINSLOT on a
// Cluster) between its head and its tail, and the count stage of a batch
// probed before. A batch goes to out once its count stage is read, in the
// order of the listings.
func (w *walker) produce(ctx context.Context, out chan<- *batch, free chan *batch) error {
	cursor := w.plan.cursor
	slotMode := w.plan.slotList != nil
	scanning := !slotMode || len(w.plan.slotList) > 0
	var probe *batch      // listed: probed in the next pipeline
	var counting []*batch // probed: their count stage goes in the next pipeline
	var carry []part      // sent after the last listing; replies not read yet
	var sentOn *resp.Conn // the connection carry went out on
	perKey := 4
	if w.lfu && w.canFreq {
		perKey = 5
	}
	count1 := w.r.lim.batchKeys(w.r.opts.Count, perKey, w.r.width)
	var shrink shrinkWatch
	var lost error
	for scanning || probe != nil || len(counting) > 0 || len(carry) > 0 {
		var chunk []int
		if scanning && slotMode {
			chunk = w.nextChunk(count1)
		}
		var before, after []part
		if probe != nil {
			if w.r.lim.limits() {
				w.classify(probe) // the pace counts each key's commands
			}
			n := probe.keys()
			h := n
			if scanning {
				h -= tailOf(n)
			}
			before = append(before, part{b: probe, to: h})
			if h < n {
				after = append(after, part{b: probe, from: h, to: n})
			}
		}
		for _, b := range counting {
			after = append(after, part{b: b, counts: true})
		}
		var scanned *batch
		err := w.retry(ctx, func(c *resp.Conn) error {
			// A new connection did not get what the last pipeline sent
			// after its listing: send it again, first.
			var err error
			scanned, err = w.iterate(ctx, c, cursor, chunk, scanning, count1, carry, c != sentOn, before, after, free)
			if err == nil {
				sentOn = c
			}
			return err
		})
		if err != nil {
			return err
		}
		read := append(append([]part(nil), carry...), before...)
		if scanning {
			carry = after
		} else {
			read, carry = append(read, after...), nil
		}
		counting = nil
		for _, p := range read {
			switch {
			case p.counts:
				select {
				case out <- p.b:
				case <-ctx.Done():
					return ctx.Err()
				}
			case p.to == len(p.b.recs): // the batch's last probes
				w.probesRead(p.b)
				counting = append(counting, p.b)
			}
		}
		probe = scanned
		if scanned != nil && slotMode {
			w.next += len(chunk)
			w.listedSlots += int64(len(chunk))
			w.listedKeys += scanned.scanned
			w.scanned.Add(scanned.scanned)
			scanning = w.next < len(w.plan.slotList)
			if scanned.lost {
				// Demoted or emptied: list nothing more here; the slots
				// left are walked again on their owner.
				scanning, lost = false, errNotOwner
			}
		} else if scanned != nil {
			cursor = scanned.next
			w.scanned.Add(scanned.scanned)
			if cursor == "0" {
				scanning = false
			} else if shrink.see(cursor) {
				w.shrunk = true
			}
		}
	}
	return lost
}

// iterate sends one pipeline — carry again when resend, the parts before,
// the listing when scanning, the parts after — and reads the replies to
// carry, to before and to the listing, which become a new batch. The
// replies to after are read too when there is no listing; otherwise they
// are the next round trip's carry.
//
// Per key the probes are OBJECT FREQ (LFU servers; first, before anything
// touches the key), PTTL, MEMORY USAGE, and either TYPE or — when the
// key's template declares a type — that type's first probe straight
// away: a reply of the type proves it, so a well-typed registered key
// costs three commands, as many as the bare TYPE/PTTL/MEMORY walk. A
// WRONGTYPE reply is a type mismatch, resolved in the count stage with
// TYPE and every count command.
func (w *walker) iterate(ctx context.Context, c *resp.Conn, cursor string, chunk []int, scanning bool, countN int, carry []part, resend bool, before, after []part, free chan *batch) (*batch, error) {
	o := &w.r.opts
	freq := w.lfu && w.canFreq
	n := 0
	for _, p := range before {
		n += p.cmds(freq)
	}
	for _, p := range after {
		n += p.cmds(freq)
	}
	if scanning {
		// A chunk of GETKEYSINSLOT lists about as many keys as one SCAN,
		// mostly from empty or small slots: it counts as one command.
		n++
	}
	if err := w.r.lim.wait(ctx, n); err != nil {
		return nil, err
	}
	if err := c.Begin(ctx); err != nil {
		return nil, err
	}
	pushed := false
	if resend {
		w.writeParts(c, carry, freq, &pushed)
	}
	// The head of the probes first: the server runs them right after the
	// listing that returned their keys, which left those keys in its
	// caches.
	w.writeParts(c, before, freq, &pushed)
	if scanning && chunk != nil {
		writeSlots(c, chunk)
	} else if scanning {
		countStr := strconv.Itoa(countN)
		if o.Match != "" {
			c.Cmd("SCAN", cursor, "MATCH", o.Match, "COUNT", countStr)
		} else {
			c.Cmd("SCAN", cursor, "COUNT", countStr)
		}
	}
	w.writeParts(c, after, freq, &pushed)
	c.Take()
	if err := c.Flush(); err != nil {
		return nil, err
	}
	if err := w.readParts(c, carry, freq); err != nil {
		return nil, err
	}
	if err := w.readParts(c, before, freq); err != nil {
		return nil, err
	}
	if !scanning {
		return nil, w.readParts(c, after, freq)
	}
	if chunk != nil {
		return w.readSlots(c, chunk, free)
	}
	return w.readScan(c, cursor, free)
}

// cmds is how many commands p sends, at most: the model may leave out
// MEMORY USAGE, and HRANDFIELD … WITHVALUES read __ns__ when permitted.
func (p part) cmds(freq bool) int {
	b := p.b
	if p.counts {
		return b.countCmds()
	}
	n := 3 * (p.to - p.from)
	if freq {
		n += p.to - p.from
	}
	for i := p.from; i < min(p.to, len(b.ns)); i++ {
		if b.ns[i] {
			n++
		}
	}
	return n
}

func (w *walker) writeParts(c *resp.Conn, ps []part, freq bool, pushed *bool) {
	for _, p := range ps {
		if p.counts {
			p.b.writeCounts(c, &w.enc)
			continue
		}
		w.writeProbes(c, p.b, p.from, p.to, freq, pushed)
	}
}

func (w *walker) readParts(c *resp.Conn, ps []part, freq bool) error {
	for _, p := range ps {
		var err error
		if p.counts {
			err = w.readCounts(c, p.b)
		} else {
			err = w.readProbes(c, p.b, p.from, p.to, freq)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// probesRead ends the probes of b, all read: keys left to the model of a
// template that a later key showed wrong send MEMORY USAGE after all (in
// the count stage), and the records dropped are removed.
func (w *walker) probesRead(b *batch) {
	for i, skip := range b.skip {
		if skip && b.recs[i].Bytes >= 0 && b.tpl[i].mem.bad {
			b.recs[i].Bytes = -1
			b.stage[i] |= stageMem
		}
	}
	b.compact(w)
}

func (b *batch) countCmds() int {
	n := 0
	for i, st := range b.stage {
		switch st &^ stageMem {
		case stageCount:
			n++
			if b.ns[i] {
				n++
			}
			if b.fld[i] {
				n++
			}
		case stageMismatch:
			n += 1 + len(countCmds)
		}
		if st&stageMem != 0 {
			n++
		}
	}
	return n
}

// firstPush is how many bytes of a pipeline are written before the
// prober classifies and encodes the rest (resp writes every 64 KiB after
// that): the server starts on them while the prober works on the next,
// instead of waiting for the first 64 KiB. It has the tail of the last
// pipeline (tailOf) to work on meanwhile, which lasts longer than the
// prober takes to read the listing and encode this much.
const firstPush = 32 << 10

// writeProbes writes the probes of records [from, to) of b, classifying
// the keys listed and not classified yet as it goes (once: a retry writes
// the same probes again). pushed says whether the pipeline's first bytes
// went out already.
func (w *walker) writeProbes(c *resp.Conn, b *batch, from, to int, freq bool, pushed *bool) {
	for i := from; i < to; i++ {
		if i == len(b.recs) {
			b.classifyNext(w)
		}
		w.writeProbe(c, b, i, freq)
		if !*pushed && c.Buffered() >= firstPush {
			c.Push()
			*pushed = true
		}
	}
}

// classify adds the keys of b listed and not classified yet to its
// records.
func (w *walker) classify(b *batch) {
	for b.keys() > len(b.recs) {
		b.classifyNext(w)
	}
}

// classifyNext adds the next key listed and not classified yet to the
// records of b.
func (b *batch) classifyNext(w *walker) {
	l := &b.pend
	j := b.pendNext
	if j == 0 {
		b.pendStr = string(l.buf) // one string for all, sliced per key
	}
	if j%classWindow == 0 {
		b.classAhead(w, j)
	}
	start := 0
	if j > 0 {
		start = l.end[j-1]
	}
	w.addKey(b, b.pendStr[start:l.end[j]], l.slot[j])
	b.pendNext++
}

// classWindow is how many listed keys the prober classifies ahead of
// adding them (Classifier.Ahead).
const classWindow = 32

// classAhead classifies the keys listed from j on, a window of them, by
// their names, and looks up the walker's records of their families: the
// misses of the processor's cache of one key's lookups do not wait for
// the last key's (a keyspace of thousands of families), and addKey then
// finds them in the cache.
func (b *batch) classAhead(w *walker, j int) {
	l := &b.pend
	keys := w.ahead[:0]
	for k := j; k < min(j+classWindow, len(l.end)); k++ {
		start := 0
		if k > 0 {
			start = l.end[k-1]
		}
		keys = append(keys, b.pendStr[start:l.end[k]])
	}
	w.ahead = keys
	sink := 0
	classes := w.cls.Ahead(keys)
	for i := range classes {
		if cl := &classes[i]; cl.Entry == nil {
			if f := w.enc.fam.of(cl.Family); f != nil {
				sink += f.agree
				if f.tm != nil {
					sink++
				}
			}
		}
	}
	w.aheadSink += sink
}

// namesFrom returns the names appended to b.names from index from on, as
// a record's Fields (nil when none), capped so that later appends leave
// them alone.
func (b *batch) namesFrom(from int) []string {
	if len(b.names) == from {
		return nil
	}
	return b.names[from:len(b.names):len(b.names)]
}

// skipNested reads what is nested in an element of an array reply: never
// anything in a flat reply, which saves the call.
func skipNested(c *resp.Conn, rp resp.Reply) error {
	if rp.Kind != '*' {
		return nil
	}
	return c.Skip(rp)
}

// keys is how many keys b holds, classified or not.
func (b *batch) keys() int { return len(b.recs) + len(b.pend.end) - b.pendNext }

// writeProbe writes the probes of record i.
func (w *walker) writeProbe(c *resp.Conn, b *batch, i int, freq bool) {
	e := &w.enc
	for len(b.skip) <= i {
		b.skip, b.est = append(b.skip, false), append(b.est, -1)
	}
	k := b.recs[i].Key
	if freq {
		c.Key(e.freq, k)
	}
	skip := false
	if g := b.guess[i]; g != "" {
		c.Key(e.firstProbe(g), k)
		if e.separateNS(g, b.ns[i]) {
			c.Key(e.hgetNS, k)
		}
		skip = skipMemory(b.tpl[i], e.readsValue(g))
	} else {
		c.Key(e.typ, k)
	}
	c.Key(e.pttl, k)
	if !skip && w.canMem {
		c.Key(e.mem, k)
	}
	b.skip[i], b.est[i] = skip, -1
}

func (b *batch) writeCounts(c *resp.Conn, e *encodings) {
	for i, st := range b.stage {
		k := b.recs[i].Key
		switch st &^ stageMem {
		case stageCount:
			cc, _ := e.countOf(b.recs[i].Type)
			c.Key(cc, k)
			if b.ns[i] {
				c.Key(e.hgetNS, k)
			}
			if b.fld[i] {
				c.Key(e.fieldProbe(b.recs[i].Type), k)
			}
		case stageMismatch:
			c.Key(e.typ, k)
			for _, cc := range e.count {
				c.Key(cc, k)
			}
		}
		if st&stageMem != 0 {
			c.Key(e.mem, k)
		}
	}
}

// readProbes reads the probe replies of records [from, to) of b, record
// by record, in the order writeProbes sent them.
func (w *walker) readProbes(c *resp.Conn, b *batch, from, to int, freq bool) error {
	for i := from; i < to; i++ {
		r := &b.recs[i]
		d := &b.drop[i]
		*d = dropNone
		r.Freq = -1
		if freq {
			if err := w.readFreq(c, r, d); err != nil {
				return err
			}
		}
		var err error
		if b.guess[i] != "" {
			err = w.readGuessed(c, b, i)
		} else {
			err = w.readType(c, b, i)
		}
		if err != nil {
			return err
		}
		if err := w.readTTL(c, r, d); err != nil {
			return err
		}
		if err := w.memory(c, b, i); err != nil {
			return err
		}
	}
	return nil
}

// memory reads MEMORY USAGE of record i and checks the model with it, or
// takes the model's bytes where it was not sent; a value not read whole
// sends it in the count stage.
func (w *walker) memory(c *resp.Conn, b *batch, i int) error {
	r, t := &b.recs[i], b.tpl[i]
	est := b.est[i]
	if r.Type != b.guess[i] {
		est = -1 // a type mismatch: the model read nothing
	}
	if !w.canMem {
		r.Bytes = -1
		return nil
	}
	if !b.skip[i] {
		if err := w.readMemory(c, r, &b.drop[i]); err != nil {
			return err
		}
		if b.drop[i] == dropNone {
			check(t, est, r.Bytes)
		}
		return nil
	}
	if v, ok := modelBytes(t, est); ok {
		r.Bytes = v
	} else {
		r.Bytes = -1
		b.stage[i] |= stageMem
	}
	return nil
}

func (w *walker) readFreq(c *resp.Conn, r *inventory.Record, d *uint8) error {
	rp, err := c.Read()
	if err != nil {
		return err
	}
	switch rp.Kind {
	case ':':
		r.Freq = int(rp.N)
	case 0:
		*d = max(*d, dropVanished)
	case '-':
		return w.keyError(rp, d)
	default:
		return unexpected("OBJECT FREQ", rp)
	}
	return nil
}

// readGuessed reads the first probe of a key whose template declares its
// type (firstProbe): an element count, or a field probe that gives the
// count when the value is short enough, else leaves it (and __ns__) to
// the count stage. WRONGTYPE sends the key to the count stage's full
// check.
func (w *walker) readGuessed(c *resp.Conn, b *batch, i int) error {
	r, d, g := &b.recs[i], &b.drop[i], b.guess[i]
	r.NS, r.HasNS, r.NSProbed, r.Fields, r.Form = "", false, false, nil, valueform.Unknown
	b.fldRead[i] = false
	b.est[i] = -1
	rp, err := c.Read()
	if err != nil {
		return err
	}
	b.stage[i] = stageDone
	r.Type = g
	switch rp.Kind {
	case ':':
		r.Elements = rp.N
	case '*':
		if err := w.readHashProbe(c, b, i, rp.N); err != nil {
			return err
		}
	case '$':
		r.Elements = rp.N
		if b.fld[i] {
			from := len(b.names)
			b.names = jsonkeys.Top(b.names, rp.Str, maxJSONKeys, w.enc.interner(b.tpl[i]))
			r.Fields, b.fldRead[i] = b.namesFrom(from), true
			r.Form = valueform.Of(rp.Str)
		}
		if rp.N >= jsonPrefixBytes {
			r.Elements, b.stage[i] = -1, stageCount // longer: STRLEN
		} else {
			b.est[i] = stringModel(len(r.Key), rp.Str)
		}
	case '-':
		r.Type, r.Elements = "", -1
		if resp.ServerError(rp.Str).Code() == "WRONGTYPE" {
			b.stage[i] = stageMismatch
		} else if err := w.keyError(rp, d); err != nil {
			return err
		}
	default:
		return unexpected(countCmds[countIndex(g)], rp)
	}
	if r.Elements == 0 && g != "string" && g != "stream" {
		*d = max(*d, dropVanished) // collections are never empty: the key is gone
	}
	if b.class[i].Entry == nil && r.Type != "" && *d == dropNone {
		w.enc.fam.learnFor(b.fam[i], b.class[i].Family, g)
	}
	if w.enc.separateNS(g, b.ns[i]) {
		if err := w.readNS(c, r, d); err != nil {
			return err
		}
		if r.Type == "" {
			r.NS, r.HasNS, r.NSProbed = "", false, false
		}
	}
	return nil
}

// readHashProbe reads HRANDFIELD key 32 WITHVALUES (n elements) sent as
// a hash's first probe: fewer than 32 fields are all of them, so their
// number is the count, a missing __ns__ is absent, and the model sizes
// the hash; with 32 the count (and __ns__, when not among them) is read in
// the count stage.
func (w *walker) readHashProbe(c *resp.Conn, b *batch, i int, n int64) error {
	r := &b.recs[i]
	nf := n / 2
	hm := newHashModel()
	from := len(b.names)
	in := w.enc.interner(b.tpl[i])
	for j := range nf {
		e, err := c.Read()
		if err != nil {
			return err
		}
		if err := skipNested(c, e); err != nil {
			return err
		}
		isNS := e.Kind == '$' && string(e.Str) == "__ns__"
		if e.Kind == '$' && !isNS && b.fld[i] {
			b.names = append(b.names, in.Intern(e.Str, int(j)))
		}
		hm.add(e.Str)
		v, err := c.Read()
		if err != nil {
			return err
		}
		if err := skipNested(c, v); err != nil {
			return err
		}
		hm.add(v.Str)
		if isNS && v.Kind == '$' && b.ns[i] {
			r.NS, r.HasNS, r.NSProbed = string(v.Str), true, true
		}
	}
	r.Elements = nf
	if b.fld[i] {
		r.Fields, b.fldRead[i] = b.namesFrom(from), true
	}
	if nf >= fieldProbeCount {
		r.Elements, b.stage[i] = -1, stageCount // more fields: HLEN, and HGET unless __ns__ came
	} else {
		r.NSProbed = r.NSProbed || b.ns[i]
		b.est[i] = hm.mem(len(r.Key), nf)
	}
	return nil
}

// readType reads TYPE; the count stage then reads the element count.
func (w *walker) readType(c *resp.Conn, b *batch, i int) error {
	r, d := &b.recs[i], &b.drop[i]
	rp, err := c.Read()
	if err != nil {
		return err
	}
	b.stage[i] = stageCount
	switch rp.Kind {
	case '+':
		if string(rp.Str) == "none" {
			*d = max(*d, dropVanished)
		}
		r.Type = typeName(rp.Str)
		if b.class[i].Entry == nil {
			w.enc.fam.learnFor(b.fam[i], b.class[i].Family, r.Type)
		}
	case '-':
		b.stage[i] = stageDone
		if err := w.keyError(rp, d); err != nil {
			return err
		}
		r.Type = ""
	default:
		return unexpected("TYPE", rp)
	}
	if countIndex(r.Type) < 0 {
		b.stage[i] = stageDone
	}
	return nil
}

func (w *walker) readTTL(c *resp.Conn, r *inventory.Record, d *uint8) error {
	rp, err := c.Read()
	if err != nil {
		return err
	}
	switch rp.Kind {
	case ':':
		switch {
		case rp.N == -2:
			*d = max(*d, dropVanished)
		case rp.N == -1:
			r.TTL = -1
		default:
			r.TTL = time.Duration(max(rp.N, 1)) * time.Millisecond
		}
	case '-':
		r.TTL = 0
		return w.keyError(rp, d)
	default:
		return unexpected("PTTL", rp)
	}
	return nil
}

func (w *walker) readMemory(c *resp.Conn, r *inventory.Record, d *uint8) error {
	rp, err := c.Read()
	if err != nil {
		return err
	}
	switch rp.Kind {
	case ':':
		r.Bytes = rp.N
	case 0:
		*d = max(*d, dropVanished)
	case '-':
		r.Bytes = -1
		return w.keyError(rp, d)
	default:
		return unexpected("MEMORY USAGE", rp)
	}
	return nil
}

// readNS reads the reply to HGET key __ns__, sent right after HLEN: when
// HLEN said the hash exists, a nil reply means it has no __ns__ field.
func (w *walker) readNS(c *resp.Conn, r *inventory.Record, d *uint8) error {
	rp, err := c.Read()
	if err != nil {
		return err
	}
	r.NS, r.HasNS, r.NSProbed = "", false, true
	switch rp.Kind {
	case '$':
		r.NS, r.HasNS = string(rp.Str), true
	case 0:
	case '-':
		r.NSProbed = false
		return w.keyError(rp, d)
	default:
		return unexpected("HGET", rp)
	}
	return nil
}

// readCounts reads the count-stage replies of b.
func (w *walker) readCounts(c *resp.Conn, b *batch) error {
	for i, st := range b.stage {
		if st == stageDone {
			continue
		}
		r := &b.recs[i]
		d := &b.drop[i]
		*d = dropNone
		var err error
		switch st &^ stageMem {
		case stageMismatch:
			err = w.readMismatch(c, r, d)
			if b.class[i].Entry == nil {
				w.enc.fam.learnFor(b.fam[i], b.class[i].Family, r.Type) // a wrong guess
			}
		case stageCount:
			err = w.readCount(c, b, i)
		}
		if err != nil {
			return err
		}
		if st&stageMem != 0 {
			if err := w.readMemory(c, r, d); err != nil {
				return err
			}
		}
	}
	return nil
}

// readMismatch reads TYPE and every element count of a key whose
// template's type was wrong.
func (w *walker) readMismatch(c *resp.Conn, r *inventory.Record, d *uint8) error {
	rp, err := c.Read()
	if err != nil {
		return err
	}
	switch rp.Kind {
	case '+':
		if string(rp.Str) == "none" {
			*d = dropVanished
		}
		r.Type = typeName(rp.Str)
	case '-':
		if err := w.keyError(rp, d); err != nil {
			return err
		}
	default:
		return unexpected("TYPE", rp)
	}
	want := countIndex(r.Type)
	for j := range countCmds {
		rp, err := c.Read()
		if err != nil {
			return err
		}
		if rp.Kind == ':' && j == want {
			r.Elements = rp.N
		}
	}
	return nil
}

// readCount reads the element count of record i, and __ns__ and the
// field probe when they went with it.
func (w *walker) readCount(c *resp.Conn, b *batch, i int) error {
	r, d := &b.recs[i], &b.drop[i]
	rp, err := c.Read()
	if err != nil {
		return err
	}
	switch rp.Kind {
	case ':':
		r.Elements = rp.N
		if rp.N == 0 && r.Type != "string" && r.Type != "stream" {
			*d = dropVanished // collections are never empty: the key is gone
		}
	case '-':
		if err := w.keyError(rp, d); err != nil {
			return err
		}
		r.Elements = -1
	default:
		return unexpected("element count", rp)
	}
	if b.ns[i] {
		if err := w.readNS(c, r, d); err != nil {
			return err
		}
	}
	if b.fld[i] {
		return w.readFields(c, b, i)
	}
	return nil
}

// readScan reads a SCAN reply into a new batch, keeping each key with the
// sampling probability.
func (w *walker) readScan(c *resp.Conn, cursor string, free chan *batch) (*batch, error) {
	rp, err := c.Read()
	if err != nil {
		return nil, err
	}
	if rp.Kind == '-' {
		se := resp.ServerError(rp.Str)
		switch se.Code() {
		case "NOPERM":
			return nil, &stopError{fmt.Errorf("SCAN: %v: grant the rules in docs/audit-acl.md", se)}
		case "LOADING", "BUSY", "TRYAGAIN", "MASTERDOWN":
			return nil, se
		}
		return nil, &stopError{scanRefused(cursor, se)}
	}
	if rp.Kind != '*' || rp.N != 2 {
		return nil, unexpected("SCAN", rp)
	}
	cr, err := c.Read()
	if err != nil {
		return nil, err
	}
	if cr.Kind != '$' {
		return nil, unexpected("SCAN cursor", cr)
	}
	if _, ok := resp.ParseInt(cr.Str); !ok {
		return nil, unexpected("SCAN cursor", cr)
	}
	b := newBatch(free)
	b.cursor, b.next = cursor, string(cr.Str)
	kr, err := c.Read()
	if err != nil {
		return nil, err
	}
	if kr.Kind != '*' {
		return nil, unexpected("SCAN keys", kr)
	}
	b.scanned = kr.N
	ratio := w.r.ratio
	for range kr.N {
		k, err := c.Read()
		if err != nil {
			return nil, err
		}
		if k.Kind != '$' {
			return nil, unexpected("SCAN key", k)
		}
		if ratio > 0 {
			w.sampleKey(b, k.Str, -1)
			continue
		}
		b.pend.add(k.Str, -1)
	}
	return b, nil
}

// listing gathers the keys of one listing reply so that they become one
// string, sliced per key, instead of a string each: the records only
// live for the batch, and whatever outlives it (aggregates, findings,
// families) keeps copies.
type listing struct {
	buf  []byte
	end  []int
	slot []int
}

func (l *listing) add(k []byte, slot int) {
	l.buf = append(l.buf, k...)
	l.end = append(l.end, len(l.buf))
	l.slot = append(l.slot, slot)
}

func (l *listing) reset() { l.buf, l.end, l.slot = l.buf[:0], l.end[:0], l.slot[:0] }

// drop removes the keys of the slots bad says, in place.
func (l *listing) drop(bad func(slot int) bool) {
	w, start, j := 0, 0, 0
	for i, end := range l.end {
		if !bad(l.slot[i]) {
			w += copy(l.buf[w:], l.buf[start:end])
			l.end[j], l.slot[j] = w, l.slot[i]
			j++
		}
		start = end
	}
	l.buf, l.end, l.slot = l.buf[:w], l.end[:j], l.slot[:j]
}

func newBatch(free chan *batch) *batch {
	select {
	case b := <-free:
		return b
	default:
		return &batch{}
	}
}

// reuse hands a batch back to the prober.
func (b *batch) reuse(free chan *batch) {
	clear(b.recs) // drop the key strings
	clear(b.tpl)
	clear(b.fam)
	b.recs, b.class, b.tpl, b.fam, b.drop, b.ns, b.stage, b.guess = b.recs[:0], b.class[:0], b.tpl[:0], b.fam[:0], b.drop[:0], b.ns[:0], b.stage[:0], b.guess[:0]
	b.fld, b.fldRead, b.slot = b.fld[:0], b.fldRead[:0], b.slot[:0]
	b.pend.reset()
	b.pendNext, b.pendStr = 0, ""
	b.skip, b.est = b.skip[:0], b.est[:0]
	clear(b.names)
	b.names = b.names[:0]
	b.slots, b.slotKeys, b.badSlots, b.lost, b.scanned = b.slots[:0], b.slotKeys[:0], b.badSlots[:0], false, 0
	select {
	case free <- b:
	default:
	}
}

// compact removes the records dropped by the probes, counting them, and
// marks the guarded hashes whose type was not known in advance for
// HGET key __ns__ with their element count.
func (b *batch) compact(w *walker) {
	j := 0
	for i := range b.recs {
		if b.drop[i] != dropNone {
			w.countDrop(b.drop[i])
			if b.drop[i] == dropMoved && b.slot[i] >= 0 {
				b.badSlots = append(b.badSlots, int(b.slot[i]))
			}
			continue
		}
		if j < i {
			b.recs[j], b.class[j], b.tpl[j], b.fam[j], b.stage[j], b.fldRead[j] = b.recs[i], b.class[i], b.tpl[i], b.fam[i], b.stage[i], b.fldRead[i]
			b.slot[j] = b.slot[i]
		}
		b.drop[j] = dropNone
		counting := b.stage[j]&^stageMem == stageCount
		t := b.recs[j].Type
		// Not again what the first probe read (a long value's fields).
		b.ns[j] = counting && w.canNS && t == "hash" && b.class[j].NS && !b.recs[j].NSProbed
		b.fld[j] = counting && w.canFlds && b.class[j].Fields && (t == "hash" || t == "string") && !b.fldRead[j]
		j++
	}
	clear(b.recs[j:])
	clear(b.tpl[j:])
	clear(b.fam[j:])
	b.recs, b.class, b.tpl, b.fam, b.drop, b.stage, b.ns = b.recs[:j], b.class[:j], b.tpl[:j], b.fam[:j], b.drop[:j], b.stage[:j], b.ns[:j]
	b.fld, b.fldRead, b.slot = b.fld[:j], b.fldRead[:j], b.slot[:j]
	b.guess, b.skip, b.est = b.guess[:0], b.skip[:0], b.est[:0]
}

func unexpected(what string, rp resp.Reply) error {
	return fmt.Errorf("%w: unexpected reply to %s (kind %q)", resp.ErrProtocol, what, rp.Kind)
}

// countIndex is the index in countCmds of a type's element count
// command; -1 for module types.
func countIndex(t string) int {
	switch t {
	case "string":
		return 0
	case "hash":
		return 1
	case "list":
		return 2
	case "set":
		return 3
	case "zset":
		return 4
	case "stream":
		return 5
	}
	return -1
}

// typeName returns the TYPE reply without allocating for the core types.
func typeName(b []byte) string {
	switch string(b) {
	case "string":
		return "string"
	case "hash":
		return "hash"
	case "list":
		return "list"
	case "set":
		return "set"
	case "zset":
		return "zset"
	case "stream":
		return "stream"
	case "none":
		return ""
	}
	return string(b) // a module type, e.g. ReJSON-RL
}

// readFields reads the reply to the field probe of record i: the
// field names of a hash, or the top-level keys of a JSON string's head. A
// key whose type turned out otherwise gets none, and is not counted as a
// value without field names.
func (w *walker) readFields(c *resp.Conn, b *batch, i int) error {
	r := &b.recs[i]
	rp, err := c.Read()
	if err != nil {
		return err
	}
	switch rp.Kind {
	case '*':
		from := len(b.names)
		in := w.enc.interner(b.tpl[i])
		for j := range rp.N {
			e, err := c.Read()
			if err != nil {
				return err
			}
			if e.Kind == '$' && string(e.Str) != "__ns__" {
				b.names = append(b.names, in.Intern(e.Str, int(j)))
			}
			if err := c.Skip(e); err != nil {
				return err
			}
		}
		r.Fields = b.namesFrom(from)
	case '$':
		from := len(b.names)
		b.names = jsonkeys.Top(b.names, rp.Str, maxJSONKeys, w.enc.interner(b.tpl[i]))
		r.Fields = b.namesFrom(from)
		r.Form = valueform.Of(rp.Str)
	case 0:
	case '-':
		return w.keyError(rp, &b.drop[i]) // WRONGTYPE: another type now; nothing read
	default:
		return unexpected("field probe", rp)
	}
	b.fldRead[i] = r.Type == "hash" || r.Type == "string"
	if !b.fldRead[i] {
		r.Fields = nil
	}
	if r.Type != "string" {
		r.Form = valueform.Unknown
	}
	return nil
}

const (
	dropNone uint8 = iota
	dropVanished
	dropMoved
	dropDenied
)

// Count-stage work of a record (batch.stage).
const (
	stageDone     uint8 = iota // nothing left
	stageCount                 // type known: its element count
	stageMismatch              // the template's type was wrong: TYPE and every count

	stageMem uint8 = 4 // with either (or alone): MEMORY USAGE, which the model could not give
)

// countCmds are the element count commands, in countIndex order.
var countCmds = [...]string{"STRLEN", "HLEN", "LLEN", "SCARD", "ZCARD", "XLEN"}
