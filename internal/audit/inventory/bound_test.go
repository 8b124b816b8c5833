package inventory

import (
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/registry"
)

// letters writes n in base 26 with a-z, so that inferred families differ
// in words, not in digits (digits become placeholders).
func letters(b []byte, n int) []byte {
	for {
		b = append(b, byte('a'+n%26))
		n /= 26
		if n == 0 {
			return b
		}
	}
}

// Memory does not grow with the key count: two million records of 50,000
// unregistered families, with findings, LFU counters and field samples,
// leave every structure at its cap.
func TestMemoryBounded(t *testing.T) {
	n := 2_000_000
	if raceEnabled || testing.Short() {
		n = 300_000 // the race detector makes each record ~10x slower; the caps are reached long before
	}
	reg, err := registry.Load("testdata/keyguard.yaml")
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{MaxFindings: 1000, TopKeys: 50, HotKeys: 20}
	a := New(reg, opts)
	r := &Record{Node: "127.0.0.1:6379", Type: "hash", Freq: -1}
	buf := make([]byte, 0, 64)
	fs := []string{"a", "b", "c"}
	var m0, m1 runtime.MemStats
	for i := range n {
		buf = buf[:0]
		if i%4 == 0 {
			buf = append(buf, "order:order:"...)
			buf = strconv.AppendInt(buf, int64(i), 10)
			buf = append(buf, ":base"...)
			r.TTL = -1 // a no-ttl finding every time
		} else {
			buf = append(buf, 'f')
			buf = letters(buf, i%50_000)
			buf = append(buf, ":item:"...)
			buf = strconv.AppendInt(buf, int64(i), 10)
			r.TTL = time.Duration(1+i%7200) * time.Second
		}
		r.Key = string(buf)
		r.Bytes, r.Elements, r.Freq = int64(i%100_000), int64(i%20_000), i%256
		r.Fields = nil
		cl := a.Classify(r.Key)
		if cl.Fields {
			r.Fields = fs
		}
		a.Add(r, cl)
		if i == n/2 {
			runtime.GC()
			runtime.ReadMemStats(&m0)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	t.Logf("%d records: heap %.1f MiB at half, %.1f MiB at the end", n, float64(m0.HeapAlloc)/(1<<20), float64(m1.HeapAlloc)/(1<<20))

	if got := a.families; got != a.famCap() {
		t.Errorf("%d inferred families, want the walk's cap %d", got, a.famCap())
	}
	if other := a.groups[groupKey{kind: gOther}]; other == nil || a.foldedCap == 0 || other.keys != a.foldedCap {
		t.Errorf("families past the cap not folded into %s", report.OtherGroup)
	}
	if tops, _ := a.top.list(); len(tops) != opts.TopKeys {
		t.Errorf("top keys %d, want %d", len(tops), opts.TopKeys)
	}
	if hots, _ := a.hot.list(); len(hots) != opts.HotKeys {
		t.Errorf("hot keys %d, want %d", len(hots), opts.HotKeys)
	}
	for id, rs := range a.rules {
		if len(rs.kept.h) > rs.kept.room() || len(rs.kept.kept()) > opts.MaxFindings || len(rs.kept.details) > 2*rs.kept.room() {
			t.Errorf("rule %s keeps %d findings (%d texts), cap %d", id, len(rs.kept.kept()), len(rs.kept.details), opts.MaxFindings)
		}
	}
	if len(a.famCensus) > maxFamilyCensuses {
		t.Errorf("%d family censuses", len(a.famCensus))
	}
	censused, kept := 0, 0
	for name, fs := range a.famFields {
		if c := fs.census; c != nil {
			censused++
			if len(c.sigs) > maxSigs {
				t.Errorf("census of %s holds %d field sets", name, len(c.sigs))
			}
			for _, s := range c.sigs {
				kept += len(s.keys)
			}
		}
	}
	for i := range a.tmplFields {
		if c := a.tmplFields[i].census; c != nil {
			for _, s := range c.sigs {
				if len(s.keys) > maxSigKeys {
					t.Errorf("a field set keeps %d keys", len(s.keys))
				}
				kept += len(s.keys)
			}
		}
	}
	if kept > maxCensusKeys || kept != a.censusKeys {
		t.Errorf("censuses keep %d keys (counted %d), bound %d", kept, a.censusKeys, maxCensusKeys)
	}
	if c := a.tmplFields[0].census; c == nil || c.keys == 0 {
		t.Errorf("registered template census: %+v", c)
	}
	if censused == 0 {
		t.Error("no family was counted")
	}
	rep := a.Report(report.Meta{Source: report.Source{Kind: "redis"}, Complete: true})
	if rep.Summary.Keys != int64(n) || len(rep.Groups) > DefaultMaxGroups+len(reg.Entries)+1 {
		t.Errorf("report: %d keys, %d groups", rep.Summary.Keys, len(rep.Groups))
	}
	if other := a.groups[groupKey{kind: gOther}]; a.families != DefaultMaxGroups || other.keys != a.foldedCap {
		t.Errorf("report: %d families kept, %d keys in %s, %d folded", a.families, other.keys, report.OtherGroup, a.foldedCap)
	}
	// Growth from the middle to the end stays small next to the first half.
	if m1.HeapAlloc > 2*m0.HeapAlloc+8<<20 {
		t.Errorf("heap grew from %d to %d bytes in the second half", m0.HeapAlloc, m1.HeapAlloc)
	}
}
