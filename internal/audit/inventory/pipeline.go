package inventory

import (
	"sync"

	"github.com/keyguard/keyguard/registry"
)

// Pipeline is the aggregation side of an audit, the same for every
// source: walkers (SCAN on each node, one RDB decoder per file) classify
// their keys with their own Classifier and send batches of records;
// a fixed pool of Aggregators, one goroutine each, adds them; Close
// merges the pool into one Aggregator. Whatever aggregator a batch lands
// on, the merged report is the same (see Merge), and memory is bounded
// by the pool's size, not by the number of walkers.
type Pipeline struct {
	reg     *registry.Registry
	aggs    []*Aggregator // the workers', then the helpers'
	workers int
	hints   []*FieldHint // made by the first Classifier
	hinted  sync.Once
	work    chan pipeBatch
	wg      sync.WaitGroup
}

type pipeBatch struct {
	recs    []Record
	classes []Class
	prep    func(agg, i int, r *Record) // AddRead
	done    func()
}

// NewPipeline starts workers aggregators (at least one) with opts.
func NewPipeline(reg *registry.Registry, opts Options, workers int) *Pipeline {
	return NewHelpedPipeline(reg, opts, workers, 0)
}

// NewHelpedPipeline is NewPipeline with helpers aggregators more that
// no goroutine of the pool runs: Helper(i) adds batches to the i-th on
// its caller's goroutine when the pool is behind.
func NewHelpedPipeline(reg *registry.Registry, opts Options, workers, helpers int) *Pipeline {
	workers = max(workers, 1)
	p := &Pipeline{reg: reg, workers: workers, work: make(chan pipeBatch, 2*workers)}
	for range workers + max(helpers, 0) {
		a := New(reg, opts)
		p.aggs = append(p.aggs, a)
	}
	shareLists(p.aggs)
	shareFindings(p.aggs)
	for w, a := range p.aggs[:workers] {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			for b := range p.work {
				p.add(w, a, b)
			}
		}()
	}
	return p
}

// add adds batch b with aggregator a, number w.
func (p *Pipeline) add(w int, a *Aggregator, b pipeBatch) {
	if b.classes == nil {
		// AddRead: classified here, by the aggregator that adds them,
		// its field decision exact.
		for i := range b.recs {
			if i%preWindow == 0 {
				a.preClassify(b.recs[i:min(i+preWindow, len(b.recs))])
			}
			r := &b.recs[i]
			if b.prep != nil {
				b.prep(w, i, r)
			}
			cl := a.Classify(r.Key)
			r.keepAsked(&cl)
			a.Add(r, cl)
		}
	} else {
		for i := range b.recs {
			if i%warmWindow == 0 {
				a.warm(b.classes[i:min(i+warmWindow, len(b.classes))])
			}
			a.Add(&b.recs[i], b.classes[i])
		}
	}
	if b.done != nil {
		b.done()
	}
}

// Helper is one walker's way into a pipeline made by NewHelpedPipeline:
// an aggregator of the pool that belongs to the walker. Use it from one
// goroutine.
type Helper struct {
	p   *Pipeline
	agg int
}

// Helper returns the i-th helper (0 to helpers-1).
func (p *Pipeline) Helper(i int) *Helper { return &Helper{p: p, agg: p.workers + i} }

// AddRead sends a batch of records that the walker read without
// classifying their keys, looking into every value as far as any class
// could ask: the guard's field __ns__ of every hash (Record.NS, HasNS),
// the field names of every hash and JSON string (Record.Set, or Fields
// empty but not nil for a hash that held none). The aggregator that
// takes the batch classifies each key and drops what its class did not
// ask for, so that the report is the one of a walker that classified
// first and read only that. A walker that holds every value anyway (an
// RDB decoder) reads the little more at no cost, and the classification
// moves off its goroutine. prep, when not nil, is called on the
// aggregator's goroutine for each record before it is classified:
// prep(agg, i, &recs[i]), where agg (0 to Aggregators()-1) is the
// aggregator's own number, so that prep may keep state per aggregator
// without locks; a walker so moves more of its work (reading a value's
// field names) to the pool. done is as for Add.
//
// When the pool's queue is full the batch is added at once, on the
// caller's goroutine, by the helper's own aggregator (prep is then called
// with its number), instead of waiting for a worker: a walker ahead of
// the pool takes a share of its work. On two cores, one decoder and one worker then keep both busy,
// where a decoder and two workers took turns on them, and a batch added
// here is read from the cache it was written to. Which aggregator adds a
// batch does not change the report (see Merge).
func (h *Helper) AddRead(recs []Record, prep func(agg, i int, r *Record), done func()) {
	b := pipeBatch{recs, nil, prep, done}
	select {
	case h.p.work <- b:
	default:
		h.p.add(h.agg, h.p.aggs[h.agg], b)
	}
}

// Classifier returns a Classifier for one walker goroutine, reading the
// pool's field hints. Call it before the walker adds a batch. The first
// call makes the hints, which the aggregators then keep up to date: a
// pipeline fed by AddRead alone, whose aggregators classify the keys
// themselves, has none to keep (on a keyspace of thousands of families,
// a store per family and per key that held no field names).
func (p *Pipeline) Classifier() *Classifier {
	p.hinted.Do(func() {
		for _, a := range p.aggs {
			p.hints = append(p.hints, a.FieldHint())
		}
	})
	return NewClassifier(p.reg, p.hints...)
}

// Add sends a batch: recs[i] of class classes[i]. It blocks while the
// pool is behind. done, when not nil, is called once the batch has been
// added: the walker may then reuse recs, classes and the strings they
// point to (an Aggregator keeps copies).
func (p *Pipeline) Add(recs []Record, classes []Class, done func()) {
	p.work <- pipeBatch{recs, classes, nil, done}
}

// Aggregators is the number of aggregators in the pool, helpers' included.
func (p *Pipeline) Aggregators() int { return len(p.aggs) }

// keepAsked drops from r, read as AddRead says, what a walker that
// classified r.Key as cl would not have read; cl.Fields is then false
// for a type without field names, as such a walker gives it.
func (r *Record) keepAsked(cl *Class) {
	switch r.Type {
	case "hash":
		if r.NSProbed = cl.NS; !cl.NS {
			r.NS, r.HasNS = "", false
		}
	case "string":
	default:
		cl.Fields = false
	}
	if !cl.Fields {
		r.Fields, r.Set = nil, nil
	}
}

// Close waits until every batch sent has been added and returns the pool
// merged into one Aggregator. Add may not be called after Close, nor a
// Helper's AddRead, which must have returned before it is called.
func (p *Pipeline) Close() *Aggregator {
	close(p.work)
	p.wg.Wait()
	for _, a := range p.aggs {
		a.FlushKeys()
	}
	takeLists(p.aggs)
	takeFindings(p.aggs)
	for _, a := range p.aggs[1:] {
		p.aggs[0].Merge(a)
	}
	a := p.aggs[0]
	// Settled now, their scratch is garbage for the caller's collection
	// before the report is built (see topBuf.letGo).
	a.top.list()
	a.hot.list()
	return a
}
