package hotkeys

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/redistest"
)

// One of two servers killed a third into the sample: the sample goes on
// on the other, and the result names the span the lost one did not see.
func TestMonitorLostNode(t *testing.T) {
	a, b := redistest.Start(t), redistest.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, s := range []*redistest.Server{a, b} {
		c := s.Client(t)
		go func() {
			for ctx.Err() == nil {
				c.Get(ctx, "cache:product:detail:P1")
				time.Sleep(time.Millisecond)
			}
		}()
	}
	const d = 1500 * time.Millisecond
	go func() {
		time.Sleep(d / 3)
		b.Kill()
	}()
	res, err := Monitor(context.Background(), &redis.Options{}, []string{a.Addr, b.Addr}, MonitorOptions{Duration: d, NoCostProbe: true})
	if err != nil {
		t.Fatal(err)
	}
	lost := res.NotObserved()
	if len(lost) != 1 || !strings.HasPrefix(lost[0], b.Addr+" from ") || res.Nodes[0].NotObserved != "" {
		t.Fatalf("not observed %q; want %s's span only (nodes %+v)", lost, b.Addr, res.Nodes)
	}
	if res.Nodes[0].Lines == 0 || res.Nodes[1].Lines == 0 {
		t.Errorf("lines %d and %d; want both before the kill", res.Nodes[0].Lines, res.Nodes[1].Lines)
	}
}
