package snapshot

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/redistest"
	"github.com/keyguard/keyguard/registry"
)

// TestSnapshotParts reads one file whole and cut into 2, 3 and 4 parts
// side by side, by one aggregator and by several, which classify the
// keys: the reports are the same (but for the run's
// time), for the file as the server wrote it, damaged in its first
// half (the parts after the damage are dropped and the file is read
// again whole), and cut short.
func TestSnapshotParts(t *testing.T) {
	s := redistest.Start(t)
	ctx := context.Background()
	n := 30000
	if testing.Short() {
		n = 12000
	}
	for db := range 2 {
		c := redis.NewClient(&redis.Options{Addr: s.Addr, DB: db})
		pipe := c.Pipeline()
		for i := range n / (db*4 + 1) {
			id := strconv.Itoa(i)
			switch i % 5 {
			case 0:
				pipe.HSet(ctx, "order:order:"+id+":base", "orderId", id, "status", "PAID", "amount", "12.5")
			case 1:
				pipe.Set(ctx, "cache:product:detail:p"+id, `{"productNo":"p`+id+`","price":12,"tags":["a"]}`, time.Hour)
			case 2:
				pipe.SAdd(ctx, "promo:coupon:"+id+":users", i, i+1, i+2)
			case 3:
				pipe.Set(ctx, "auth:session:u"+id, strings.Repeat("t", 40+i%60), 2*time.Hour)
			default:
				pipe.HSet(ctx, "user:"+id+":profile", "__ns__", "user", "name", "n"+id)
				pipe.Expire(ctx, "user:"+id+":profile", time.Hour)
			}
			if i%3 == 0 { // a family whose values mostly hold no names: one in seven is JSON
				v := "blob-" + id
				if i%21 == 0 {
					v = `{"a":1,"b":"` + id + `"}`
				}
				pipe.Set(ctx, "legacy:blob:"+id, v, time.Hour)
			}
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	if err := s.Client(t).Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	reg, err := registry.Parse("r.yaml", []byte(`version: 1
domains: {order: {owner: o}, cache: {owner: c}}
keys:
  - {key: "order:order:{id:int}:base", type: hash, ttl: 1h}
  - {key: "cache:product:detail:{sku}", type: string, ttl: 1h}
`))
	if err != nil {
		t.Fatal(err)
	}
	dump, err := os.ReadFile(filepath.Join(s.Dir, "dump.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	run := func(name string, data []byte, procs, jsonRaw int) (string, *Result) {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		ins, err := Open([]string{path}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer Close(ins)
		res, err := Run(ctx, reg, ins, Options{DB: -1, Procs: procs, partBytes: int64(len(data) / 8), jsonRaw: jsonRaw})
		if err != nil {
			t.Fatal(err)
		}
		r := *res.Report
		r.StartedAt, r.DurationMS, r.State = time.Time{}, 0, nil
		var b bytes.Buffer
		if err := r.WriteJSON(&b); err != nil {
			t.Fatal(err)
		}
		// Every byte, the field censuses' counts too: the aggregator takes
		// a key's names only when it would ask for them itself, however
		// far ahead the decoders read (inventory's
		// TestFieldCensusDoesNotDependOnTheWalkersLead).
		return b.String(), res
	}
	damaged := bytes.Clone(dump)
	damaged[len(dump)/5] ^= 0x5a
	damaged[len(dump)/5+1] ^= 0x5a
	files := map[string][]byte{"whole.rdb": dump, "damaged.rdb": damaged, "short.rdb": dump[:len(dump)*3/4]}
	for name, data := range files {
		want, wantRes := run(name, data, 1, 0)
		// The whole file's census counts every profile (a hash with a name
		// beside __ns__: the i%5 == 4 keys of both databases).
		if profiles := n/5 + n/25; name == "whole.rdb" && !strings.Contains(want, fmt.Sprintf("the fields its %d values hold", profiles)) {
			t.Errorf("whole.rdb: the census of user:{id:int}:profile does not count its %d values:\n%s", profiles, want)
		}
		// The census of legacy:blob:{id:int} counts its every JSON value,
		// however many aggregators took its keys.
		if blobs := (n+20)/21 + (n/5+20)/21; name == "whole.rdb" && !strings.Contains(want, fmt.Sprintf("the fields its %d values hold", blobs)) {
			t.Errorf("whole.rdb: the census of legacy:blob:{id:int} does not count its %d JSON values:\n%s", blobs, want)
		}
		// 2 cores: one decoder, two aggregators; 4, 6 and 8 cores: 2, 3
		// and 4 parts and four aggregators, merged at the end (one core:
		// want, one of each). The aggregators read the keys of JSON
		// values (jsonRaw 0), or the decoder reads them all (-1), or only
		// those of values up to 30 bytes.
		for _, c := range []struct{ procs, jsonRaw int }{{2, 0}, {4, 0}, {6, 0}, {8, 0}, {1, -1}, {2, -1}, {4, 30}} {
			procs := c.procs
			got, res := run(name, data, procs, c.jsonRaw)
			if got != want {
				t.Errorf("%s on %d cores, JSON values handed over up to %d bytes: the report differs from the whole file's: %s", name, procs, c.jsonRaw, firstDiff(got, want))
			}
			if res.Complete != wantRes.Complete {
				t.Errorf("%s on %d cores: complete %v, whole %v", name, procs, res.Complete, wantRes.Complete)
			}
		}
		t.Logf("%s: %d bytes, complete %v, stopped %v", name, len(data), wantRes.Complete, wantRes.Stopped)
	}
	if len(dump) < 512<<10 {
		t.Fatalf("the file has %d bytes: too few to cut", len(dump))
	}
}

// firstDiff shows where two reports part: the first line that differs,
// with its number, from each.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d\n got %.600s\nwant %.600s", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("%d lines against %d", len(g), len(w))
}
