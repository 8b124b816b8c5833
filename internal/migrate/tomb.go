package migrate

import (
	"strconv"
	"strings"
	"sync"

	"github.com/keyguard/keyguard/internal/keyslot"
)

// TombPrefix starts the name of every tombstone: an old key that cleanup
// moved aside across Cluster slots, kept for the grace period.
const TombPrefix = "keyguard:tomb:"

// tombs names tombstones. A tombstone must be in its old key's slot (a
// rename cannot leave it), so its name starts with a hash tag that hashes
// to that slot; the tags are found once per job, the first time a Cluster
// needs one.
type tombs struct {
	once sync.Once
	tags []string // by slot
}

func (t *tombs) tag(slot int) string {
	t.once.Do(func() {
		t.tags = make([]string, keyslot.Slots)
		for n, left := uint64(0), keyslot.Slots; left > 0; n++ {
			s := strconv.FormatUint(n, 36)
			if sl := keyslot.Slot("{" + s + "}"); t.tags[sl] == "" {
				t.tags[sl] = s
				left--
			}
		}
	})
	return t.tags[slot]
}

// name is the tombstone of old: keyguard:tomb:{TAG}:KIND:DEADLINE:OLD,
// KIND k for a whole key, f for moved fields, DEADLINE the old key's
// PEXPIRETIME when it was moved (-1 for none), so a restore gives the key
// back its expiry.
func (t *tombs) name(old string, fields bool, deadline int64) string {
	kind := "k"
	if fields {
		kind = "f"
	}
	return TombPrefix + "{" + t.tag(keyslot.Slot(old)) + "}:" + kind + ":" + strconv.FormatInt(deadline, 10) + ":" + old
}

// parseTomb reads a tombstone's name.
func parseTomb(name string) (old string, fields bool, deadline int64, ok bool) {
	rest, ok := strings.CutPrefix(name, TombPrefix+"{")
	if !ok {
		return "", false, 0, false
	}
	_, rest, ok = strings.Cut(rest, "}:")
	if !ok || len(rest) < 2 || rest[1] != ':' || (rest[0] != 'k' && rest[0] != 'f') {
		return "", false, 0, false
	}
	fields = rest[0] == 'f'
	d, old, ok := strings.Cut(rest[2:], ":")
	if !ok || old == "" {
		return "", false, 0, false
	}
	deadline, err := strconv.ParseInt(d, 10, 64)
	if err != nil {
		return "", false, 0, false
	}
	return old, fields, deadline, true
}
