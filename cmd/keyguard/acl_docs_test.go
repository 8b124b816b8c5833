package main

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/redistest"
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

// TestDocumentedACLs creates the users docs/audit-acl.md gives for hotkeys
// and investigate on a real server and runs each command as its user,
// --monitor included: no NOPERM, and the parts of the output that need
// each permission are there, as with every permission.
func TestDocumentedACLs(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := context.Background()
	for _, c := range [][]any{
		{"config", "set", "maxmemory-policy", "allkeys-lfu"},
		{"set", "a:1", "x"},
		{"hset", "a:2", "f", "1"},
		{"rpush", "a:3", "x"},
	} {
		if err := admin.Do(ctx, c...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	reg := filepath.Join(t.TempDir(), "keyguard.yaml")
	if err := os.WriteFile(reg, []byte("version: 1\ndomains:\n  a: {owner: team-a}\nkeys:\n  - {key: \"a:{id}\", type: string, ttl: 1h}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		user string
		args []string
		want []string
	}{
		{"keyguard-hotkeys", []string{"hotkeys", "--monitor", "1s"}, []string{"OBJECT FREQ on " + srv.Addr + " (allkeys-lfu): 3 keys sampled", "MONITOR for 1s", "cost on " + srv.Addr}},
		{"keyguard-investigate", []string{"investigate", "--match", "a:*", "--watch", "1s", "--monitor", "1s"},
			[]string{`"a:1"  string  no TTL  text 64 B`, "{f} 64 B", "text 144 B", "Slow log:", "TTL watch", "Capture (MONITOR on 1 node)"}},
	} {
		t.Run(tc.user, func(t *testing.T) {
			if err := admin.Do(ctx, append([]any{"ACL", "SETUSER", tc.user, "reset"}, documentedRules(t, tc.user)...)...).Err(); err != nil {
				t.Fatal(err)
			}
			args := append(append([]string{}, tc.args...), "--registry", reg, "--redis", "redis://"+tc.user+":pw@"+srv.Addr)
			code, out, errOut := runCLI(t, "", args...)
			if code == exitError || strings.Contains(out+errOut, "NOPERM") {
				t.Fatalf("%v as %s: exit %d\n%s\n%s", tc.args, tc.user, code, out, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("%v as %s: the output lacks %q:\n%s", tc.args, tc.user, w, out)
				}
			}
			// The user cannot write.
			u := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: tc.user, Password: "pw"})
			defer u.Close()
			if err := u.Set(ctx, "a:9", "x", 0).Err(); err == nil || !strings.Contains(err.Error(), "NOPERM") {
				t.Errorf("%s could write: %v", tc.user, err)
			}
		})
	}
}
