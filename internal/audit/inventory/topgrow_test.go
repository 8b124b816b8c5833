package inventory

import (
	"fmt"
	"testing"

	"github.com/keyguard/keyguard/internal/hugepage"
)

// TestTopBufGrowth: a list whose values hold pointers (the hot list's)
// grows by doubling, so that the collector does not read room it never
// fills; a list of pointer-free values (the top list's) takes its room
// at once past 1,024 keys. Both keep the same keys.
func TestTopBufGrowth(t *testing.T) {
	if !hugepage.HasPointers[hotVal]() || hugepage.HasPointers[topVal]() {
		t.Fatal("HasPointers is wrong about a list's values")
	}
	const n, taken = 100_000, 3_000
	hot, top := newTopBuf[hotVal](n), newTopBuf[topVal](n)
	for i := range taken {
		name := fmt.Sprintf("key:%d", i)
		k := listKey{score: int64(i % 97), hash: keyHash(name)}
		hot.push(k, name, hotVal{bytes: int64(i), template: "t"})
		top.push(k, name, topVal{elements: int64(i)})
	}
	if c := cap(hot.keys); c >= 2*taken || cap(hot.vals) >= 2*taken {
		t.Errorf("the hot list's buffer holds room for %d keys after %d were taken in: want it doubled, under %d", c, taken, 2*taken)
	}
	if c := cap(top.keys); c != top.room() {
		t.Errorf("the top list's buffer holds room for %d keys, want its room %d", c, top.room())
	}
	hk, _ := hot.list()
	tk, _ := top.list()
	if len(hk) != taken || len(tk) != taken {
		t.Fatalf("kept %d and %d keys of %d", len(hk), len(tk), taken)
	}
	for i := range hk {
		if hk[i].score != tk[i].score || hot.name(&hk[i]) != top.name(&tk[i]) {
			t.Fatalf("key %d: hot list %q, top list %q", i, hot.name(&hk[i]), top.name(&tk[i]))
		}
	}
}
