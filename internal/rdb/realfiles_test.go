package rdb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/redistest"
)

// decodedFile is what the decoder made of one file.
type decodedFile struct {
	recs []*Record
	meta *Meta
	err  error
}

// loadResult is what the server said about loading a file.
type loadResult struct {
	at      time.Time // when the load started: keys expiring before are dropped
	refused string    // why the server refused the file, "" when it loaded it
	expired int64     // "keys expired" in its log
	empty   int64     // "empty keys skipped" in its log
}

var loadDone = regexp.MustCompile(`Done loading RDB, keys loaded: \d+, keys expired: (\d+)(?:, empty keys skipped: (\d+))?`)

// loadIntoServer makes srv load the RDB file at path as it would at
// start-up (DEBUG RELOAD NOSAVE reads dump.rdb through the same code). A
// server that exits on the file is restarted empty; one that refuses it
// half-way is emptied.
func loadIntoServer(t *testing.T, srv *redistest.Server, c *redis.Client, path string) loadResult {
	t.Helper()
	ctx := context.Background()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dump := filepath.Join(srv.Dir, "dump.rdb")
	if err := os.WriteFile(dump, data, 0o644); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(srv.Dir, "redis.log")
	before, _ := os.ReadFile(logPath)
	res := loadResult{at: time.Now()}
	err = c.Do(ctx, "DEBUG", "RELOAD", "NOSAVE").Err()
	after, _ := os.ReadFile(logPath)
	var log string
	if len(after) >= len(before) {
		log = string(after[len(before):])
	}
	if err == nil {
		m := loadDone.FindStringSubmatch(log)
		if m == nil {
			t.Fatalf("%s: no \"Done loading RDB\" line in the server log:\n%s", path, log)
		}
		res.expired, _ = strconv.ParseInt(m[1], 10, 64)
		res.empty, _ = strconv.ParseInt(m[2], 10, 64)
		return res
	}
	res.refused = refusal(log)
	if res.refused == "" {
		res.refused = err.Error()
	}
	if c.Ping(ctx).Err() != nil { // it exited on the file
		_ = os.Remove(dump)
		srv.Restart(t)
	} else if err := c.FlushAll(ctx).Err(); err != nil { // keys before the failure stay loaded
		t.Fatal(err)
	}
	return res
}

// refusal picks the lines of a server log that say why a load failed.
func refusal(log string) string {
	var why []string
	for _, l := range strings.Split(log, "\n") {
		if i := strings.Index(l, " # "); i >= 0 && !strings.Contains(l, "WARNING") {
			why = append(why, strings.TrimSpace(l[i+3:]))
		}
	}
	return strings.Join(why, "; ")
}

// held is what the server holds after a load: type per key, MEMORY USAGE.
type heldKey struct {
	typ string
	mem int64
}

func serverKeys(t *testing.T, srv *redistest.Server) map[serverKey]heldKey {
	t.Helper()
	ctx := context.Background()
	out := map[serverKey]heldKey{}
	for db := range 16 {
		c := redis.NewClient(&redis.Options{Addr: srv.Addr, DB: db})
		var cursor uint64
		for {
			keys, next, err := c.Scan(ctx, cursor, "*", 1000).Result()
			if err != nil {
				t.Fatal(err)
			}
			types := make([]*redis.StatusCmd, len(keys))
			mems := make([]*redis.Cmd, len(keys))
			if _, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
				for i, k := range keys {
					types[i] = p.Type(ctx, k)
					mems[i] = p.Do(ctx, "MEMORY", "USAGE", k, "SAMPLES", "0")
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			for i, k := range keys {
				mem, _ := mems[i].Int64()
				out[serverKey{db, k}] = heldKey{types[i].Val(), mem}
			}
			if cursor = next; cursor == 0 {
				break
			}
		}
		_ = c.Close()
	}
	return out
}

// TestRealFiles decodes the RDB files of the test suites of Redis, Valkey
// and three RDB libraries, and compares each with what a real
// redis-server holds after loading it: the same keys in the same
// databases with the same types (keys already expired at load time and
// empty collections are dropped by both). Files the server refuses (newer
// formats, modules it does not have, damage) must either decode
// completely, agreeing with the key counts the file declares, or stop
// with a clear error.
func TestRealFiles(t *testing.T) {
	dir := redistest.RDBFixtures(t)
	files, err := filepath.Glob(filepath.Join(dir, "*.rdb"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no RDB files in %s (%v)", dir, err)
	}
	srv := redistest.Start(t)
	c := srv.Client(t)
	dbClient := dbClients(t, srv.Addr)
	var loaded, refused, decodedRefused, errored int
	memErr := map[string][]float64{}
	type keyErr struct {
		e    float64
		line string
	}
	var memWorst []keyErr
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), ".rdb")
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var got decodedFile
		got.recs, got.meta, got.err = decodeAll(t, data, Options{})
		load := loadIntoServer(t, srv, c, path)
		if load.refused != "" {
			refused++
			if got.err != nil {
				errored++
				checkClearError(t, name, got.err)
				t.Logf("%s: the server refuses it (%s); the decoder stops: %v", name, load.refused, got.err)
				continue
			}
			decodedRefused++
			checkDeclaredCounts(t, name, got)
			if !newerOrModule(got) {
				t.Errorf("%s: the server refuses it (%s), the decoder reads it without error", name, load.refused)
			}
			t.Logf("%s: the server refuses it (%s); decoded %d keys", name, load.refused, len(got.recs))
			continue
		}
		loaded++
		if got.err != nil {
			t.Errorf("%s: the server loads it, the decoder stops: %v", name, got.err)
			continue
		}
		if got.meta.EmptySkipped != load.empty {
			t.Errorf("%s: %d empty keys skipped, the server skipped %d", name, got.meta.EmptySkipped, load.empty)
		}
		held := serverKeys(t, srv)
		seen := map[serverKey]bool{}
		var expired int64
		for _, r := range got.recs {
			k := serverKey{r.DB, string(r.Key)}
			if r.ExpireAt != 0 && r.ExpireAt < load.at.UnixMilli() {
				expired++
				if _, ok := held[k]; ok {
					t.Errorf("%s: %q (db %d) expired at %d, before the load, and the server kept it", name, k.key, k.db, r.ExpireAt)
				}
				continue
			}
			if seen[k] {
				t.Errorf("%s: %q (db %d) decoded twice", name, k.key, k.db)
			}
			seen[k] = true
			h, ok := held[k]
			if !ok {
				t.Errorf("%s: decoded %s %q (db %d, %d elements), the server does not hold it", name, r.Type, k.key, k.db, r.Elements)
				continue
			}
			if r.Encoding == EncSkiplist {
				h.mem = usageOfRebuilds(t, dbClient(k.db), k.key, r.MemoryEstimate, h.mem)
			}
			if string(r.Type) != h.typ {
				t.Errorf("%s: %q: decoded type %s, server %s", name, k.key, r.Type, h.typ)
			}
			enc := string(r.Type) + "/" + r.Encoding
			e := float64(r.MemoryEstimate-h.mem) / float64(h.mem)
			memErr[enc] = append(memErr[enc], e)
			memWorst = append(memWorst, keyErr{e, fmt.Sprintf("%+7.1f%%  %-20s est %8d server %8d  %s %.40q", 100*e, enc, r.MemoryEstimate, h.mem, name, k.key)})
			if !memoryClose(r.Encoding, r.MemoryEstimate, h.mem) {
				t.Errorf("%s: %q (%s, %d elements): memory estimate %d, MEMORY USAGE %d", name, k.key, enc, r.Elements, r.MemoryEstimate, h.mem)
			}
		}
		if expired != load.expired {
			t.Errorf("%s: %d keys expired before the load, the server dropped %d", name, expired, load.expired)
		}
		for k := range held {
			if !seen[k] {
				t.Errorf("%s: the server holds %q (db %d), not decoded", name, k.key, k.db)
			}
		}
		t.Logf("%s: %d keys as on the server (%d expired before the load, %d empty skipped)", name, len(seen), expired, got.meta.EmptySkipped)
	}
	t.Logf("%d files: %d loaded by the server and decoded the same; %d refused by it, of which %d decoded and %d stopped with an error",
		len(files), loaded, refused, decodedRefused, errored)
	encs := make([]string, 0, len(memErr))
	for e := range memErr {
		encs = append(encs, e)
	}
	sort.Strings(encs)
	for _, e := range encs {
		v := memErr[e]
		sort.Float64s(v)
		t.Logf("memory %-22s %4d keys: median %+.1f%%, min %+.1f%%, max %+.1f%%", e, len(v), 100*v[len(v)/2], 100*v[0], 100*v[len(v)-1])
	}
	sort.SliceStable(memWorst, func(i, j int) bool { return math.Abs(memWorst[i].e) > math.Abs(memWorst[j].e) })
	for _, w := range memWorst[:min(10, len(memWorst))] {
		t.Log(w.line)
	}
}

// memoryClose holds the memory model to MEMORY USAGE key by key: exact,
// but for skiplists, whose node levels are random (a few percent on small
// ones, well under one on large ones).
func memoryClose(enc string, est, server int64) bool {
	if enc == EncSkiplist {
		return math.Abs(float64(est-server)) <= 0.05*float64(server)
	}
	return est == server
}

// dbClients returns a client of the server at addr for each database,
// made at the first call for it and closed when the test ends.
func dbClients(t *testing.T, addr string) func(db int) *redis.Client {
	clients := map[int]*redis.Client{}
	return func(db int) *redis.Client {
		if clients[db] == nil {
			c := redis.NewClient(&redis.Options{Addr: addr, DB: db})
			clients[db] = c
			t.Cleanup(func() { _ = c.Close() })
		}
		return clients[db]
	}
}

// usageOfRebuilds is, for a skiplist whose estimate is not close to the
// server's first figure, the MEMORY USAGE closest to est over up to 64
// rebuilds of the value: RESTORE of its DUMP (an RDB file's load path)
// under a name of the key's length, which costs the same. A skiplist's
// nodes draw random levels (each a 16-byte link more with probability
// 1/4), so one value's usage varies from build to build: 1,112–1,208
// bytes over 1,500 reloads of a zset of two members on Redis 7.0, which
// failed one CI run in many at 1,288 against the model's 1,122. The
// model gives the usual size; a model that is wrong is off in every
// build, so the rebuilds stop at the first close one.
func usageOfRebuilds(t *testing.T, c *redis.Client, key string, est, first int64) int64 {
	t.Helper()
	if memoryClose(EncSkiplist, est, first) || key == "" {
		return first
	}
	ctx := context.Background()
	payload, err := c.Dump(ctx, key).Result()
	if err != nil {
		t.Fatalf("DUMP %.40q: %v", key, err)
	}
	var tmp string
	for b := byte(0xff); ; b-- {
		tmp = strings.Repeat(string([]byte{b}), len(key))
		if n, err := c.Exists(ctx, tmp).Result(); err != nil || n == 0 {
			break
		}
	}
	defer c.Del(ctx, tmp)
	best := first
	for range 64 {
		if err := c.RestoreReplace(ctx, tmp, 0, payload).Err(); err != nil {
			t.Fatalf("RESTORE of %.40q: %v", key, err)
		}
		m, err := c.Do(ctx, "MEMORY", "USAGE", tmp, "SAMPLES", "0").Int64()
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(float64(m-est)) < math.Abs(float64(best-est)) {
			best = m
		}
		if memoryClose(EncSkiplist, est, m) {
			break
		}
	}
	return best
}

// newerOrModule reports a file the reference server (Redis 7.0) cannot
// load for what it lacks rather than for damage: a newer format, or values
// of modules it does not have.
func newerOrModule(f decodedFile) bool {
	if f.meta.Version > 10 || f.meta.Valkey || len(f.meta.ModuleAux) > 0 {
		return true
	}
	for _, r := range f.recs {
		if r.Type == TypeModule {
			return true
		}
	}
	return false
}

// checkClearError: a file the decoder stops on gets a FormatError that
// says what kind of problem it is and what to do.
func checkClearError(t *testing.T, name string, err error) {
	t.Helper()
	var fe *FormatError
	if !errors.As(err, &fe) {
		t.Errorf("%s: error %v is not a *FormatError", name, err)
		return
	}
	known := false
	for _, cause := range []error{ErrCorrupt, ErrUnsupported, ErrChecksum, io.ErrUnexpectedEOF} {
		known = known || errors.Is(err, cause)
	}
	if !known || fe.hint() == "" || fe.Msg == "" {
		t.Errorf("%s: unclear error %q", name, err)
	}
}

// checkDeclaredCounts compares a file decoded without a reference server
// with the key counts its writer declared (RESIZEDB), when it has them.
func checkDeclaredCounts(t *testing.T, name string, f decodedFile) {
	t.Helper()
	if !f.meta.Complete {
		t.Errorf("%s: decoded without error but incomplete", name)
	}
	perDB := map[int]uint64{}
	for _, r := range f.recs {
		perDB[r.DB]++
	}
	for _, h := range f.meta.Resize {
		if perDB[h.DB] != h.Keys {
			t.Errorf("%s: db %d: decoded %d keys, the file declares %d", name, h.DB, perDB[h.DB], h.Keys)
		}
	}
}
