package snapshot

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/keyguard/keyguard/internal/rdb"
	"github.com/keyguard/keyguard/internal/redistest"
	"github.com/keyguard/keyguard/registry"
)

// An RDB audit of a file whose hash fields had expired when it was
// written leaves them out of the hashes' lengths and the key count, and
// says so; a file of Valkey 9 says whose MEMORY USAGE its sizes are. The
// real file of Redis 8.0 with field TTLs has none expired at its ctime;
// a copy in a temporary directory written two days later (ctime moved,
// checksum made again) has fields expired and one hash with none left.
func TestSnapshotExpiredFieldsAndWriter(t *testing.T) {
	data, err := os.ReadFile(redistest.RDBFixture(t, "replicator__dump-ttlhash.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	at := bytes.Index(data, []byte("\x05ctime\xc2"))
	if at < 0 || len(data) < 8 {
		t.Fatal("no integer ctime aux field in the file")
	}
	moved := slices.Clone(data)
	ctime := binary.LittleEndian.Uint32(moved[at+7:])
	binary.LittleEndian.PutUint32(moved[at+7:], ctime+5*86400) // every TTL of the file has passed
	binary.LittleEndian.PutUint64(moved[len(moved)-8:], rdb.CRC64(moved[:len(moved)-8]))
	path := filepath.Join(t.TempDir(), "later.rdb")
	if err := os.WriteFile(path, moved, 0o644); err != nil {
		t.Fatal(err)
	}
	reg, err := registry.Parse("r.yaml", []byte("version: 1\ndomains: {order: {owner: o}}\nkeys: []\n"))
	if err != nil {
		t.Fatal(err)
	}
	run := func(p string) []string {
		rep := auditFiles(t, reg, p)
		if !rep.Complete {
			t.Fatalf("%s: incomplete: %+v", p, rep.Stopped)
		}
		return rep.Notes
	}
	orig := run(redistest.RDBFixture(t, "replicator__dump-ttlhash.rdb"))
	if slices.ContainsFunc(orig, func(n string) bool { return strings.Contains(n, "hash field") }) {
		t.Errorf("fields expired at the file's own ctime: %q", orig)
	}
	// iterttlhash: 4 of 128 fields with TTLs; ttlhash1: 9 of 1024;
	// ttlhash: 2 of 3. None of the three loses every field.
	later := run(path)
	want := "15 hash fields had already expired when the snapshot was taken"
	if !slices.ContainsFunc(later, func(n string) bool { return strings.HasPrefix(n, want) }) {
		t.Errorf("notes %q, want one starting %q", later, want)
	}
	valkey := run(redistest.RDBFixture(t, "hdt__cases_valkey_hash2_with_hfe.rdb"))
	if !slices.ContainsFunc(valkey, func(n string) bool {
		return strings.Contains(n, "memory is MEMORY USAGE as Redis 7.2 holds the keys") && strings.Contains(n, "Valkey 9.0.1 wrote the file")
	}) {
		t.Errorf("notes %q say nothing of the writer", valkey)
	}
}
