package inventory

import (
	"cmp"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keyguard/keyguard/internal/audit/report"
)

// TestReportTopEntries holds the report's top keys (each entry built in
// the list's order and its name copied to its place in the report's
// order) to entries built one by one in the report's order: empty names,
// names of invalid UTF-8, names cut at maxKeepKey, one name in several
// databases, TTLs unknown, none and set, details of several groups.
func TestReportTopEntries(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 50, 3000} {
		a := &Aggregator{top: newTopBuf[topVal](n), topDet: &topDetails{}}
		dets := []uint32{a.topDet.of("hash", "order:order:{id}:base", "a.rdb"), a.topDet.of("string", "cache:{id}", "b.rdb")}
		names := []string{"", "\xff\xfe", "order:order:", "cache:é", strings.Repeat("k", maxKeepKey+40)}
		for range 4 * n {
			name := names[rng.IntN(len(names))]
			if name != "" && rng.IntN(4) > 0 {
				// Numbered in front, so that two names cut alike are one key.
				name = strconv.Itoa(rng.IntN(2*n)) + name
			}
			v := topVal{elements: int64(rng.IntN(5)), det: dets[rng.IntN(2)]}
			switch rng.IntN(3) {
			case 0:
				v.ttl = -1
			case 1:
				v.ttl = time.Duration(1+rng.IntN(1000)) * time.Millisecond
			}
			cut := clip(name, maxKeepKey)
			a.top.push(listKey{score: int64(rng.IntN(5)) * 100, hash: keyHash(cut), keyLen: int32(len(name)), db: int32(rng.IntN(3))}, cut, v)
		}
		got := a.reportTop(true)

		keys, vals := a.top.list()
		want := make([]report.TopKey, len(keys))
		for i := range keys {
			k, v := &keys[i], &vals[i]
			d := a.topDet.at(v.det)
			name := strings.Clone(a.top.name(k))
			db := int(k.db)
			e := report.TopKey{Key: name, KeyBase64: report.KeyBase64(name), Type: d.typ, Bytes: k.score, Elements: v.elements, Template: d.template, Node: d.node, DB: &db}
			if int(k.keyLen) > len(name) {
				e.KeyLen = int(k.keyLen)
			}
			if v.ttl != 0 {
				ms := v.ttl.Milliseconds()
				if v.ttl == -1 {
					ms = -1
				}
				e.TTLMS = &ms
			}
			want[i] = e
		}
		slices.SortFunc(want, func(p, q report.TopKey) int {
			return cmp.Or(cmp.Compare(q.Bytes, p.Bytes), strings.Compare(p.Key, q.Key), cmp.Compare(*p.DB, *q.DB))
		})
		if len(got) != len(want) || len(want) != min(n, len(keys)) {
			t.Fatalf("list of %d: %d entries, want %d", n, len(got), len(want))
		}
		for i := range want {
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Fatalf("list of %d, entry %d: %+v, want %+v", n, i, got[i], want[i])
			}
		}
	}
}
