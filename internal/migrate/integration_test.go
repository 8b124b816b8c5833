package migrate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/redistest"
)

// target is a server under test: standalone or a 3-master Cluster.
type target struct {
	name    string
	rdb     redis.UniversalClient
	cluster bool
}

// targets starts a standalone server and a Cluster.
func targets(t *testing.T) []target {
	t.Helper()
	srv := redistest.Start(t)
	c := redistest.StartCluster(t, 3)
	return []target{{"standalone", srv.Client(t), false}, {"cluster", c.Client(t), true}}
}

// TestIntegration runs the scenarios against one standalone server and one
// 3-master Cluster, emptied (FLUSHALL, CONFIG RESETSTAT) before each.
func TestIntegration(t *testing.T) {
	ctx := context.Background()
	tgs := targets(t)
	for _, sc := range []struct {
		name string
		fn   func(*testing.T, context.Context, target)
	}{
		{"CopyEveryType", testCopyEveryType},
		{"CopySameSlotUsesCopy", testCopySameSlotUsesCopy},
		{"CopyNeverOverwrites", testCopyNeverOverwrites},
		{"CopyTTLPolicy", testCopyTTLPolicy},
		{"CopyCountsWhatDoesNotFit", testCopyCountsWhatDoesNotFit},
		{"ExpiredDuringCopy", testExpiredDuringCopy},
		{"MovedFields", testMovedFields},
		{"CleanupRemovesExactlyVerified", testCleanupRemovesExactlyVerified},
		{"CleanupLeavesChangedKeys", testCleanupLeavesChangedKeys},
		{"CleanupNewKeyChanged", testCleanupNewKeyChanged},
		{"ScriptsReloaded", testScriptsReloaded},
		{"ResumeAfterKill", testResumeAfterKill},
		{"CleanupCutAfterTombstones", testCleanupCutAfterTombstones},
		{"CleanupCutMidBatch", testCleanupCutMidBatch},
	} {
		for _, tg := range tgs {
			t.Run(sc.name+"/"+tg.name, func(t *testing.T) {
				nodes, err := discover(ctx, tg.rdb)
				if err != nil {
					t.Fatal(err)
				}
				for _, n := range nodes {
					if err := n.c.FlushAll(ctx).Err(); err != nil {
						t.Fatal(err)
					}
					n.c.ConfigResetStat(ctx)
				}
				sc.fn(t, ctx, tg)
			})
		}
	}
}

func plan(t testing.TB, from, to string, fields ...string) *Plan {
	t.Helper()
	p, err := NewPlan(testRegistry(t), from, to, PlanOptions{Fields: fields})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// fill writes n keys of typ under "old:<typ>:<i>", every third without a
// TTL, the others with TTLs of hours (ms precision). Hashes and sets of
// every tenth key are big enough for the server's hash-table encoding.
func fill(t testing.TB, ctx context.Context, rdb redis.UniversalClient, typ string, n int) {
	t.Helper()
	for i := range n {
		k := fmt.Sprintf("old:%s:%d", typ, i)
		big := i%10 == 0
		var err error
		switch typ {
		case "string":
			err = rdb.Set(ctx, k, "value-"+strconv.Itoa(i), 0).Err()
		case "hash":
			m := map[string]any{"a": i, "b": "x"}
			if big {
				for f := range 200 {
					m["f"+strconv.Itoa(f)] = f
				}
			}
			err = rdb.HSet(ctx, k, m).Err()
		case "list":
			err = rdb.RPush(ctx, k, "a", i, "c", "a").Err()
		case "set":
			members := []any{1, 2, i}
			if big {
				for f := range 600 {
					members = append(members, "m"+strconv.Itoa(f))
				}
			}
			err = rdb.SAdd(ctx, k, members...).Err()
		case "zset":
			err = rdb.ZAdd(ctx, k, redis.Z{Score: 1.5, Member: "a"}, redis.Z{Score: float64(i), Member: "b"}).Err()
		case "stream":
			err = fillStream(ctx, rdb, k, i)
		}
		if err != nil {
			t.Fatalf("fill %s: %v", k, err)
		}
		if i%3 != 0 {
			if err := rdb.PExpire(ctx, k, time.Duration(i+1)*time.Hour+time.Duration(i)*time.Millisecond).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// fillStream writes entries, two consumer groups, pending entries of two
// consumers, one acknowledged entry and one deleted entry.
func fillStream(ctx context.Context, rdb redis.UniversalClient, k string, i int) error {
	for e := range 5 {
		if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: k, Values: []any{"n", e, "i", i}}).Err(); err != nil {
			return err
		}
	}
	if err := rdb.XGroupCreate(ctx, k, "g1", "0").Err(); err != nil {
		return err
	}
	if err := rdb.XGroupCreate(ctx, k, "g2", "$").Err(); err != nil {
		return err
	}
	got, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g1", Consumer: "c1", Streams: []string{k, ">"}, Count: 2}).Result()
	if err != nil {
		return err
	}
	if err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g1", Consumer: "c2", Streams: []string{k, ">"}, Count: 1}).Err(); err != nil {
		return err
	}
	if err := rdb.XAck(ctx, k, "g1", got[0].Messages[0].ID).Err(); err != nil {
		return err
	}
	return rdb.XDel(ctx, k, got[0].Messages[1].ID).Err()
}

var types = []string{"string", "hash", "list", "set", "zset", "stream"}

func testCopyEveryType(t *testing.T, ctx context.Context, tg target) {
	for _, typ := range types {
		fill(t, ctx, tg.rdb, typ, 30)
		p := plan(t, "old:"+typ+":{id}", "new:"+typ+":{id}")
		res, err := p.Copy(ctx, tg.rdb, Options{Batch: 7, KeepTTL: true}) // exact copies: testCopyTTLPolicy has the policy
		if err != nil {
			t.Fatal(err)
		}
		if !res.Complete || res.Counts.Keys != 30 || res.Counts.Copied != 30 {
			t.Errorf("%s: %+v", typ, res)
		}
		for i := range 30 {
			old, nw := fmt.Sprintf("old:%s:%d", typ, i), fmt.Sprintf("new:%s:%d", typ, i)
			sameKey(t, ctx, tg.rdb, typ, old, nw)
		}
		vres, err := p.Verify(ctx, tg.rdb, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if vres.Counts.Verified != 30 || vres.Counts.Mismatched != 0 {
			t.Errorf("%s: verify %+v %v", typ, vres.Counts, vres.Mismatches)
		}
	}
	if tg.cluster {
		// Every pair is in two slots here: the copies went through RESTORE.
		if n := commandCalls(t, ctx, tg.rdb, "restore"); n < 6*30 {
			t.Errorf("%d RESTOREs on the Cluster, want at least %d", n, 6*30)
		}
	} else if n := commandCalls(t, ctx, tg.rdb, "copy"); n < 6*30 {
		t.Errorf("%d COPYs on the server, want at least %d", n, 6*30)
	}
}

// sameKey checks that nw is an exact copy of old: type, value (digest of
// a read with the type's commands) and expiry within 5 ms.
func sameKey(t *testing.T, ctx context.Context, rdb redis.UniversalClient, typ, old, nw string) {
	t.Helper()
	for _, k := range []string{old, nw} {
		if got := rdb.Type(ctx, k).Val(); got != typ {
			t.Fatalf("%s is a %q, want %s", k, got, typ)
		}
	}
	a, err := digest(ctx, rdb, old, typ)
	if err != nil {
		t.Fatal(err)
	}
	b, err := digest(ctx, rdb, nw, typ)
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) {
		t.Errorf("%s and %s hold different values", old, nw)
	}
	ea, eb := rdb.PExpireTime(ctx, old).Val(), rdb.PExpireTime(ctx, nw).Val()
	if (ea < 0) != (eb < 0) || (ea-eb).Abs() > 5*time.Millisecond {
		t.Errorf("%s expires at %v, %s at %v", old, ea, nw, eb)
	}
}

// commandCalls sums INFO commandstats calls of cmd over every master.
func commandCalls(t testing.TB, ctx context.Context, rdb redis.UniversalClient, cmd string) int {
	t.Helper()
	nodes, err := discover(ctx, rdb)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, n := range nodes {
		info := n.c.Info(ctx, "commandstats").Val()
		for line := range strings.Lines(info) {
			if rest, ok := strings.CutPrefix(line, "cmdstat_"+cmd+":calls="); ok {
				v, _ := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
				total += v
			}
		}
	}
	return total
}

func testCopySameSlotUsesCopy(t *testing.T, ctx context.Context, tg target) {
	if !tg.cluster {
		t.Skip("on one server every copy is a COPY")
	}
	rdb := tg.rdb
	for i := range 50 {
		rdb.Set(ctx, fmt.Sprintf("tag:{u%d}:old", i), i, time.Hour)
	}
	res, err := plan(t, "tag:{{u{id}}}:old", "tag:{{u{id}}}:new").Copy(ctx, rdb, Options{})
	if err != nil || res.Counts.Copied != 50 {
		t.Fatalf("%+v %v", res, err)
	}
	if n := commandCalls(t, ctx, rdb, "copy"); n != 50 {
		t.Errorf("%d COPYs, want 50", n)
	}
	if n := commandCalls(t, ctx, rdb, "restore"); n != 0 {
		t.Errorf("%d RESTOREs, want none", n)
	}
	for i := range 50 {
		sameKey(t, ctx, rdb, "string", fmt.Sprintf("tag:{u%d}:old", i), fmt.Sprintf("tag:{u%d}:new", i))
	}
}

func testCopyNeverOverwrites(t *testing.T, ctx context.Context, tg target) {
	rdb := tg.rdb
	for i := range 20 {
		rdb.HSet(ctx, fmt.Sprintf("old:hash:%d", i), "v", "old")
	}
	for i := range 5 { // a dual-writer got there first
		rdb.HSet(ctx, fmt.Sprintf("new:hash:%d", i), "v", "newer")
	}
	p := plan(t, "old:hash:{id}", "new:hash:{id}")
	dry, err := p.Copy(ctx, rdb, Options{DryRun: true})
	if err != nil || dry.Counts.Copied != 15 || dry.Counts.Existing != 5 || !dry.DryRun {
		t.Fatalf("dry run %+v %v", dry.Counts, err)
	}
	if n := rdb.Exists(ctx, "new:hash:10").Val(); n != 0 {
		t.Fatal("the dry run wrote")
	}
	res, err := p.Copy(ctx, rdb, Options{})
	if err != nil || res.Counts.Copied != 15 || res.Counts.Existing != 5 {
		t.Fatalf("%+v %v", res.Counts, err)
	}
	for i := range 20 {
		want := "old"
		if i < 5 {
			want = "newer"
		}
		if got := rdb.HGet(ctx, fmt.Sprintf("new:hash:%d", i), "v").Val(); got != want {
			t.Errorf("new:hash:%d holds %q, want %q", i, got, want)
		}
	}
	v, err := p.Verify(ctx, rdb, Options{})
	if err != nil || v.Counts.Mismatched != 5 || len(v.Mismatches) != 5 || v.Mismatches[0].Kind != MismatchContent {
		t.Errorf("verify %+v %v %v", v.Counts, v.Mismatches, err)
	}
	res, err = p.Copy(ctx, rdb, Options{Overwrite: true})
	if err != nil || res.Counts.Copied != 20 {
		t.Fatalf("overwrite %+v %v", res.Counts, err)
	}
	if got := rdb.HGet(ctx, "new:hash:1", "v").Val(); got != "old" {
		t.Errorf("--overwrite left %q", got)
	}
}

func testCopyCountsWhatDoesNotFit(t *testing.T, ctx context.Context, tg target) {
	rdb := tg.rdb
	rdb.Set(ctx, "old:any:12", "a", 0)
	rdb.Set(ctx, "old:any:abc", "b", 0)
	rdb.HSet(ctx, "old:any:7", "wrong", "type")
	rdb.Set(ctx, "old:any:x:y", "not the template", 0)
	p := plan(t, "old:any:{id}", "new:int:{id:int}")
	res, err := p.Copy(ctx, rdb, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// SCAN … TYPE string leaves the hash out; the copy gets the new template's TTL.
	want := Counts{Scanned: 3, Keys: 2, Copied: 1, NotFit: 1, TTLSet: 1}
	if res.Counts != want {
		t.Errorf("counts %+v, want %+v", res.Counts, want)
	}
	v, err := p.Verify(ctx, rdb, Options{})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, m := range v.Mismatches {
		kinds[m.Kind] = true
	}
	if v.Counts.Mismatched != 2 || !kinds[MismatchNotFit] || !kinds[MismatchWrongType] {
		t.Errorf("verify %+v %+v", v.Counts, v.Mismatches)
	}
}

// testExpiredDuringCopy drives a batch whose old keys are gone or expire
// between SCAN and the copy: they count as expired, not errors.
func testExpiredDuringCopy(t *testing.T, ctx context.Context, tg target) {
	p := plan(t, "old:string:{id}", "new:string:{id}")
	for _, opts := range []Options{{}, {Overwrite: true}, {DryRun: true}} {
		j := newJob(opCopy, p, tg.rdb, opts)
		c := &copier{j: j, sc: newScripts()}
		tg.rdb.Set(ctx, "old:string:3", "v", time.Millisecond)
		tg.rdb.Set(ctx, "tag:{u4}:old", "v", time.Millisecond)
		time.Sleep(5 * time.Millisecond)
		var n Counts
		pairs := []pair{
			{old: "old:string:1", new: "new:string:1", same: !tg.cluster},
			{old: "tag:{u2}:old", new: "tag:{u2}:new", same: true},
			{old: "old:string:3", new: "new:string:3", same: !tg.cluster},
			{old: "tag:{u4}:old", new: "tag:{u4}:new", same: true},
		}
		if err := c.batch(ctx, pairs, &n); err != nil {
			t.Fatal(err)
		}
		if n != (Counts{Expired: 4}) {
			t.Errorf("%+v: gone keys counted %+v", opts, n)
		}
	}
}

func testMovedFields(t *testing.T, ctx context.Context, tg target) {
	rdb := tg.rdb
	// The incident: the promo team's activity and the order team's preview in one hash.
	rdb.HSet(ctx, "promo:sku:1001", "__ns__", "promo-team", "activityId", "12345", "couponAmount", "10", "promoTotal", "30")
	rdb.Expire(ctx, "promo:sku:1001", time.Hour)
	rdb.HSet(ctx, "promo:sku:1002", "activityId", "12346") // promo only
	rdb.HSet(ctx, "promo:sku:1003", "couponAmount", "5")   // order only, no TTL
	p := plan(t, "promo:sku:{skuId:int}", "order:sku:{skuId:int}:settle-preview", "couponAmount", "promoTotal")
	res, err := p.Copy(ctx, rdb, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := (Counts{Scanned: 3, Keys: 3, Copied: 2, NoFields: 1}); res.Counts != want {
		t.Errorf("copy %+v, want %+v", res.Counts, want)
	}
	got := rdb.HGetAll(ctx, "order:sku:1001:settle-preview").Val()
	if len(got) != 2 || got["couponAmount"] != "10" || got["promoTotal"] != "30" {
		t.Errorf("new hash %v", got)
	}
	// TTL: the old key's remaining hour, capped at the new template's 5m.
	if ttl := rdb.PTTL(ctx, "order:sku:1001:settle-preview").Val(); ttl <= 4*time.Minute || ttl > 5*time.Minute {
		t.Errorf("new TTL %v, want 5m", ttl)
	}
	if ttl := rdb.PTTL(ctx, "order:sku:1003:settle-preview").Val(); ttl <= 4*time.Minute {
		t.Errorf("new TTL of a key without one %v, want 5m", ttl)
	}
	rdb.HSet(ctx, "order:sku:1003:settle-preview", "couponAmount", "6") // newer, or a bug: not verified
	v, err := p.Verify(ctx, rdb, Options{})
	if err != nil || v.Counts.Verified != 1 || v.Counts.Mismatched != 1 || v.Counts.NoFields != 1 {
		t.Fatalf("verify %+v %+v %v", v.Counts, v.Mismatches, err)
	}
	if m := v.Mismatches[0]; m.Old != "promo:sku:1003" || !strings.Contains(m.Detail, `old "5", new "6"`) {
		t.Errorf("mismatch %+v", m)
	}
	cl, err := p.Cleanup(ctx, rdb, Options{})
	if err != nil || cl.Counts.Removed != 1 || cl.Counts.Mismatched != 1 {
		t.Fatalf("cleanup %+v %v", cl.Counts, err)
	}
	if got := rdb.HGetAll(ctx, "promo:sku:1001").Val(); len(got) != 2 || got["activityId"] != "12345" || got["__ns__"] != "promo-team" {
		t.Errorf("the promo team's hash after cleanup: %v", got)
	}
	if got := rdb.HGet(ctx, "promo:sku:1003", "couponAmount").Val(); got != "5" {
		t.Errorf("an unverified old field was deleted: %q", got)
	}
}

func testCleanupRemovesExactlyVerified(t *testing.T, ctx context.Context, tg target) {
	rdb := tg.rdb
	fill(t, ctx, rdb, "list", 40)
	p := plan(t, "old:list:{id}", "new:list:{id}")
	if _, err := p.Copy(ctx, rdb, Options{}); err != nil {
		t.Fatal(err)
	}
	rdb.Del(ctx, "new:list:1")                  // missing
	rdb.RPush(ctx, "new:list:2", "extra")       // content
	rdb.PExpire(ctx, "new:list:4", 2*time.Hour) // TTL: neither the old one nor what the new template allows
	rdb.Persist(ctx, "new:list:5")
	bad := map[string]bool{"old:list:1": true, "old:list:2": true, "old:list:4": true, "old:list:5": true}
	dry, err := p.Cleanup(ctx, rdb, Options{DryRun: true})
	if err != nil || dry.Counts.Removed != 36 || rdb.Exists(ctx, "old:list:0").Val() != 1 {
		t.Fatalf("dry run %+v %v", dry.Counts, err)
	}
	var mu sync.Mutex
	var seen []Progress
	res, err := p.Cleanup(ctx, rdb, Options{Batch: 9, ProgressEvery: time.Millisecond, Progress: func(pr Progress) {
		mu.Lock()
		seen = append(seen, pr)
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	for i, pr := range seen {
		if pr.Done < 0 || pr.Done > 1 || pr.Op != opCleanup || pr.Final != (i == len(seen)-1) {
			t.Errorf("progress %d of %d: %+v", i, len(seen), pr)
		}
	}
	if last := seen[len(seen)-1]; last.Done != 1 || last.Counts.Removed != 36 {
		t.Errorf("final progress %+v", last)
	}
	mu.Unlock()
	if res.Counts.Removed != 36 || res.Counts.Mismatched != 4 || res.Counts.Verified != 36 {
		t.Errorf("cleanup %+v", res.Counts)
	}
	for i := range 40 {
		k := fmt.Sprintf("old:list:%d", i)
		if exists := rdb.Exists(ctx, k).Val() == 1; exists != bad[k] {
			t.Errorf("%s exists=%v after cleanup", k, exists)
		}
		if i != 1 && rdb.Exists(ctx, fmt.Sprintf("new:list:%d", i)).Val() != 1 {
			t.Errorf("new:list:%d is gone", i)
		}
	}
}

// TestCleanupLeavesChangedKeys changes old keys between the check and the
// delete: the compare-and-delete scripts keep them.
func testCleanupLeavesChangedKeys(t *testing.T, ctx context.Context, tg target) {
	rdb := tg.rdb
	rdb.Set(ctx, "old:string:1", "a", time.Hour)
	rdb.Set(ctx, "old:string:2", "b", time.Hour)
	rdb.HSet(ctx, "promo:sku:1", "couponAmount", "1", "x", "y")
	for _, p := range []*Plan{plan(t, "old:string:{id}", "new:string:{id}"), plan(t, "promo:sku:{skuId:int}", "order:sku:{skuId:int}:settle-preview", "couponAmount")} {
		if _, err := p.Copy(ctx, rdb, Options{}); err != nil {
			t.Fatal(err)
		}
	}
	p := plan(t, "old:string:{id}", "new:string:{id}")
	j := newJob(opCleanup, p, rdb, Options{})
	v := newVerifier(j)
	pairs := []pair{{old: "old:string:1", new: "new:string:1"}, {old: "old:string:2", new: "new:string:2"}}
	vs, err := v.check(ctx, pairs)
	if err != nil || vs[0].state != stOK || vs[1].state != stOK {
		t.Fatalf("%+v %v", vs, err)
	}
	rdb.Set(ctx, "old:string:1", "changed", time.Hour) // a write in between
	rdb.PExpire(ctx, "old:string:2", 2*time.Hour)      // a TTL change in between
	var c cleaner
	var calls []call
	for i, pr := range pairs {
		if tg.cluster { // two slots: the compare-and-move to a tombstone
			calls = append(calls, call{s: v.sc.tomb, keys: []string{pr.old, c.tombs.name(pr.old, false, vs[i].deadline)}, args: []any{vs[i].oldSum, vs[i].deadline, time.Hour.Milliseconds()}})
		} else {
			calls = append(calls, call{s: v.sc.unlink, keys: []string{pr.old, pr.new}, args: []any{vs[i].oldSum, vs[i].deadline, vs[i].newSum, vs[i].newDeadline, 1000}})
		}
	}
	fp := plan(t, "promo:sku:{skuId:int}", "order:sku:{skuId:int}:settle-preview", "couponAmount")
	fj := newJob(opCleanup, fp, rdb, Options{})
	fv := newVerifier(fj)
	fv.sc = v.sc
	fvs, err := fv.check(ctx, []pair{{old: "promo:sku:1", new: "order:sku:1:settle-preview"}})
	if err != nil || fvs[0].state != stOK {
		t.Fatalf("%+v %v", fvs, err)
	}
	rdb.HSet(ctx, "promo:sku:1", "couponAmount", "2")
	if tg.cluster {
		calls = append(calls, fieldsCall(v.sc.tombFields, "promo:sku:1", c.tombs.name("promo:sku:1", true, fvs[0].deadline), fp.Fields, fvs[0].vals, time.Hour.Milliseconds()))
	} else {
		calls = append(calls, fieldsCall(v.sc.hdel, "promo:sku:1", "order:sku:1:settle-preview", fp.Fields, fvs[0].vals, fvs[0].newDeadline, 1000))
	}
	cmds, err := exec(ctx, rdb, v.sc, calls)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cmds {
		if c.Val() != int64(0) {
			t.Errorf("call %d deleted a changed key: %v", i, c.Val())
		}
	}
	if rdb.Exists(ctx, "old:string:1").Val()+rdb.Exists(ctx, "old:string:2").Val() != 2 || rdb.HGet(ctx, "promo:sku:1", "couponAmount").Val() != "2" {
		t.Error("a changed old key was deleted")
	}
}

func testScriptsReloaded(t *testing.T, ctx context.Context, tg target) {
	for i := range 20 {
		tg.rdb.HSet(ctx, fmt.Sprintf("promo:sku:%d", i), "couponAmount", i, "activityId", 1)
	}
	p := plan(t, "promo:sku:{skuId:int}", "order:sku:{skuId:int}:settle-preview", "couponAmount")
	if res, err := p.Copy(ctx, tg.rdb, Options{}); err != nil || res.Counts.Copied != 20 {
		t.Fatalf("%+v %v", res, err)
	}
	loads := commandCalls(t, ctx, tg.rdb, "script|load")
	if err := tg.rdb.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	res, err := p.Cleanup(ctx, tg.rdb, Options{})
	if err != nil || res.Counts.Removed != 20 {
		t.Fatalf("after SCRIPT FLUSH: %+v %v", res, err)
	}
	if commandCalls(t, ctx, tg.rdb, "script|load") <= loads {
		t.Error("the scripts were not loaded again")
	}
}

func TestCursorFileErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte("{not json"), 0o644)
	if _, _, err := loadState(bad, opCopy); err == nil || !strings.Contains(err.Error(), "Try:") {
		t.Errorf("broken file: %v", err)
	}
	st := &stateFile{Version: stateVersion, Op: opCleanup}
	path := filepath.Join(dir, "c.json")
	if err := st.save(path); err != nil {
		t.Fatal(err)
	}
	if _, _, err := loadState(path, opCopy); err == nil || !strings.Contains(err.Error(), "cleanup") {
		t.Errorf("another op's file: %v", err)
	}
	reg := testRegistry(t)
	p, _ := NewPlan(reg, "old:string:{id}", "new:string:{id}", PlanOptions{})
	st.Op = opCopy
	if _, err := st.plan(p, &Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.plan(p, &Options{Overwrite: true}); err == nil {
		t.Error("a cursor file of a run without --overwrite resumed one with it")
	}
}

// testCopyTTLPolicy copies keys without a TTL, with one the new template
// allows and with a longer one, through COPY (one node) and RESTORE (two
// Cluster slots), into a template with ttl: 1h and a persistent one: by
// default the new keys get the expiry the template allows (counted), with
// KeepTTL the old ones (each breach listed); verify accepts both.
func testCopyTTLPolicy(t *testing.T, ctx context.Context, tg target) {
	rdb := tg.rdb
	for _, pl := range []struct{ from, to, oldKey, newKey string }{
		{"old:string:{id}", "new:string:{id}", "old:string:%d", "new:string:%d"},
		{"tag:{{u{id}}}:old", "tag:{{u{id}}}:new", "tag:{u%d}:old", "tag:{u%d}:new"},
		{"old:string:{id}", "new:persist:{id}", "old:string:%d", "new:persist:%d"},
	} {
		persistent := strings.HasPrefix(pl.to, "new:persist")
		for _, keep := range []bool{false, true} {
			flush(t, ctx, rdb)
			old := make([]int64, 3)
			for i, ttl := range []time.Duration{0, 30 * time.Minute, 5 * time.Hour} {
				k := fmt.Sprintf(pl.oldKey, i)
				rdb.Set(ctx, k, i, ttl)
				old[i] = pexpiretime(ctx, rdb, k)
			}
			p := plan(t, pl.from, pl.to)
			want := Counts{Scanned: 3, Keys: 3, Copied: 3}
			if keep {
				want.TTLBreaks = 2
			} else {
				want.TTLSet = 2
			}
			dry, err := p.Copy(ctx, rdb, Options{DryRun: true, KeepTTL: keep})
			if err != nil || dry.Counts != want {
				t.Errorf("%s keep=%v: dry run %+v, want %+v (%v)", pl.to, keep, dry.Counts, want, err)
			}
			res, err := p.Copy(ctx, rdb, Options{KeepTTL: keep})
			if err != nil || res.Counts != want || len(res.Warnings) != int(want.TTLBreaks) {
				t.Fatalf("%s keep=%v: %+v, want %+v; warnings %v (%v)", pl.to, keep, res.Counts, want, res.Warnings, err)
			}
			now := time.Now().UnixMilli()
			hour := time.Hour.Milliseconds()
			for i := range 3 {
				got := pexpiretime(ctx, rdb, fmt.Sprintf(pl.newKey, i))
				var ok bool
				switch {
				case keep:
					ok = got == old[i] || old[i] > 0 && (got-old[i]) <= 5 && (old[i]-got) <= 5
				case persistent:
					ok = got == -1
				case i == 1:
					ok = got > 0 && (got-old[i]) <= 5 && (old[i]-got) <= 5
				default: // no TTL, or longer than the template's: an hour from the copy
					ok = got > now+hour-time.Minute.Milliseconds() && got <= now+hour
				}
				if !ok {
					t.Errorf("%s keep=%v: key %d had expiry %d, its copy %d (now %d)", pl.to, keep, i, old[i], got, now)
				}
			}
			v, err := p.Verify(ctx, rdb, Options{})
			if err != nil || v.Counts.Verified != 3 || v.Counts.Mismatched != 0 {
				t.Errorf("%s keep=%v: verify %+v %v", pl.to, keep, v.Counts, v.Mismatches)
			}
		}
	}
}
