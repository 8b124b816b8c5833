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
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			for b := range p.work {
				for i := range b.recs {
					a.Add(&b.recs[i], b.classes[i])
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
	p.work <- pipeBatch{recs, classes, done}
}

// Close waits until every batch sent has been added and returns the pool
// merged into one Aggregator. Add may not be called after Close.
func (p *Pipeline) Close() *Aggregator {
	close(p.work)
	p.wg.Wait()
	for _, a := range p.aggs {
		a.FlushKeys()
	}
	for _, a := range p.aggs[1:] {
		p.aggs[0].Merge(a)
	}
	return p.aggs[0]
}
