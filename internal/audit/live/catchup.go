package live

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/internal/resp"
)

// DefaultCatchUp bounds how long a replica read in its master's stead is
// waited for to apply its master's writes (Options.CatchUp).
const DefaultCatchUp = 10 * time.Second

// ReplicaBehind waits until the replica on c has applied every write its
// master (on m) had when called: its slave_repl_offset at least the
// master's master_repl_offset then, polled every 20 ms for up to wait. A
// replica behind its master answers without the keys written last (one
// attached moments before holds none of them), so a walk or a snapshot
// of it read at once would miss keys the master held when the run began.
// It returns how many bytes of writes the replica still had to apply
// when the wait ran out (or ctx ended), or 0. A master or replica whose
// INFO cannot be read, or a replica of another replication history than
// the master's (master_replid: offsets of two histories do not compare),
// is not waited for. tell, when set, is called once after a second of
// waiting with the bytes left.
func ReplicaBehind(ctx context.Context, m, c *resp.Conn, wait time.Duration, tell func(behind int64)) int64 {
	offset := func(c *resp.Conn, field string) (id string, off int64, ok bool) {
		text, err := c.Simple(ctx, "INFO", "replication")
		if err != nil {
			return "", 0, false
		}
		in := parseInfo(text)
		off, err = strconv.ParseInt(in[field], 10, 64)
		return in["master_replid"], off, err == nil
	}
	history, target, ok := offset(m, "master_repl_offset")
	if !ok {
		return 0
	}
	start := time.Now()
	told := false
	for {
		id, done, ok := offset(c, "slave_repl_offset")
		if !ok || id != history || done >= target {
			return 0
		}
		waited := time.Since(start)
		if waited >= wait {
			return target - done
		}
		if !told && waited >= time.Second && tell != nil {
			told = true
			tell(target - done)
		}
		select {
		case <-ctx.Done():
			return target - done
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// catchUp waits, at once for all, until each replica planned in its
// master's stead (--replicas) has applied the writes its master had when
// the run began, so that the walk misses none of the keys the master
// held then and still holds at its end (what a walk of the master
// promises). A replica still behind after Options.CatchUp is walked all
// the same, and the report says by how much.
func (r *run) catchUp(ctx context.Context, plans []nodePlan) {
	seen := map[string]bool{}
	var wg sync.WaitGroup
	for _, p := range plans {
		if p.of == "" || seen[p.addr] {
			continue
		}
		seen[p.addr] = true
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.replicaCaughtUp(ctx, p)
		}()
	}
	wg.Wait()
}

// replicaCaughtUp waits for the replica of plan p (see catchUp).
func (r *run) replicaCaughtUp(ctx context.Context, p nodePlan) {
	s := resp.Session{Timeout: r.opts.IOTimeout}
	m, err := r.dial(ctx, p.of, s)
	if err != nil {
		return // the walk names an unreachable node
	}
	defer m.Close()
	c, err := r.dial(ctx, p.addr, s)
	if err != nil {
		return
	}
	defer c.Close()
	wait := cmp.Or(r.opts.CatchUp, DefaultCatchUp)
	behind := ReplicaBehind(ctx, m, c, wait, func(behind int64) {
		if r.opts.Waiting != nil {
			r.opts.Waiting(fmt.Sprintf("waiting for replica %s to apply %s of its master's writes before it is walked (at most %s)", p.addr, human.Bytes(behind), human.Duration(wait)))
		}
	})
	if behind > 0 {
		r.note("--replicas: replica %s had still not applied %s of the writes its master %s had when keyguard began, after %s; keys written last on the master may be missing from this report: drop --replicas to read the master", p.addr, human.Bytes(behind), p.of, human.Duration(wait))
	}
}
