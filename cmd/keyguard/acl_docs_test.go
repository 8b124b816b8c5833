package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/redistest"
	"github.com/keyguard/keyguard/redishook"
	"github.com/keyguard/keyguard/registry"
)

// documentedRules returns the rules of the "ACL SETUSER user" line of
// docs/audit-acl.md, the password placeholder replaced with pw.
func documentedRules(t *testing.T, user string) []any {
	t.Helper()
	f, err := os.Open("../../docs/audit-acl.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "ACL SETUSER "+user+" "); ok {
			var rules []any
			for _, r := range strings.Fields(strings.Replace(rest, ">CHANGE-ME", ">pw", 1)) {
				rules = append(rules, r)
			}
			return rules
		}
	}
	t.Fatalf("docs/audit-acl.md has no ACL SETUSER %s line", user)
	return nil
}

// clusterRules are the rules docs/audit-acl.md adds on a Cluster.
func clusterRules(t *testing.T) []any {
	t.Helper()
	b, err := os.ReadFile("../../docs/audit-acl.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "On a Cluster add `")
	rules, _, ok2 := strings.Cut(rest, "`")
	if !ok || !ok2 {
		t.Fatal("docs/audit-acl.md does not say what a Cluster adds (On a Cluster add `…`)")
	}
	var out []any
	for _, r := range strings.Fields(rules) {
		out = append(out, r)
	}
	return out
}

// TestDocumentedACLs creates the users docs/audit-acl.md gives for hotkeys
// and investigate on a real server and on every master of a real Cluster
// (with what the file adds there), and runs each command as its user,
// --monitor included: no NOPERM, and the parts of the output that need
// each permission are there, as with every permission.
func TestDocumentedACLs(t *testing.T) {
	srv := redistest.Start(t)
	t.Run("standalone", func(t *testing.T) {
		// A key in database 2 too: hotkeys walks every database (SELECT).
		db2 := redis.NewClient(&redis.Options{Addr: srv.Addr, DB: 2})
		defer db2.Close()
		documentedACLs(t, []*redis.Client{srv.Client(t)}, srv.Client(t), "redis://%s:pw@"+srv.Addr, nil, nil, db2)
	})
	c := redistest.StartCluster(t, 3)
	var nodes []*redis.Client
	for _, n := range c.Nodes {
		nodes = append(nodes, n.Client(t))
	}
	t.Run("cluster", func(t *testing.T) {
		documentedACLs(t, nodes, c.Client(t), "redis://%s:pw@"+strings.Join(c.Addrs, ","), []string{"--cluster"}, clusterRules(t), nil)
	})
}

// TestTooFewPermissions: a read-only ACL user (+@read, a common first
// try) is told, by every command that talks to a server, which command it
// may not run and where the rules each command needs are; hotkeys,
// investigate, writers and audit --snapshot said "cannot connect" or
// quoted INFO's reply before.
func TestTooFewPermissions(t *testing.T) {
	srv := redistest.Start(t)
	if err := srv.Client(t).Do(context.Background(), "ACL", "SETUSER", "reader", "on", ">pw", "~*", "+@read").Err(); err != nil {
		t.Fatal(err)
	}
	url := "redis://reader:pw@" + srv.Addr
	for _, args := range [][]string{
		{"audit", "--redis", url},
		{"audit", "--snapshot", "--redis", url},
		{"hotkeys", "--redis", url},
		{"investigate", "--key", "a:1", "--redis", url},
		{"writers", "--registry", "testdata/sdk.yaml", "--redis", url},
	} {
		code, _, errOut := runCLI(t, "", args...)
		if code != exitError || !strings.Contains(errOut, "the ACL user may not run") || !strings.Contains(errOut, "docs/audit-acl.md") ||
			strings.Contains(errOut, "cannot connect") || strings.Contains(errOut, "pw") {
			t.Errorf("%v: exit %d: %s", args[:len(args)-2], code, errOut)
		}
	}
}

// db2, when not nil, is a client of database 2 of the server: a hot key
// planted there must be listed with its database.
func documentedACLs(t *testing.T, nodes []*redis.Client, admin redis.UniversalClient, url string, extra []string, extraRules []any, db2 *redis.Client) {
	ctx := context.Background()
	for _, n := range nodes {
		if err := n.ConfigSet(ctx, "maxmemory-policy", "allkeys-lfu").Err(); err != nil {
			t.Fatal(err)
		}
		// Every read counts, so that a:3 is read past the counter hotkeys
		// lists from.
		if err := n.ConfigSet(ctx, "lfu-log-factor", "0").Err(); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range [][]any{
		{"set", "a:1", "x"},
		{"hset", "a:2", "f", "1"},
		{"rpush", "a:3", "x"},
	} {
		if err := admin.Do(ctx, c...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for range 20 {
		if err := admin.Do(ctx, "lrange", "a:3", 0, -1).Err(); err != nil {
			t.Fatal(err)
		}
	}
	hotWant := []string{`OBJECT FREQ on \S+ \(allkeys-lfu\)`, `\d+  a:3( \(db 0\))?  \(a:\{id\}, team-a\)`, "MONITOR for 1s", "cost on "}
	if db2 != nil {
		if err := db2.RPush(ctx, "a:4", "x").Err(); err != nil {
			t.Fatal(err)
		}
		for range 20 {
			if err := db2.LRange(ctx, "a:4", 0, -1).Err(); err != nil {
				t.Fatal(err)
			}
		}
		hotWant = append(hotWant, `\d+  a:4 \(db 2\)  \(a:\{id\}, team-a\)`)
	}
	reg := filepath.Join(t.TempDir(), "keyguard.yaml")
	if err := os.WriteFile(reg, []byte("version: 1\ndomains:\n  a: {owner: team-a}\nkeys:\n  - {key: \"a:{id}\", type: string, ttl: 1h}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A writer record, for keyguard writers.
	loaded, err := registry.Load(reg)
	if err != nil {
		t.Fatal(err)
	}
	rec := redishook.NewRecorder(admin, redishook.RecorderOptions{})
	writeAs(t, admin, loaded, rec, "team-a", func(c redis.UniversalClient) error { return c.Set(ctx, "a:5", "x", time.Hour).Err() })
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		user string
		args []string
		want []string
	}{
		{"keyguard-hotkeys", []string{"hotkeys", "--monitor", "1s"}, hotWant},
		{"keyguard-writers", []string{"writers"}, []string{`a:\{id\}  \(owner team-a\)\n  team-a`}},
		{"keyguard-investigate", []string{"investigate", "--match", "a:*", "--watch", "1s", "--monitor", "1s"},
			[]string{`"a:1"\s+string\s+no TTL\s+text \d+ B`, `"a:2"\s+hash\s+no TTL\s+\{f\} \d+ B`, `"a:3"\s+list\s+no TTL\s+text \d+ B`, "Slow log:", "TTL watch", `Capture \(MONITOR on`}},
	} {
		t.Run(tc.user, func(t *testing.T) {
			rules := append(append([]any{"ACL", "SETUSER", tc.user, "reset"}, documentedRules(t, tc.user)...), extraRules...)
			for _, n := range nodes {
				if err := n.Do(ctx, rules...).Err(); err != nil {
					t.Fatal(err)
				}
			}
			args := append(append(append([]string{}, tc.args...), extra...), "--registry", reg, "--redis", fmt.Sprintf(url, tc.user))
			code, out, errOut := runCLI(t, "", args...)
			if code == exitError || strings.Contains(out+errOut, "NOPERM") {
				t.Fatalf("%v as %s: exit %d\n%s\n%s", tc.args, tc.user, code, out, errOut)
			}
			for _, w := range tc.want {
				if !regexp.MustCompile(w).MatchString(out) {
					t.Errorf("%v as %s: the output lacks %q:\n%s", tc.args, tc.user, w, out)
				}
			}
			// The user cannot write.
			u := redis.NewClient(&redis.Options{Addr: nodes[0].Options().Addr, Username: tc.user, Password: "pw"})
			defer u.Close()
			if err := u.Set(ctx, "a:9", "x", 0).Err(); err == nil || !strings.Contains(err.Error(), "NOPERM") {
				t.Errorf("%s could write: %v", tc.user, err)
			}
		})
	}
}
