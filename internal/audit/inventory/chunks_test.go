package inventory

import (
	"reflect"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/registry"
)

// TestInChunks: every index is handed out once, in ranges that tile
// 0..n, on one core and on several.
func TestInChunks(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 3, 8} {
		runtime.GOMAXPROCS(procs)
		for _, n := range []int{0, 1, 4095, 8191, 8192, 12289, 100_000} {
			seen := make([]atomic.Int32, n)
			var calls atomic.Int32
			inChunks(n, func(lo, hi int) {
				calls.Add(1)
				if lo > hi || lo < 0 || hi > n {
					t.Errorf("procs %d n %d: range %d..%d", procs, n, lo, hi)
					return
				}
				for i := lo; i < hi; i++ {
					seen[i].Add(1)
				}
			})
			for i := range seen {
				if c := seen[i].Load(); c != 1 {
					t.Fatalf("procs %d n %d: index %d handed out %d times", procs, n, i, c)
				}
			}
			if want := max(1, min(procs, n/4096)); int(calls.Load()) != want {
				t.Errorf("procs %d n %d: %d ranges, want %d", procs, n, calls.Load(), want)
			}
		}
	}
}

// TestReportSameOnEveryCore: the findings and top keys, written on as
// many goroutines as there are cores when they are many, are the ones
// one core writes (30,000 findings, 20,000 top keys, two databases).
func TestReportSameOnEveryCore(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	reg, err := registry.Load("testdata/keyguard.yaml")
	if err != nil {
		t.Fatal(err)
	}
	build := func() *report.Report {
		a := New(reg, Options{TopKeys: 20_000})
		r := &Record{Node: "127.0.0.1:6379", Type: "string", Freq: -1}
		buf := make([]byte, 0, 64)
		for i := range 30_000 {
			buf = append(buf[:0], 'f')
			buf = letters(buf, i%3_000)
			buf = append(buf, ":item:"...)
			buf = strconv.AppendInt(buf, int64(i), 10)
			r.Key, r.DB, r.Bytes = string(buf), i%2, int64(50+i%977)
			r.TTL = -1
			if i%3 == 0 {
				r.TTL = time.Duration(1+i%7200) * time.Second
			}
			a.Add(r, a.Classify(r.Key))
		}
		return a.Report(report.Meta{})
	}
	runtime.GOMAXPROCS(1)
	one := build()
	runtime.GOMAXPROCS(4)
	four := build()
	if len(one.Findings) < 2*8192 || len(one.TopKeys) < 2*8192 {
		t.Fatalf("%d findings, %d top keys: too few to be written on several cores", len(one.Findings), len(one.TopKeys))
	}
	if !reflect.DeepEqual(one.Findings, four.Findings) {
		t.Error("findings differ between 1 and 4 cores")
	}
	if !reflect.DeepEqual(one.TopKeys, four.TopKeys) {
		t.Error("top keys differ between 1 and 4 cores")
	}
}

// TestGroupListsAtTheirSize: the report's and the state's group lists,
// made at their size, are those of the groups; a report without keys
// keeps the state's groups nil (null in its JSON, as the states saved
// before read).
func TestGroupListsAtTheirSize(t *testing.T) {
	reg, err := registry.Load("testdata/keyguard.yaml")
	if err != nil {
		t.Fatal(err)
	}
	empty := New(reg, Options{}).Report(report.Meta{})
	if empty.State.Groups != nil || len(empty.Groups) != 0 {
		t.Errorf("no keys: state groups %#v, report groups %d", empty.State.Groups, len(empty.Groups))
	}
	a := New(reg, Options{})
	r := &Record{Node: "n", Type: "string", Freq: -1, TTL: -1, Bytes: 10}
	for i := range 50 {
		r.Key, r.DB = "fam"+string(rune('a'+i%26))+":x:"+strconv.Itoa(i), i%2
		a.Add(r, a.Classify(r.Key))
	}
	rep := a.Report(report.Meta{})
	if n := a.groupCount(); len(rep.Groups) != n || len(rep.State.Groups) != n || cap(rep.State.Groups) != n {
		t.Errorf("%d groups counted, report %d, state %d (room %d)", n, len(rep.Groups), len(rep.State.Groups), cap(rep.State.Groups))
	}
}
