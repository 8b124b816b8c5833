package live

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/redistest"
)

// TestSentinelFailoverDuringAudit: a master named through Sentinels that
// goes down mid-walk, its replica promoted by the Sentinel, stops the
// walk as soon as the Sentinels name the new master, saying so and to
// audit again, rather than waiting for the old one until RetryFor; the
// report counts the keys walked before. Without Target.Master the walk
// waits out RetryFor and says only that the node is down.
func TestSentinelFailoverDuringAudit(t *testing.T) {
	reg := testRegistry(t)
	ctx := context.Background()
	m, r, n := replicated(t, 20_000)
	s := redistest.StartSentinel(t, "orders", m)
	master := func(ctx context.Context) (string, error) {
		sc := redis.NewSentinelClient(&redis.Options{Addr: s.Addr})
		defer sc.Close()
		a, err := sc.GetMasterAddrByName(ctx, "orders").Result()
		if err != nil {
			return "", err
		}
		return net.JoinHostPort(a[0], a[1]), nil
	}
	progress, reached := progressAt(int64(n) / 4)
	type outcome struct {
		res *Result
		err error
	}
	done := make(chan outcome, 1)
	tg := standalone(m)
	tg.Master = master
	go func() {
		res, err := Run(ctx, reg, tg, Options{Rate: 5000, RetryFor: time.Minute, Progress: progress, ProgressEvery: 10 * time.Millisecond})
		done <- outcome{res, err}
	}()
	select {
	case <-reached:
	case o := <-done:
		t.Fatalf("the audit ended before the fault: %+v %v", o.res, o.err)
	}
	m.Kill()
	o := <-done
	if o.err != nil {
		t.Fatal(o.err)
	}
	res := o.res
	if res.Complete || len(res.Stopped) != 1 {
		t.Fatalf("complete %v, stopped %+v", res.Complete, res.Stopped)
	}
	why := res.Stopped[0].Reason
	if !strings.Contains(why, "the Sentinels now name "+r.Addr+" the master (a failover)") || !strings.Contains(why, "audit again") {
		t.Fatalf("stopped: %s", why)
	}
	if got := res.Report.Summary.Keys; got == 0 || got >= int64(n) || got != res.Stopped[0].Keys {
		t.Errorf("%d keys counted, %d said walked, of %d", got, res.Stopped[0].Keys, n)
	}
}

// TestDemotedDuringAudit: a master demoted to a replica mid-walk (a
// failover that leaves it up, as SENTINEL FAILOVER does) is walked to the
// end, complete with its keys, and the report says what happened to it.
func TestDemotedDuringAudit(t *testing.T) {
	reg := testRegistry(t)
	ctx := context.Background()
	m, r, n := replicated(t, 20_000)
	progress, reached := progressAt(int64(n) / 4)
	done := make(chan *Result, 1)
	go func() {
		res, err := Run(ctx, reg, standalone(m), Options{Rate: 5000, Progress: progress, ProgressEvery: 10 * time.Millisecond})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	<-reached
	if err := r.Client(t).Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	if err := m.Client(t).Do(ctx, "REPLICAOF", "127.0.0.1", strings.TrimPrefix(r.Addr, "127.0.0.1:")).Err(); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res == nil {
		t.FailNow()
	}
	if !res.Complete || res.Report.Summary.Keys != int64(n) || !hasNote(res.Report, m.Addr+" became a replica of "+r.Addr+" during the walk (a failover)") {
		t.Fatalf("complete %v, %d keys of %d, notes %q", res.Complete, res.Report.Summary.Keys, n, res.Report.Notes)
	}
}

// replicated starts a master holding about keys keys of the scale mix and
// a replica of it, once the replica holds them all.
func replicated(t *testing.T, keys int) (m, r *redistest.Server, n int) {
	t.Helper()
	m = redistest.Start(t)
	r = redistest.StartReplica(t, m)
	n = loadScale(t, m.Client(t), keys)
	r.WaitInfo(t, "keyspace", func(in string) bool { return strings.Contains(in, "db0:keys="+strconv.Itoa(n)+",") })
	return m, r, n
}
