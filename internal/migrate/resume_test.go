package migrate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/keyslot"
	"github.com/keyguard/keyguard/internal/redistest"
)

// killer is a go-redis hook that cancels a run's context at its nth
// pipeline: before sending it (the process dies between batches) or after
// the server applied it (the process dies before it could record the batch).
type killer struct {
	mu     sync.Mutex
	n      int
	after  bool
	cancel context.CancelFunc
}

func (k *killer) arm(n int, after bool, cancel context.CancelFunc) {
	k.mu.Lock()
	k.n, k.after, k.cancel = n, after, cancel
	k.mu.Unlock()
}

// fire counts a pipeline and returns the cancel function when it is the nth.
func (k *killer) fire() (context.CancelFunc, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.cancel == nil {
		return nil, false
	}
	k.n--
	if k.n > 0 {
		return nil, false
	}
	cancel := k.cancel
	k.cancel = nil
	return cancel, k.after
}

func (k *killer) DialHook(next redis.DialHook) redis.DialHook { return next }
func (k *killer) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return next
}

func (k *killer) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		cancel, after := k.fire()
		if cancel == nil {
			return next(ctx, cmds)
		}
		if after {
			next(ctx, cmds)
		}
		cancel()
		return context.Canceled
	}
}

var _ redis.Hook = (*killer)(nil)

// withHook returns a new client to the same server with hook h.
func withHook(t *testing.T, rdb redis.UniversalClient, h redis.Hook) redis.UniversalClient {
	var c redis.UniversalClient
	switch x := rdb.(type) {
	case *redis.Client:
		c = redis.NewClient(x.Options())
	case *redis.ClusterClient:
		c = redis.NewClusterClient(x.Options())
	}
	c.AddHook(h)
	t.Cleanup(func() { c.Close() })
	return c
}

func readState(t *testing.T, path string) *stateFile {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var st stateFile
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	return &st
}

// TestResumeAfterKill interrupts copy and cleanup at several points, before
// and after a batch reached the server, and by MaxKeys, resumes each from
// its cursor file, and checks the end state is the one an uninterrupted run
// gives: every new key a copy of its old key, every old key gone after
// cleanup, and counts that add up.
func testResumeAfterKill(t *testing.T, ctx context.Context, tg target) {
	const n = 400
	k := &killer{}
	tg.rdb = withHook(t, tg.rdb, k)
	fill(t, ctx, tg.rdb, "hash", n)
	p := plan(t, "old:hash:{id}", "new:hash:{id}")
	dir := t.TempDir()
	for _, op := range []string{opCopy, opCleanup} {
		cursor := filepath.Join(dir, op+".json")
		opts := Options{CursorFile: cursor, CheckpointEvery: 40, Batch: 25, KeepTTL: op == opCopy} // exact copies, compared below
		run := func(ctx context.Context, opts Options) (*Result, error) {
			if op == opCopy {
				return p.Copy(ctx, tg.rdb, opts)
			}
			return p.Cleanup(ctx, tg.rdb, opts)
		}
		var last *Result
		// Cleanup: the old keys gone but not counted as removed. A run cut
		// short leaves uncounted the keys of the batches it was in the
		// middle of, at most one per master (a Cluster batch is whole
		// slots, so it may hold more keys than Batch); a run that ends
		// leaves none.
		lost := int64(0)
		masters := int64(1)
		if tg.cluster {
			masters = 3
		}
		account := func(res *Result, finished bool) {
			if op != opCleanup {
				return
			}
			gone := int64(0)
			for i := range n {
				if tg.rdb.Exists(ctx, fmt.Sprintf("old:hash:%d", i)).Val() == 0 {
					gone++
				}
			}
			now := gone - res.Counts.Removed
			if grew := now - lost; grew < 0 || finished && grew != 0 || grew > masters*2*int64(opts.Batch) {
				t.Errorf("%s: %d old keys gone, %d counted removed: %d more uncounted after a run (finished %v)", op, gone, res.Counts.Removed, grew, finished)
			}
			lost = now
		}
		for i, cut := range []int{2, 3, 5, 8} {
			rctx, cancel := context.WithCancel(ctx)
			k.arm(cut, i%2 == 1, cancel)
			res, err := run(rctx, opts)
			cancel()
			if err != nil {
				t.Fatalf("%s cut at %d: %v", op, cut, err)
			}
			if res.Complete || res.Stopped != "interrupted" {
				t.Fatalf("%s cut at pipeline %d: complete=%v stopped=%q", op, cut, res.Complete, res.Stopped)
			}
			if i > 0 && res.ResumedOf != cursor {
				t.Errorf("%s: resumed_from %q", op, res.ResumedOf)
			}
			account(res, false)
			last = res
		}
		st := readState(t, cursor)
		if len(st.Plans) != 1 || st.Plans[0].Complete {
			t.Fatalf("%s: cursor file %+v", op, st)
		}
		moved := false
		for _, ns := range st.Plans[0].Nodes {
			moved = moved || ns.Cursor != 0 || ns.Slots != "" || ns.Done
		}
		if !moved {
			t.Errorf("%s: the cursor file has made no progress: %+v", op, st.Plans[0].Nodes)
		}
		for range 100 { // then stops by MaxKeys, until done
			o := opts
			o.MaxKeys = 60
			res, err := run(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			account(res, res.Complete)
			if last = res; res.Complete {
				break
			}
			if res.Stopped != "max-keys" {
				t.Fatalf("%s: stopped %q", op, res.Stopped)
			}
		}
		if !last.Complete {
			t.Fatalf("%s never completed", op)
		}
		c := last.Counts
		// A batch applied by the server but not recorded is done again on
		// resume (copy: found existing) or is gone (cleanup: not counted,
		// as accounted run by run above).
		if op == opCopy && (c.Keys < n || c.Copied+c.Existing != c.Keys) || op == opCleanup && (c.Removed > n || c.Removed != n-lost) {
			t.Errorf("%s counts %+v: %d keys, %d uncounted by runs cut short", op, c, n, lost)
		}
		if op == opCopy {
			for i := range n {
				sameKey(t, ctx, tg.rdb, "hash", fmt.Sprintf("old:hash:%d", i), fmt.Sprintf("new:hash:%d", i))
			}
			v, err := p.Verify(ctx, tg.rdb, Options{})
			if err != nil || v.Counts.Verified != n {
				t.Fatalf("verify after resumed copy %+v %v", v.Counts, err)
			}
		}
		again, err := run(ctx, opts)
		if err != nil || !again.Complete || !strings.Contains(strings.Join(again.Notes, " "), "finished") {
			t.Errorf("%s rerun on a finished cursor file: %+v %v", op, again, err)
		}
	}
	for i := range n {
		if tg.rdb.Exists(ctx, fmt.Sprintf("old:hash:%d", i)).Val() != 0 || tg.rdb.Exists(ctx, fmt.Sprintf("new:hash:%d", i)).Val() != 1 {
			t.Fatalf("after cleanup: old:hash:%d exists or new:hash:%d is gone", i, i)
		}
	}
}

// TestResumeAfterServerRestart: a cursor is only good on the process that
// gave it, so a master that restarted is scanned again from the start.
func TestResumeAfterServerRestart(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	fill(t, ctx, rdb, "string", 200)
	p := plan(t, "old:string:{id}", "new:string:{id}")
	cursor := filepath.Join(t.TempDir(), "c.json")
	res, err := p.Copy(ctx, rdb, Options{CursorFile: cursor, MaxKeys: 50, Batch: 10})
	if err != nil || res.Complete {
		t.Fatalf("%+v %v", res, err)
	}
	if err := rdb.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	srv.Restart(t)
	res, err = p.Copy(ctx, rdb, Options{CursorFile: cursor})
	if err != nil || !res.Complete {
		t.Fatalf("%+v %v", res, err)
	}
	if !strings.Contains(strings.Join(res.Notes, " "), "restarted") {
		t.Errorf("notes %q", res.Notes)
	}
	if res.Counts.Keys != 200 || res.Counts.Copied+res.Counts.Existing != 200 {
		t.Errorf("counts %+v", res.Counts)
	}
}

// TestNodeDown: a master that goes away mid-run fails the run with the
// address, and the cursor file keeps what was done.
func TestNodeDown(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	fill(t, ctx, rdb, "string", 300)
	p := plan(t, "old:string:{id}", "new:string:{id}")
	cursor := filepath.Join(t.TempDir(), "c.json")
	var once sync.Once
	res, err := p.Copy(ctx, rdb, Options{CursorFile: cursor, Batch: 10, Rate: 2000, ProgressEvery: 1,
		Progress: func(pr Progress) {
			if pr.Counts.Keys >= 50 {
				once.Do(srv.Kill)
			}
		}})
	var ne net.Error
	if err == nil || res.Complete || !strings.Contains(err.Error(), srv.Addr) || (!errors.As(err, &ne) && !strings.Contains(err.Error(), "refused") && !strings.Contains(err.Error(), "EOF")) {
		t.Fatalf("copy with the server killed: %+v, %v", res, err)
	}
	if !strings.HasPrefix(res.Stopped, "error:") {
		t.Errorf("stopped %q", res.Stopped)
	}
	if st := readState(t, cursor); st.Plans[0].Nodes[0].Counts.Keys == 0 {
		t.Errorf("the cursor file lost the work done: %+v", st.Plans[0].Nodes[0])
	}
}

// TestNodeDownAtStart: a server that cannot be reached before the first
// key fails the run with the address, and the result says why it stopped
// (it said "STOPPED ()").
func TestNodeDownAtStart(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	p := plan(t, "old:string:{id}", "new:string:{id}")
	srv.Stop()
	res, err := p.Verify(ctx, rdb, Options{})
	if err == nil || res == nil || res.Complete || !strings.Contains(err.Error(), srv.Addr) {
		t.Fatalf("verify with the server down: %+v, %v", res, err)
	}
	if !strings.HasPrefix(res.Stopped, "error: ") || !strings.Contains(res.Stopped, srv.Addr) {
		t.Errorf("stopped %q", res.Stopped)
	}
}

// pipelineCut is a go-redis hook that cancels a run right after the
// server applied the first pipeline whose first command at picks out: the
// run stops in the middle of that batch.
type pipelineCut struct {
	mu     sync.Mutex
	at     func(args []any) bool
	cancel context.CancelFunc
}

func (k *pipelineCut) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (k *pipelineCut) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (k *pipelineCut) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		k.mu.Lock()
		defer k.mu.Unlock()
		// (a NOSCRIPT reply is a first attempt the server did not apply)
		if k.cancel == nil || cmds[0].Err() != nil || !k.at(cmds[0].Args()) {
			return err
		}
		k.cancel()
		k.cancel = nil
		return context.Canceled
	}
}

// tombCut cuts a cleanup once the server applied its first pipeline that
// moves old keys to tombstones: the run dies before it could check their
// new keys again.
func tombCut() *pipelineCut {
	return &pipelineCut{at: func(args []any) bool {
		s := fmt.Sprint(args...)
		return strings.HasPrefix(s, "evalsha") && strings.Contains(s, TombPrefix)
	}}
}

// deleteCut cuts a cleanup once the server applied its first pipeline of
// a script among shas (those that delete old keys, or move them to
// tombstones).
func deleteCut(shas ...string) *pipelineCut {
	return &pipelineCut{at: func(args []any) bool {
		return len(args) > 1 && fmt.Sprint(args[0]) == "evalsha" && slices.Contains(shas, fmt.Sprint(args[1]))
	}}
}

// testCleanupCutMidBatch: a cleanup cut once its first batch deleted old
// keys (one server) or moved them to tombstones (a Cluster) says in a
// note how many keys that batch held, at least as many as the old keys
// gone that its counts leave out.
func testCleanupCutMidBatch(t *testing.T, ctx context.Context, tg target) {
	const n = 200
	fill(t, ctx, tg.rdb, "string", n)
	p := plan(t, "old:string:{id}", "new:string:{id}")
	if _, err := p.Copy(ctx, tg.rdb, Options{KeepTTL: true}); err != nil {
		t.Fatal(err)
	}
	sc := newScripts()
	k := deleteCut(sc.unlink.sha, sc.tomb.sha)
	rdb := withHook(t, tg.rdb, k)
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	k.mu.Lock()
	k.cancel = cancel
	k.mu.Unlock()
	res, err := p.Cleanup(rctx, rdb, Options{Batch: 20})
	if err != nil || res.Complete {
		t.Fatalf("cut cleanup: complete=%v %v", res.Complete, err)
	}
	gone := 0
	for i := range n {
		if tg.rdb.Exists(ctx, fmt.Sprintf("old:string:%d", i)).Val() == 0 {
			gone++
		}
	}
	unfinished := -1
	for _, note := range res.Notes {
		if _, err := fmt.Sscanf(note, "the run stopped in the middle of a batch: up to %d keys", &unfinished); err == nil {
			break
		}
	}
	t.Logf("%d old keys gone, %d counted removed, the note says up to %d more: %q", gone, res.Counts.Removed, unfinished, res.Notes)
	if gone == 0 || unfinished <= 0 || res.Counts.Removed+int64(unfinished) < int64(gone) {
		t.Errorf("cut cleanup: %d old keys gone, %d counted removed, up to %d unfinished: %q", gone, res.Counts.Removed, unfinished, res.Notes)
	}
	if tomb := strings.Contains(strings.Join(res.Notes, "\n"), "tombstones"); tomb != tg.cluster {
		t.Errorf("cut cleanup on a Cluster %v: the note speaks of tombstones %v: %q", tg.cluster, tomb, res.Notes)
	}
}

// testCleanupCutAfterTombstones cuts a cleanup between moving old keys to
// their tombstones and checking their new keys again, deletes some of
// those new keys, and resumes: the resumed run must find the tombstones
// and put back the old keys whose new key is gone, with value and expiry.
// A later full run does the same for a new key deleted within the grace
// period. No key may ever have both copies gone. (On one server there are
// no tombstones: the same cut must simply resume to the end.)
func testCleanupCutAfterTombstones(t *testing.T, ctx context.Context, tg target) {
	const n = 300
	k := tombCut()
	rdb := withHook(t, tg.rdb, k)
	fill(t, ctx, rdb, "string", n)
	p := plan(t, "old:string:{id}", "new:string:{id}")
	if _, err := p.Copy(ctx, rdb, Options{KeepTTL: true}); err != nil {
		t.Fatal(err)
	}
	deadline := make([]int64, n)
	for i := range n {
		deadline[i] = pexpiretime(ctx, rdb, fmt.Sprintf("old:string:%d", i))
	}
	cursor := filepath.Join(t.TempDir(), "cleanup.json")
	opts := Options{CursorFile: cursor, Batch: 20}
	rctx, cancel := context.WithCancel(ctx)
	k.mu.Lock()
	k.cancel = cancel
	k.mu.Unlock()
	res, err := p.Cleanup(rctx, rdb, opts)
	cancel()
	if err != nil || res.Complete != !tg.cluster { // one server: nothing to cut
		t.Fatalf("cut cleanup: complete=%v %v", res.Complete, err)
	}
	// The tombstones left, and which of them the resumed run walks again
	// (those in slots the cursor file does not hold as done).
	done := map[int]bool{}
	for _, s := range report.ParseSlotRanges(readState(t, cursor).Plans[0].Nodes[0].Slots) {
		done[s] = true
	}
	var again, later []int
	for i := range n {
		old := fmt.Sprintf("old:string:%d", i)
		if rdb.Exists(ctx, (&cleaner{}).tombs.name(old, false, deadline[i])).Val() == 1 {
			if done[keyslot.Slot(old)] {
				later = append(later, i)
			} else {
				again = append(again, i)
			}
		}
	}
	if !tg.cluster {
		if len(again)+len(later) != 0 {
			t.Fatalf("%d tombstones on one server", len(again)+len(later))
		}
	} else if len(again) < 2 {
		t.Fatalf("the cut left %d unchecked tombstones in slots still to walk, want at least 2", len(again))
	}
	// The cut run says that a batch it stopped in the middle of may have
	// moved keys it did not count: at least as many as it left.
	unfinished := -1
	for _, note := range res.Notes {
		if _, err := fmt.Sscanf(note, "the run stopped in the middle of a batch: up to %d keys", &unfinished); err == nil {
			break
		}
	}
	if tg.cluster && unfinished < len(again)+len(later) || !tg.cluster && unfinished != -1 {
		t.Errorf("cut cleanup: %d tombstones left, notes %q", len(again)+len(later), res.Notes)
	}
	// The new keys of half of the unchecked tombstones vanish.
	var gone []int
	for x, i := range again {
		if x%2 == 0 {
			rdb.Del(ctx, fmt.Sprintf("new:string:%d", i))
			gone = append(gone, i)
		}
	}
	res, err = p.Cleanup(ctx, rdb, opts)
	if err != nil || !res.Complete {
		t.Fatalf("resumed cleanup: complete=%v %v", res.Complete, err)
	}
	if res.Counts.Restored != int64(len(gone)) || res.Counts.Rechecked != int64(len(again)-len(gone)) {
		t.Errorf("resumed cleanup: %+v; want %d restored, %d rechecked", res.Counts, len(gone), len(again)-len(gone))
	}
	put := func(is []int) {
		t.Helper()
		for _, i := range is {
			old := fmt.Sprintf("old:string:%d", i)
			if v := rdb.Get(ctx, old).Val(); v != "value-"+strconv.Itoa(i) {
				t.Errorf("%s = %q after its new key vanished, want it back", old, v)
			} else if d := pexpiretime(ctx, rdb, old); d != deadline[i] {
				t.Errorf("%s back with deadline %d, had %d", old, d, deadline[i])
			}
		}
	}
	put(gone)
	if !tg.cluster {
		return
	}
	// Within the grace period a new key vanishes after a complete run: a
	// full run (no cursor) finds every tombstone and puts that one back.
	victim := again[1]
	if len(later) > 0 {
		victim = later[0]
	}
	rdb.Del(ctx, fmt.Sprintf("new:string:%d", victim))
	res, err = p.Cleanup(ctx, rdb, Options{Batch: 20})
	if err != nil || !res.Complete || res.Counts.Restored != 1 || res.Counts.Mismatched != int64(len(gone))+1 {
		t.Errorf("full cleanup: %+v %v; want 1 restored and %d not verifying", res.Counts, err, len(gone)+1)
	}
	put([]int{victim})
	for i := range n {
		old, nw := fmt.Sprintf("old:string:%d", i), fmt.Sprintf("new:string:%d", i)
		if rdb.Exists(ctx, old).Val() == 0 && rdb.Exists(ctx, nw).Val() == 0 {
			t.Errorf("%s and %s are both gone", old, nw)
		}
	}

	// Moved fields: after a complete cleanup the fields sit in tombstones;
	// one new hash loses the field, and the next cleanup puts it back into
	// the old hash, which kept its other fields.
	fp := plan(t, "promo:sku:{skuId:int}", "order:sku:{skuId:int}:settle-preview", "couponAmount")
	for i := range 30 {
		rdb.HSet(ctx, fmt.Sprintf("promo:sku:%d", i), "couponAmount", i, "x", "y")
	}
	if _, err := fp.Copy(ctx, rdb, Options{}); err != nil {
		t.Fatal(err)
	}
	if res, err := fp.Cleanup(ctx, rdb, Options{Batch: 10}); err != nil || res.Counts.Tombstoned == 0 {
		t.Fatalf("fields cleanup: %+v %v", res.Counts, err)
	}
	var moved []int
	for i := range 30 {
		if rdb.HExists(ctx, fmt.Sprintf("promo:sku:%d", i), "couponAmount").Val() {
			t.Fatalf("promo:sku:%d kept the moved field", i)
		}
		if keyslot.Slot(fmt.Sprintf("promo:sku:%d", i)) != keyslot.Slot(fmt.Sprintf("order:sku:%d:settle-preview", i)) {
			moved = append(moved, i)
		}
	}
	rdb.HDel(ctx, fmt.Sprintf("order:sku:%d:settle-preview", moved[0]), "couponAmount")
	res, err = fp.Cleanup(ctx, rdb, Options{Batch: 10})
	if err != nil || res.Counts.Restored != 1 || res.Counts.Rechecked != int64(len(moved)-1) {
		t.Errorf("fields cleanup again: %+v %v; want 1 restored, %d rechecked", res.Counts, err, len(moved)-1)
	}
	if v := rdb.HGet(ctx, fmt.Sprintf("promo:sku:%d", moved[0]), "couponAmount").Val(); v != strconv.Itoa(moved[0]) {
		t.Errorf("promo:sku:%d couponAmount = %q after its new field vanished, want it back", moved[0], v)
	}
}
