package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/redisconn"
	"github.com/keyguard/keyguard/internal/redistest"
)

// TestSentinelURL: a server managed by Redis Sentinel is reached by the
// Sentinels and the master's name (redis-sentinel://s1,s2#name, the form
// Lettuce and others take): every command asks the Sentinels where the
// master is, and after a failover reaches the new one. The first Sentinel
// of the URL being down, a wrong name (the names monitored are listed) and
// --cluster are told apart. The master wants a password; the Sentinels do
// not: the URL's credentials are the master's.
func TestSentinelURL(t *testing.T) {
	ctx := context.Background()
	m := redistest.Start(t, "masterauth pw")
	r := redistest.StartReplica(t, m, "masterauth pw")
	for _, srv := range []*redistest.Server{m, r} {
		// After the start: the helper's readiness probe sends no password.
		if err := srv.Client(t).ConfigSet(ctx, "requirepass", "pw").Err(); err != nil {
			t.Fatal(err)
		}
	}
	mc := redis.NewClient(&redis.Options{Addr: m.Addr, Password: "pw"})
	defer mc.Close()
	for i := range 300 {
		mc.Set(ctx, fmt.Sprintf("user:profile:%d:base", i), "p", time.Hour)
	}
	rc := redis.NewClient(&redis.Options{Addr: r.Addr, Password: "pw"})
	defer rc.Close()
	waitFor(t, 10*time.Second, "the replica in sync", func() bool { return rc.DBSize(ctx).Val() == 300 })
	s := redistest.StartSentinel(t, "orders", m, "sentinel auth-pass orders pw")
	down := "127.0.0.1:1"
	_, reg := migrateFiles(t)
	url := "redis-sentinel://:pw@" + down + "," + s.Addr + "#orders"
	audit := func() string {
		t.Helper()
		code, out, errOut := runCLI(t, "", "audit", "--registry", reg, "--fail-on", "never", "--redis", url)
		if code != 0 || !strings.Contains(out, "complete") || !strings.Contains(out, "300 keys") || strings.Contains(out+errOut, "pw@") {
			t.Fatalf("audit: exit %d\n%s%s", code, out, errOut)
		}
		return out
	}
	if out := audit(); !strings.Contains(out, "of redis-sentinel://"+down+","+s.Addr+"#orders (1 node)") || !strings.Contains(out, m.Addr+" master") {
		t.Errorf("before the failover:\n%s", out)
	}
	for _, args := range [][]string{
		{"hotkeys", "--registry", reg},
		{"investigate", "--registry", reg, "--key", "user:profile:7:base", "--watch", "0"},
		{"writers", "--registry", reg},
		{"audit", "--snapshot", "--registry", reg, "--fail-on", "never"},
	} {
		if code, out, errOut := runCLI(t, "", append(args, "--redis", url)...); code == exitError {
			t.Errorf("%v: exit %d\n%s%s", args[:2], code, out, errOut)
		}
	}

	// keyguard serve audits every second: before each audit it asks the
	// Sentinels where the master is.
	fetch := startServe(t, "--registry", reg, "--interval", "1s", "--redis", url)
	if _, body := fetch("/api/report.json", "tok-1"); !strings.Contains(body, `"`+m.Addr+`"`) {
		t.Errorf("serve's first audit is not of %s:\n%.400s", m.Addr, body)
	}

	// A failover: the replica is the master now, and the audit goes there.
	sc := redis.NewSentinelClient(&redis.Options{Addr: s.Addr})
	defer sc.Close()
	if err := sc.Failover(ctx, "orders").Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the Sentinel to name the replica", func() bool {
		a, err := sc.GetMasterAddrByName(ctx, "orders").Result()
		return err == nil && len(a) == 2 && a[0]+":"+a[1] == r.Addr && strings.Contains(rc.Info(ctx, "replication").Val(), "role:master")
	})
	if out := audit(); !strings.Contains(out, r.Addr+" master") {
		t.Errorf("after the failover: not audited on %s\n%s", r.Addr, out)
	}
	waitFor(t, 20*time.Second, "serve to audit the new master", func() bool {
		_, body := fetch("/api/report.json", "tok-1")
		return strings.Contains(body, `"`+r.Addr+`"`) && strings.Contains(body, `"complete": true`)
	})

	// Every Sentinel down when serve starts: it serves all the same (as
	// while a server is down) and its audits reach the master once one
	// answers again. (The Sentinel comes back monitoring the old master,
	// now a replica: the audit goes where the Sentinel says.)
	s.Stop()
	alone := "redis-sentinel://:pw@" + s.Addr + "#orders"
	if code, _, errOut := runCLI(t, "", "audit", "--registry", reg, "--redis", alone); code != exitError || !strings.Contains(errOut, "no Sentinel of --redis answers: "+s.Addr) {
		t.Errorf("audit with every Sentinel down: exit %d: %s", code, errOut)
	}
	back := make(chan error, 1)
	go func() {
		time.Sleep(2 * time.Second) // serve is up, its first audits failed
		back <- s.TryRestart()
	}()
	fetchLater := startServe(t, "--registry", reg, "--interval", "1s", "--redis", alone) // returns after its first good audit
	if err := <-back; err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "serve to audit once the Sentinel is back", func() bool {
		a, err := sc.GetMasterAddrByName(ctx, "orders").Result()
		if err != nil || len(a) != 2 {
			return false
		}
		_, body := fetchLater("/api/report.json", "tok-1")
		return strings.Contains(body, `"`+a[0]+":"+a[1]+`"`) && strings.Contains(body, `"complete": true`)
	})

	for _, tt := range []struct{ url, want string }{
		{"redis-sentinel://:pw@" + m.Addr + "#orders", "no Sentinel of --redis gives the master: " + m.Addr + " (ERR unknown command"},
		{"redis-sentinel://:pw@" + s.Addr + "#payments", `Sentinel ` + s.Addr + ` monitors no master named "payments", it monitors orders`},
		{"redis-sentinel://:pw@" + s.Addr, "no master name"},
		{"redis-sentinel://:pw@" + down + "#orders", "no Sentinel of --redis answers: " + down},
		{"redis-sentinel://" + s.Addr + "#orders", "(" + redisconn.CredentialsHint + ")"},
	} {
		code, _, errOut := runCLI(t, "", "audit", "--registry", reg, "--redis", tt.url)
		if code != exitError || !strings.Contains(errOut, tt.want) || strings.Contains(errOut, "pw@") {
			t.Errorf("%s: exit %d: %s\nwant %q", tt.url, code, errOut, tt.want)
		}
	}
	if code, _, errOut := runCLI(t, "", "audit", "--cluster", "--registry", reg, "--redis", url); code != exitError || !strings.Contains(errOut, "Sentinels name one master") {
		t.Errorf("--cluster: exit %d: %s", code, errOut)
	}
}

// waitFor polls ok until it holds, or fails the test after d.
func waitFor(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", d, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestWalkTargetAsksSentinels: the audit's target of a redis-sentinel://
// URL asks the Sentinels where the master is now (a walk whose server
// goes down stops at once when they name another: live's
// TestSentinelFailoverDuringAudit); of any other URL it does not.
func TestWalkTargetAsksSentinels(t *testing.T) {
	w := &walkFlags{db: -1}
	plain := &redisconn.Target{Opts: &redis.Options{Addr: "127.0.0.1:6379"}, Addrs: []string{"127.0.0.1:6379"}}
	if tg, err := w.target(plain); err != nil || tg.Master != nil {
		t.Fatalf("redis://: %v, asks Sentinels %v", err, tg.Master != nil)
	}
	viaSentinels := *plain
	viaSentinels.Sentinel = &redisconn.SentinelMaster{Name: "orders", Sentinels: []string{"127.0.0.1:1"}}
	if tg, err := w.target(&viaSentinels); err != nil || tg.Master == nil {
		t.Fatalf("redis-sentinel://: %v, asks Sentinels %v", err, tg.Master != nil)
	}
}
