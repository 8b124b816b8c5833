package snapshot

import "testing"

// How much of the heap a run asks 2 MiB pages for: none for small files
// or streams, warmBytes otherwise.
func TestWarmHeapSizes(t *testing.T) {
	for _, c := range []struct {
		name string
		ins  []*Input
		want int
	}{
		{"small file", []*Input{{Size: warmMinBytes - 1}}, 0},
		{"stream", []*Input{{}}, 0},
		{"large file", []*Input{{Size: 100 << 20}}, warmBytes},
		{"shards adding up", []*Input{{Size: warmMinBytes / 2}, {Size: warmMinBytes / 2}}, warmBytes},
		{"compressed, by its compressed size", []*Input{{zsize: warmMinBytes}}, warmBytes},
	} {
		if got := warmHeap(c.ins); got != c.want {
			t.Errorf("%s: warmHeap = %d, want %d", c.name, got, c.want)
		}
	}
}
