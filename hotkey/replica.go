package hotkey

import (
	"strconv"

	"github.com/keyguard/keyguard/internal/keyslot"
	"github.com/keyguard/keyguard/registry"
)

// Slots is the number of Redis Cluster hash slots.
const Slots = keyslot.Slots

// MaxReplicas bounds hot.replicas: beyond it the copies' slot windows get
// too narrow to search quickly, and no workload needs more copies.
const MaxReplicas = 256

// Slot returns the Redis Cluster hash slot of key (CLUSTER KEYSLOT).
func Slot(key string) int { return keyslot.Slot(key) }

// ReplicaKeys returns the names of the n copies of key (n ≤ 1: key
// itself). See ReplicaKey.
func ReplicaKeys(key string, n int) []string {
	if n <= 1 {
		return []string{key}
	}
	n = min(n, MaxReplicas)
	r := newReplicaSearch(key, n)
	out := make([]string, n)
	found := 0
	for j := 0; found < n; j++ {
		if i := r.window(j); i >= 0 && out[i] == "" {
			out[i] = r.name(j)
			found++
		}
	}
	return out
}

// ReplicaKey returns the name of copy i (0 ≤ i < n) of key.
//
// A copy is key with "#<j>" appended (inside the hash tag when key has
// one, so the copies do not share its slot): copy i takes the smallest j
// whose slot falls in the i-th of n equal windows centred in the slot
// range, each a quarter of its 1/n share. The names depend on key and n
// only, never on a Cluster's topology, so every reader and writer agrees
// on them during a resharding; on a Cluster whose masters own equal slot
// ranges (what redis-cli --cluster create makes) n copies spread over
// min(n, masters) nodes as evenly as n allows.
func ReplicaKey(key string, i, n int) string {
	if n <= 1 {
		return key
	}
	n = min(n, MaxReplicas)
	r := newReplicaSearch(key, n)
	for j := 0; ; j++ {
		if r.window(j) == i {
			return r.name(j)
		}
	}
}

// replicaSearch finds replica suffixes. CRC16 is computed incrementally:
// the state after the text before the suffix is kept, so each candidate
// costs only its few suffix bytes.
type replicaSearch struct {
	key      string
	at       int    // where "#j" goes
	hashFrom int    // start of the hashed text
	state    uint16 // CRC16 of key[hashFrom:at]
	n        int
}

func newReplicaSearch(key string, n int) *replicaSearch {
	r := &replicaSearch{key: key, at: len(key), n: n}
	if s, e, ok := keyslot.Tag(key); ok {
		r.hashFrom, r.at = s, e
	}
	r.state = keyslot.CRC16(0, key[r.hashFrom:r.at])
	return r
}

// window returns the copy whose window holds candidate j's slot, or -1.
func (r *replicaSearch) window(j int) int {
	var buf [24]byte
	b := append(buf[:0], '#')
	b = strconv.AppendInt(b, int64(j), 10)
	slot := int(keyslot.CRC16(r.state, b) % Slots)
	// Copy i's window: centre (2i+1)·S/(2n), half-width S/(8n).
	share := slot * r.n // slot in units of S/n shares, scaled by S
	i := share / Slots
	centre := (2*i + 1) * Slots / 2
	if d := share - centre; d >= -Slots/8 && d < Slots/8 {
		return i
	}
	return -1
}

func (r *replicaSearch) name(j int) string {
	return r.key[:r.at] + "#" + strconv.Itoa(j) + r.key[r.at:]
}

// BaseKey returns the key a copy name was made from, and whether name
// carries a copy suffix: "#" and digits at the end of its hash tag's
// content when it has a tag, else at the end. It does not check that the
// suffix is the one ReplicaKey picks.
func BaseKey(name string) (string, bool) { return registry.BaseKey(name) }
