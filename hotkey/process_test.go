package hotkey

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/redistest"
)

// The tests below run Caches in other processes: the test binary itself,
// started with -test.run=^TestHelperProcess$ and the role in
// KEYGUARD_HOTKEY_HELPER. Helpers talk over stdin/stdout, one line each way.

const helperEnv = "KEYGUARD_HOTKEY_HELPER"

// TestHelperProcess is not a test: it is the body of a helper process.
func TestHelperProcess(t *testing.T) {
	role := os.Getenv(helperEnv)
	if role == "" {
		t.Skip("helper process body; run by TestStampedeOnceAcrossProcesses and TestInvalidationReachesOtherProcess")
	}
	rdb := redis.NewClient(&redis.Options{Addr: os.Getenv("KEYGUARD_HOTKEY_ADDR")})
	defer rdb.Close()
	reg := testRegistry(t)
	ctx := context.Background()
	pr := prometheus.NewRegistry()
	// Generous bounds: a loaded machine must not turn a wait into a second load.
	c, err := New(ctx, reg, rdb, Options{Service: "helper-" + role, Registerer: pr, LockWait: 30 * time.Second, LoadTimeout: time.Minute})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	defer c.Close()
	in := bufio.NewScanner(os.Stdin)
	key := os.Getenv("KEYGUARD_HOTKEY_KEY")
	switch role {
	case "stampede":
		helperStampede(ctx, c, rdb, in, key)
		fmt.Println("lock", counter(t, pr, MetricLock, "result", "acquired"), counter(t, pr, MetricLock, "result", "waited"))
	case "reader":
		helperReader(ctx, c, in, key)
	}
	os.Exit(0) // skip the testing framework's output
}

// lockSpy records in test:attempted that this process tried a lock
// (SET lock:… NX), from a client of its own.
type lockSpy struct {
	rdb  *redis.Client
	once sync.Once
}

func (s *lockSpy) DialHook(next redis.DialHook) redis.DialHook { return next }
func (s *lockSpy) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (s *lockSpy) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if a := cmd.Args(); cmd.Name() == "set" && len(a) > 1 && strings.HasPrefix(fmt.Sprint(a[1]), LockPrefix) {
			s.once.Do(func() { s.rdb.SAdd(context.Background(), "test:attempted", os.Getpid()) })
		}
		return next(ctx, cmd)
	}
}

// helperStampede waits for "go", then misses key from 1,000 goroutines.
// The loader counts itself in Redis (test:loads) and locally, and returns
// only once all three processes have tried the lock, so that every
// process really misses while the load runs.
func helperStampede(ctx context.Context, c *Cache, rdb *redis.Client, in *bufio.Scanner, key string) {
	spy := &lockSpy{rdb: redis.NewClient(&redis.Options{Addr: rdb.Options().Addr})}
	defer spy.rdb.Close()
	rdb.AddHook(spy)
	var local atomic.Int64
	load := func(ctx context.Context, key string) (string, error) {
		local.Add(1)
		if err := rdb.Incr(ctx, "test:loads").Err(); err != nil {
			return "", err
		}
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if spy.rdb.SCard(ctx, "test:attempted").Val() >= 3 {
				break
			}
		}
		return "loaded", nil
	}
	fmt.Println("ready")
	in.Scan()
	var wg sync.WaitGroup
	var bad atomic.Int64
	for range 1000 {
		wg.Go(func() {
			if v, err := c.Get(ctx, key, load); err != nil || v != "loaded" {
				bad.Add(1)
			}
		})
	}
	wg.Wait()
	fmt.Println("done", local.Load(), bad.Load())
}

// helperReader answers each "get" line with the value of key.
func helperReader(ctx context.Context, c *Cache, in *bufio.Scanner, key string) {
	load := func(ctx context.Context, key string) (string, error) { return "from-loader", nil }
	for {
		v, err := c.Get(ctx, key, load)
		if err != nil {
			v = "error " + err.Error()
		}
		fmt.Println(v)
		if !in.Scan() {
			return
		}
	}
}

// helper is a running helper process.
type helper struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

func startHelper(t *testing.T, role, addr, key string) *helper {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), helperEnv+"="+role, "KEYGUARD_HOTKEY_ADDR="+addr, "KEYGUARD_HOTKEY_KEY="+key)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &helper{cmd: cmd, in: in, out: bufio.NewScanner(out)}
	t.Cleanup(func() {
		in.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	return h
}

func (h *helper) line(t *testing.T) string {
	t.Helper()
	got := make(chan string, 1)
	go func() {
		if h.out.Scan() {
			got <- h.out.Text()
		} else {
			got <- "EOF"
		}
	}()
	select {
	case s := <-got:
		return s
	case <-time.After(60 * time.Second):
		t.Fatal("helper process silent for 60 s")
		return ""
	}
}

func (h *helper) send(t *testing.T, s string) {
	t.Helper()
	if _, err := io.WriteString(h.in, s+"\n"); err != nil {
		t.Fatal(err)
	}
}

// TestStampedeOnceAcrossProcesses: three processes, 1,000 concurrent
// misses each on one key; the loader runs once in all.
func TestStampedeOnceAcrossProcesses(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	key := "cache:product:detail:P9001"
	var hs []*helper
	for range 3 {
		hs = append(hs, startHelper(t, "stampede", srv.Addr, key))
	}
	for _, h := range hs {
		if s := h.line(t); s != "ready" {
			t.Fatalf("helper: %q", s)
		}
	}
	for _, h := range hs {
		h.send(t, "go")
	}
	var total int64
	for i, h := range hs {
		f := strings.Fields(h.line(t))
		if len(f) != 3 || f[0] != "done" {
			t.Fatalf("helper %d: %v", i, f)
		}
		local, _ := strconv.ParseInt(f[1], 10, 64)
		bad, _ := strconv.ParseInt(f[2], 10, 64)
		if local > 1 {
			t.Errorf("process %d called the loader %d times, want at most 1", i, local)
		}
		if bad != 0 {
			t.Errorf("process %d: %d Gets failed or returned another value", i, bad)
		}
		total += local
		// The lock line: acquired and waited. The process that loaded held
		// the lock; one that did not load either waited for it, or took it
		// after the loader released it and found the value already stored.
		l := strings.Fields(h.line(t))
		if len(l) != 3 || l[0] != "lock" || (local == 0 && l[1] != "1" && l[2] != "1") || (local == 1 && l[1] != "1") {
			t.Errorf("process %d (loads %d): lock acquired/waited %v", i, local, l)
		}
	}
	n, err := rdb.Get(context.Background(), "test:loads").Int64()
	if err != nil || n != 1 || total != 1 {
		t.Fatalf("loader ran %d times (Redis count %d, %v) across 3 processes × 1000 misses, want 1", total, n, err)
	}
}

// TestInvalidationReachesOtherProcess: a key cached in another process's
// local tier (local_ttl 1h) changes there after a write here.
func TestInvalidationReachesOtherProcess(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	key := "config:switch:seckill"
	h := startHelper(t, "reader", srv.Addr, key)
	if s := h.line(t); s != "from-loader" {
		t.Fatalf("helper's first read: %q", s)
	}
	c, _ := newCache(t, testRegistry(t), srv.Client(t), Options{})
	if err := c.Set(ctx, key, "written-here"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		h.send(t, "get")
		s := h.line(t)
		if s == "written-here" {
			break
		}
		if s != "from-loader" || time.Now().After(deadline) {
			t.Fatalf("helper reads %q", s)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
