package hotkey

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/redistest"
)

func TestSlotVectors(t *testing.T) {
	for _, c := range []struct {
		key  string
		slot int
	}{
		{"123456789", 0x31c3 % Slots}, // the CRC16-XMODEM check value
		{"", 0},
		{"foo", 12182},
		{"{user1000}.following", Slot("user1000")},
		{"foo{}{bar}", Slot("foo{}{bar}")}, // empty first tag: the whole key
		{"foo{{bar}}zap", Slot("{bar")},
		{"foo{bar}{zap}", Slot("bar")},
	} {
		if got := Slot(c.key); got != c.slot {
			t.Errorf("Slot(%q) = %d, want %d", c.key, got, c.slot)
		}
	}
}

func TestReplicaNames(t *testing.T) {
	for _, key := range []string{"cache:product:detail:P1001", "{cart:42}:items", "x", "{}a", "a{b", "goods:hot:area:110101:20010"} {
		for _, n := range []int{1, 2, 3, 6, 8, 10, 64} {
			names := ReplicaKeys(key, n)
			if len(names) != n {
				t.Fatalf("%q n=%d: %d names", key, n, len(names))
			}
			if n == 1 {
				if names[0] != key {
					t.Errorf("n=1: %q, want the key", names[0])
				}
				continue
			}
			seen := map[int]bool{}
			for i, name := range names {
				if got := ReplicaKey(key, i, n); got != name {
					t.Errorf("ReplicaKey(%q, %d, %d) = %q, ReplicaKeys has %q", key, i, n, got, name)
				}
				base, ok := BaseKey(name)
				if !ok || base != key {
					t.Errorf("BaseKey(%q) = %q, %v; want %q", name, base, ok, key)
				}
				slot := Slot(name)
				if seen[slot] {
					t.Errorf("%q n=%d: two copies in slot %d", key, n, slot)
				}
				seen[slot] = true
				// Copy i sits in the middle quarter of the i-th n-th of the slots.
				lo, hi := float64(i)*Slots/float64(n), float64(i+1)*Slots/float64(n)
				if s := float64(slot); s < lo+(hi-lo)*3/8-1 || s >= lo+(hi-lo)*5/8+1 {
					t.Errorf("%q copy %d/%d in slot %d, outside the window of [%.0f, %.0f)", key, i, n, slot, lo, hi)
				}
			}
			if strings.Contains(key, "{cart") && !strings.HasSuffix(names[0], "}:items") {
				t.Errorf("hash-tagged key: suffix not inside the tag: %q", names[0])
			}
		}
	}
	for _, name := range []string{"plain", "a#", "#5", "a#x5", "{#5}:x", "key#12a"} {
		if b, ok := BaseKey(name); ok {
			t.Errorf("BaseKey(%q) = %q, true; want not a copy", name, b)
		}
	}
}

// TestSlotMatchesServer: Slot agrees with CLUSTER KEYSLOT on every copy
// name and on awkward keys.
func TestSlotMatchesServer(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	cc := cl.Client(t)
	ctx := context.Background()
	keys := []string{"", "a", "{", "}", "{}", "{a}", "a{}b{c}", "\x00\xff{\n}", strings.Repeat("k", 300)}
	for _, k := range []string{"cache:product:detail:P1001", "{cart:42}:items"} {
		keys = append(keys, ReplicaKeys(k, 8)...)
	}
	for i := range 200 {
		keys = append(keys, "k:"+strconv.Itoa(i*7919))
	}
	for _, k := range keys {
		want, err := cc.ClusterKeySlot(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if got := Slot(k); int64(got) != want {
			t.Errorf("Slot(%q) = %d, CLUSTER KEYSLOT says %d", k, got, want)
		}
	}
}

// nodeOfSlot maps each slot to the address of the master serving it.
func nodeOfSlot(t *testing.T, cc *redis.ClusterClient) map[int]string {
	t.Helper()
	slots, err := cc.ClusterSlots(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	m := map[int]string{}
	for _, s := range slots {
		for i := s.Start; i <= s.End; i++ {
			m[i] = s.Nodes[0].Addr
		}
	}
	return m
}

// TestReplicasSpreadOverNodes: on a 3-master Cluster the copies of a hot
// key land on every master, and random reads load the masters evenly
// (per-node INFO commandstats within 1.5× of each other).
func TestReplicasSpreadOverNodes(t *testing.T) {
	ctx := context.Background()
	cl := redistest.StartCluster(t, 3)
	cc := cl.Client(t)
	owner := nodeOfSlot(t, cc)
	reg := testRegistry(t)
	// PromoteAbove out of reach: every read goes to Redis.
	c, _ := newCache(t, reg, cc, Options{PromoteAbove: math.MaxFloat64})

	for _, tc := range []struct {
		key    string
		copies int
	}{{"cache:product:detail:P1001", 3}, {"goods:hot:area:110101:20010", 6}, {"cache:product:wide:P1001", 8}} {
		if err := c.Set(ctx, tc.key, "v"); err != nil {
			t.Fatal(err)
		}
		per := map[string]int{}
		for _, name := range ReplicaKeys(tc.key, tc.copies) {
			per[owner[Slot(name)]]++
			if v, err := cc.Get(ctx, name).Result(); err != nil || v != "v" {
				t.Fatalf("copy %s: %q, %v", name, v, err)
			}
		}
		if len(per) != 3 {
			t.Errorf("%s: %d copies on %d nodes (%v), want all 3", tc.key, tc.copies, len(per), per)
		}
	}

	// Random reads of a 6-copy key: two copies per node.
	key := "goods:hot:area:110101:20010"
	err := cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error { return m.ConfigResetStat(ctx).Err() })
	if err != nil {
		t.Fatal(err)
	}
	const reads = 3000
	for range reads {
		if v, err := c.Get(ctx, key, (&loaderCount{value: "v"}).load); err != nil || v != "v" {
			t.Fatalf("Get = %q, %v", v, err)
		}
	}
	var calls []int
	for _, n := range cl.Nodes {
		calls = append(calls, commandCalls(t, n.Client(t), "get"))
	}
	lo, hi, sum := calls[0], calls[0], 0
	for _, n := range calls {
		lo, hi, sum = min(lo, n), max(hi, n), sum+n
	}
	t.Logf("GET calls per node for %d reads: %v", reads, calls)
	if sum < reads || lo == 0 || float64(hi) > 1.5*float64(lo) {
		t.Errorf("GET calls per node %v: want all nodes within 1.5× of each other, %d in all", calls, reads)
	}
}

// TestFanoutPartialFailure: a write that fails on some copies is a
// *FanoutError naming them; the copies that could be written were.
func TestFanoutPartialFailure(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	key := "cache:product:detail:P7"
	names := ReplicaKeys(key, 3)
	// A user that may write every key but the second copy (ACL key
	// patterns are allow-lists: read all, write the listed ones).
	rules := []any{"ACL", "SETUSER", "writer", "on", ">pw", "+@all", "%R~*", "%W~lock:*", "%W~" + globEscape(names[0]), "%W~" + globEscape(names[2]), "&*"}
	if err := admin.Do(ctx, rules...).Err(); err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "writer", Password: "pw"})
	t.Cleanup(func() { rdb.Close() })
	c, pr := newCache(t, testRegistry(t), rdb, Options{})
	err := c.Set(ctx, key, "v")
	var fe *FanoutError
	if !errors.As(err, &fe) || len(fe.Failed) != 1 || fe.Failed[0] != names[1] || fe.Total != 3 {
		t.Fatalf("Set = %v, want a FanoutError on %s", err, names[1])
	}
	if !strings.Contains(err.Error(), "NOPERM") {
		t.Errorf("the error hides the server's reason: %v", err)
	}
	for i, n := range names {
		v, err := admin.Get(ctx, n).Result()
		if i == 1 && !errors.Is(err, redis.Nil) || i != 1 && v != "v" {
			t.Errorf("copy %d: %q, %v", i, v, err)
		}
	}
	if f := counter(t, pr, MetricFanoutErrors); f != 1 {
		t.Errorf("%s = %v, want 1", MetricFanoutErrors, f)
	}
	// Delete fails on the same copy, and says so.
	err = c.Delete(ctx, key)
	if !errors.As(err, &fe) || fe.Op != "delete" || fe.Failed[0] != names[1] {
		t.Fatalf("Delete = %v", err)
	}
}

// globEscape escapes the glob characters of an ACL key pattern.
func globEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`, `]`, `\]`)
	return r.Replace(s)
}

// FuzzReplicaKey: for any key, the copies' names lead back to the key,
// sit in distinct slots, and ReplicaKey agrees with ReplicaKeys.
func FuzzReplicaKey(f *testing.F) {
	f.Add("cache:product:detail:P1001", uint8(8))
	f.Add("{cart:42}:items", uint8(3))
	f.Add("{#}", uint8(2))
	f.Add("a#5", uint8(4))
	f.Fuzz(func(t *testing.T, key string, n uint8) {
		if key == "" {
			return // no template matches the empty key: it never has copies
		}
		copies := int(n%15) + 2
		names := ReplicaKeys(key, copies)
		slots := map[int]bool{}
		for i, name := range names {
			if base, ok := BaseKey(name); !ok || base != key {
				t.Fatalf("BaseKey(%q) = %q, %v; want %q", name, base, ok, key)
			}
			if s := Slot(name); slots[s] {
				t.Fatalf("two copies of %q in slot %d", key, s)
			} else {
				slots[s] = true
			}
			if i < 2 && ReplicaKey(key, i, copies) != name {
				t.Fatalf("ReplicaKey(%q, %d, %d) differs", key, i, copies)
			}
		}
	})
}
