package inventory_test

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/keyguard/keyguard/internal/audit/inventory"
)

// A walker that reads every value in full and leaves the classification
// to the aggregators (Helper.AddRead) gets the report, state included,
// of one that classified each key first and read only what its class
// asked for: the guard's field of guarded hashes, the names of values
// whose template or family takes a census. The keyspace has guarded and
// unguarded hashes holding __ns__ (with a foreign owner, too), hashes
// holding only __ns__, JSON strings and plain ones under templates of
// every type (a list template whose keys are hashes), families, and keys
// too long to be sampled.
func TestAddReadEqualsClassified(t *testing.T) {
	reg := loadReg(t)
	type full struct {
		r     inventory.Record
		ns    string
		hasNS bool
		names []string // nil: a value without names
	}
	var keys []full
	long := fmt.Sprintf("%0600d", 7)
	for i := range 600 {
		f := func(key, kind, ns string, names ...string) {
			keys = append(keys, full{r: *rec(key, typ(kind)), ns: ns, hasNS: ns != "", names: names})
		}
		f(fmt.Sprintf("promo:order:%d:promo-info", i), "hash", []string{"promo-team", "auth-team", "order-team", ""}[i%4], "discount", "until")
		f(fmt.Sprintf("order:order:%d:base", i), "hash", []string{"", "order-team"}[i%2], []string{"id", "amount", "state"}[:1+i%3]...)
		f(fmt.Sprintf("promo:sku:%d", i), "hash", "promo-team") // only __ns__
		f(fmt.Sprintf("cache:product:detail:p%d", i), "string", "", []string{"title", "price"}[:i%3%2+1]...)
		f(fmt.Sprintf("rate:login:u%d", i), "string", "")
		f(fmt.Sprintf("order:list:%d", i), "hash", "order-team", "a", "b") // a hash under a list template
		f(fmt.Sprintf("order:list:%d:x", i), "list", "")
		f(fmt.Sprintf("fam%d:item:%d", i%90, i), "hash", "", "x", []string{"y", "z"}[i%2])
		f(fmt.Sprintf("blob:%d", i), "string", "", "k")
		f(fmt.Sprintf("sess:%d", i), "hash", "auth-team")
		if i%50 == 0 {
			f("promo:sku:"+long+fmt.Sprint(i), "hash", "", "x")
			f("fam:"+long+fmt.Sprint(i), "string", "", "x")
		}
	}
	opts := inventory.Options{FieldsEveryValue: true}
	// Classified first, read as asked.
	own := inventory.New(reg, opts)
	for _, k := range keys {
		r := k.r
		cl := own.Classify(r.Key)
		switch r.Type {
		case "hash":
			r.NSProbed = cl.NS
			if cl.NS {
				r.NS, r.HasNS = k.ns, k.hasNS
			}
			if cl.Fields {
				r.Fields = k.names
				if r.Fields == nil {
					r.Fields = []string{}
				}
			}
		case "string":
			if cl.Fields {
				r.Fields = k.names
			}
		default:
			cl.Fields = false
		}
		own.Add(&r, cl)
	}
	want := own.Report(meta())
	// Read in full, classified by the pipeline's aggregator; and through
	// a Helper whose worker is held now and then, so that some batches
	// are added by the helper's aggregator on this goroutine.
	for _, helped := range []bool{false, true} {
		p := inventory.NewPipeline(reg, opts, 1)
		add := p.AddRead
		var byHelper, byWorker atomic.Int64
		hold := make(chan struct{})
		if helped {
			p = inventory.NewHelpedPipeline(reg, opts, 1, 1)
			add = p.Helper(0).AddRead
		}
		var batch []inventory.Record
		n := 0
		for _, k := range keys {
			r := k.r
			if r.Type == "hash" {
				r.NS, r.HasNS = k.ns, k.hasNS
				r.Fields = k.names
				if r.Fields == nil {
					r.Fields = []string{}
				}
			}
			if r.Type == "string" {
				r.Fields = k.names
			}
			batch = append(batch, r)
			if len(batch) == 100 {
				n++
				held := helped && n%7 == 1 // the worker waits on this batch until the helper took one
				add(batch, func(agg, i int, r *inventory.Record) {
					if i > 0 {
						return
					}
					if agg == 1 {
						byHelper.Add(1)
						select {
						case hold <- struct{}{}: // a held worker goes on
						default:
						}
						return
					}
					byWorker.Add(1)
					if held {
						<-hold
					}
				}, nil)
				batch = nil
			}
		}
		if helped {
			close(hold)
		}
		add(batch, nil, nil)
		got := p.Close().Report(meta())
		if w, g := visibleJSON(t, want), visibleJSON(t, got); string(w) != string(g) {
			t.Errorf("helped %v: the report differs: %s", helped, firstDiff(string(w), string(g)))
		}
		if w, g := stateJSON(t, want), stateJSON(t, got); w != g {
			t.Errorf("helped %v: the state differs: %s", helped, firstDiff(w, g))
		}
		if helped && (byHelper.Load() == 0 || byWorker.Load() == 0) {
			t.Errorf("helped: %d batches added by the helper, %d by the worker: the test tests less than it says", byHelper.Load(), byWorker.Load())
		}
	}
	for _, s := range []string{"guard/foreign-owner", "the fields its"} {
		if !strings.Contains(string(visibleJSON(t, want)), s) {
			t.Errorf("no %q in the report: the test tests less than it says", s)
		}
	}
}

// On a keyspace of thousands of families an aggregator that classifies
// its own keys looks up a window of them ahead (preClassify); the report
// and the state are the ones of classifying each key when it is added.
// The families outnumber what an aggregator interns (so that its table is
// cleared under a window's records) and what it keeps (so that some are
// folded); their keys carry personal data (the inferred values), field
// names, and are mixed with registered keys.
func TestAddReadLookAheadEqualsClassified(t *testing.T) {
	reg := loadReg(t)
	families := 20_000
	if testing.Short() {
		families = 18_000
	}
	word := func(n int) string {
		var b []byte
		for {
			b = append(b, byte('a'+n%26))
			if n /= 26; n == 0 {
				return string(b)
			}
		}
	}
	var keys []inventory.Record
	for i := range 3 * families {
		f := word(i * 7919 % families) // families in a scattered order, each met again later
		r := rec(fmt.Sprintf("%s:user:%d", f, i), typ("hash"))
		switch i % 5 {
		case 1:
			r = rec(fmt.Sprintf("%s:mail:u%d@example.com", f, i), typ("string"))
		case 2:
			r = rec(fmt.Sprintf("promo:order:%d:promo-info", i), typ("hash"))
		case 3:
			r = rec(fmt.Sprintf("%s:phone:1380013%04d", f, i%10000), typ("string"))
		}
		if r.Type == "hash" {
			r.Fields = []string{"name", []string{"age", "city"}[i%2]}
		}
		keys = append(keys, *r)
	}
	opts := inventory.Options{FieldsEveryValue: true}
	own := inventory.New(reg, opts)
	for _, k := range keys {
		r := k
		cl := own.Classify(r.Key)
		if r.Type == "hash" {
			r.NSProbed = cl.NS // a guarded hash without __ns__
		}
		if !cl.Fields {
			r.Fields = nil
		}
		own.Add(&r, cl)
	}
	want := own.Report(meta())
	p := inventory.NewPipeline(reg, opts, 1)
	for lo := 0; lo < len(keys); lo += 1000 {
		batch := append([]inventory.Record(nil), keys[lo:min(lo+1000, len(keys))]...)
		p.AddRead(batch, nil, nil)
	}
	merged := p.Close()
	taken := inventory.PreTaken(p) // the pool's aggregators are done once Close returns
	got := merged.Report(meta())
	if w, g := visibleJSON(t, want), visibleJSON(t, got); string(w) != string(g) {
		t.Errorf("the report differs: %s", firstDiff(string(w), string(g)))
	}
	if w, g := stateJSON(t, want), stateJSON(t, got); w != g {
		t.Errorf("the state differs: %s", firstDiff(w, g))
	}
	if taken < int64(len(keys))/2 {
		t.Errorf("%d of %d keys classified from a window looked up ahead: the test tests less than it says", taken, len(keys))
	}
	for _, s := range []string{"phone", "promo:order:{orderId:int}:promo-info"} {
		if !strings.Contains(string(visibleJSON(t, want)), s) {
			t.Errorf("no %q in the report: the test tests less than it says", s)
		}
	}
}
