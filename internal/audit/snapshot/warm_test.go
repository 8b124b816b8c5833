package snapshot

import (
	"testing"

	"github.com/keyguard/keyguard/internal/audit/inventory"
)

// How much of the heap a run asks 2 MiB pages for: none for small files
// or streams; the base and the lists' share otherwise, within the cap.
func TestWarmHeapSizes(t *testing.T) {
	big := []*Input{{Size: 100 << 20}}
	for _, c := range []struct {
		name string
		ins  []*Input
		inv  inventory.Options
		want int
	}{
		{"small file", []*Input{{Size: warmMinBytes - 1}}, inventory.Options{TopKeys: 50}, 0},
		{"stream", []*Input{{}}, inventory.Options{TopKeys: 50}, 0},
		{"large file", big, inventory.Options{TopKeys: 50}, warmBaseBytes + 50*warmKeyBytes},
		{"shards adding up", []*Input{{Size: warmMinBytes / 2}, {Size: warmMinBytes / 2}}, inventory.Options{}, warmBaseBytes},
		{"compressed, by its compressed size", []*Input{{zsize: warmMinBytes}}, inventory.Options{}, warmBaseBytes},
		{"long lists", big, inventory.Options{TopKeys: 100_000, HotKeys: 50}, warmBaseBytes + 100_050*warmKeyBytes},
		{"capped", big, inventory.Options{TopKeys: 5_000_000}, warmMaxBytes},
	} {
		if got := warmHeap(c.ins, c.inv); got != c.want {
			t.Errorf("%s: warmHeap = %d, want %d", c.name, got, c.want)
		}
	}
}
