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
	reg   *registry.Registry
	aggs  []*Aggregator
	hints []*FieldHint
	work  chan pipeBatch
	wg    sync.WaitGroup
}

type pipeBatch struct {
	recs    []Record
	classes []Class
	prep    func(agg, i int, r *Record) // AddRead
	done    func()
}

// NewPipeline starts workers aggregators (at least one) with opts.
func NewPipeline(reg *registry.Registry, opts Options, workers int) *Pipeline {
	workers = max(workers, 1)
	p := &Pipeline{reg: reg, work: make(chan pipeBatch, 2*workers)}
	for range workers {
		a := New(reg, opts)
		p.aggs = append(p.aggs, a)
		p.hints = append(p.hints, a.FieldHint())
	}
	shareLists(p.aggs)
	for w, a := range p.aggs {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			for b := range p.work {
				if b.classes == nil {
					// AddRead: classified here, by the aggregator that
					// adds them, its field decision exact.
					for i := range b.recs {
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
						a.Add(&b.recs[i], b.classes[i])
					}
				}
				if b.done != nil {
					b.done()
				}
			}
		}()
	}
	return p
}

// Classifier returns a Classifier for one walker goroutine, reading the
// pool's field hints.
func (p *Pipeline) Classifier() *Classifier { return NewClassifier(p.reg, p.hints...) }

// Add sends a batch: recs[i] of class classes[i]. It blocks while the
// pool is behind. done, when not nil, is called once the batch has been
// added: the walker may then reuse recs, classes and the strings they
// point to (an Aggregator keeps copies).
func (p *Pipeline) Add(recs []Record, classes []Class, done func()) {
	p.work <- pipeBatch{recs, classes, nil, done}
}

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
func (p *Pipeline) AddRead(recs []Record, prep func(agg, i int, r *Record), done func()) {
	p.work <- pipeBatch{recs, nil, prep, done}
}

// Aggregators is the number of aggregators in the pool.
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
// merged into one Aggregator. Add may not be called after Close.
func (p *Pipeline) Close() *Aggregator {
	close(p.work)
	p.wg.Wait()
	for _, a := range p.aggs {
		a.FlushKeys()
	}
	takeLists(p.aggs)
	for _, a := range p.aggs[1:] {
		p.aggs[0].Merge(a)
	}
	return p.aggs[0]
}
