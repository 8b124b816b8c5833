package live

import (
	"bufio"
	"context"
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/plant"
	"github.com/keyguard/keyguard/internal/redistest"
)

// documentedACL returns the rules of the ACL SETUSER line in
// docs/audit-acl.md, the password placeholder replaced.
func documentedACL(t *testing.T, password string) []string {
	t.Helper()
	f, err := os.Open("../../../docs/audit-acl.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "ACL SETUSER keyguard-audit "); ok {
			rules := strings.Fields(strings.ReplaceAll(rest, ">CHANGE-ME", ">"+password))
			if !slices.Contains(rules, ">"+password) {
				t.Fatalf("docs/audit-acl.md: the ACL line has no >CHANGE-ME password: %s", rest)
			}
			return rules
		}
	}
	t.Fatal("docs/audit-acl.md has no ACL SETUSER keyguard-audit line")
	return nil
}

func setUser(t *testing.T, admin *redis.Client, name string, rules []string) {
	t.Helper()
	args := []any{"ACL", "SETUSER", name, "reset"}
	for _, r := range rules {
		args = append(args, r)
	}
	if err := admin.Do(context.Background(), args...).Err(); err != nil {
		t.Fatalf("ACL SETUSER %s %s: %v", name, strings.Join(rules, " "), err)
	}
}

// The audit passes with exactly the documented ACL (and finds what the
// default user finds), the user cannot write, and without +memory|usage
// the audit fails before it starts, naming the missing rule.
func TestDocumentedACL(t *testing.T) {
	reg := testRegistry(t)
	s := redistest.Start(t, lfuConfig...)
	admin := s.Client(t)
	ctx := context.Background()
	clean := plant.Clean(t, admin, 200)
	ps := plant.Anomalies(t, admin, true)

	rules := documentedACL(t, "audit-pw")
	setUser(t, admin, "keyguard-audit", rules)
	target := func(user string) Target {
		opt, _ := redis.ParseURL("redis://" + user + ":audit-pw@" + s.Addr)
		return Target{Conn: connFrom(opt)}
	}
	res, err := Run(ctx, reg, target("keyguard-audit"), Options{})
	if err != nil {
		t.Fatalf("audit with the documented ACL: %v", err)
	}
	if !res.Complete || res.Report.Summary.Keys != int64(clean+len(ps)+10) {
		t.Errorf("complete %v keys %d; want %d", res.Complete, res.Report.Summary.Keys, clean+len(ps)+10)
	}
	if got, want := found(res.Report), expected(ps); !slices.Equal(got, want) {
		t.Errorf("findings with the ACL user:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
	for _, n := range res.Report.Notes {
		if strings.Contains(n, "not checked") || strings.Contains(n, "unavailable") || strings.Contains(n, "not readable") {
			t.Errorf("the documented ACL lost a rule: %s", n)
		}
	}

	// Read-only: the user can neither write nor delete.
	opt, _ := redis.ParseURL("redis://keyguard-audit:audit-pw@" + s.Addr)
	ac := redis.NewClient(opt)
	defer ac.Close()
	for _, args := range [][]any{{"SET", "x", "1"}, {"DEL", "seq:order:no"}, {"FLUSHALL"}, {"KEYS", "*"}, {"CONFIG", "SET", "maxmemory", "1"}} {
		if err := ac.Do(ctx, args...).Err(); err == nil || !strings.HasPrefix(err.Error(), "NOPERM") {
			t.Errorf("%v as keyguard-audit: %v; want NOPERM", args, err)
		}
	}

	var without []string
	for _, r := range rules {
		if r != "+memory|usage" {
			without = append(without, r)
		}
	}
	setUser(t, admin, "no-memory", without)
	_, err = Run(ctx, reg, target("no-memory"), Options{})
	var pe *PermissionError
	if !errors.As(err, &pe) || !slices.Contains(pe.Commands, "memory|usage") || len(pe.Commands) != 1 {
		t.Fatalf("without +memory|usage: %v; want a PermissionError naming memory|usage", err)
	}
	if !strings.Contains(err.Error(), "docs/audit-acl.md") {
		t.Errorf("the error does not say where the rules are: %v", err)
	}

	// Optional rules: without +object|freq the audit runs and says what
	// it could not check.
	var noFreq []string
	for _, r := range rules {
		if r != "+object|freq" {
			noFreq = append(noFreq, r)
		}
	}
	setUser(t, admin, "no-freq", noFreq)
	res, err = Run(ctx, reg, target("no-freq"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !hasNote(res.Report, "hot-key data unavailable") || !res.Complete {
		t.Errorf("without +object|freq: complete %v notes %q", res.Complete, res.Report.Notes)
	}
}

// A server that renames MEMORY and CONFIG away (hardened configurations
// and some managed services do): the audit walks every key, finds what it
// finds elsewhere but what needs a key's bytes, says memory was not
// measured and why, and sends no MEMORY USAGE per key (before, each key
// sent it and was refused, and the report said only "memory of N keys
// unknown").
func TestRenamedMemoryCommand(t *testing.T) {
	reg := testRegistry(t)
	ctx := context.Background()
	s := redistest.Start(t, append(slices.Clone(lfuConfig), `rename-command MEMORY ""`, `rename-command CONFIG ""`)...)
	admin := s.Client(t)
	clean := plant.Clean(t, admin, 200)
	ps := plant.Anomalies(t, admin, true)
	before, err := admin.Info(ctx, "stats").Result()
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(ctx, reg, standalone(s), Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep := res.Report
	if !res.Complete || rep.Summary.Keys != int64(clean+len(ps)+10) {
		t.Errorf("complete %v keys %d; want %d", res.Complete, rep.Summary.Keys, clean+len(ps)+10)
	}
	if !hasNote(rep, "memory was not measured on "+s.Addr+": MEMORY USAGE: ERR unknown command 'MEMORY' (the server renamed") {
		t.Errorf("notes %q: want why memory was not measured", rep.Notes)
	}
	if rep.Summary.Bytes != 0 {
		t.Errorf("bytes %d without MEMORY", rep.Summary.Bytes)
	}
	got, want := found(rep), expected(ps)
	for _, f := range want {
		if !slices.Contains(got, f) && !strings.Contains(f, "big-key") {
			t.Errorf("lost %s", f)
		}
	}
	for _, f := range got {
		if !slices.Contains(want, f) {
			t.Errorf("found %s, not planted", f)
		}
	}
	// One refused MEMORY (the permission probe), not one per key: an
	// unknown command counts in INFO stats' total_error_replies (a few
	// other probes of the planted keys are refused too).
	after, err := admin.Info(ctx, "stats").Result()
	if err != nil {
		t.Fatal(err)
	}
	errs := func(info string) int {
		n, _ := strconv.Atoi(InfoField(info, "total_error_replies"))
		return n
	}
	if d := errs(after) - errs(before); d >= 20 {
		t.Errorf("%d error replies during the audit of %d keys: MEMORY USAGE sent per key", d, rep.Summary.Keys)
	}
}

// A user whose key patterns let it read part of the keyspace (a team's
// own user, %R~order:*): the keys it may not read are in no group, and the
// report does not say complete or 100% covered (it did, beside a note);
// coverage counts them, and the part not covered says what to do. With
// --match on the user's prefix the audit is complete.
func TestKeysTheUserMayNotRead(t *testing.T) {
	reg := testRegistry(t)
	ctx := context.Background()
	s := redistest.Start(t)
	admin := s.Client(t)
	for i := range 300 {
		admin.HSet(ctx, "order:order:"+strconv.Itoa(i)+":base", "orderId", i)
		admin.Set(ctx, "auth:session:"+strconv.Itoa(i), "x", 0)
	}
	var rules []string
	for _, r := range documentedACL(t, "pw") {
		if r == "%R~*" {
			r = "%R~order:*"
		}
		rules = append(rules, r)
	}
	setUser(t, admin, "team-order", rules)
	opt, _ := redis.ParseURL("redis://team-order:pw@" + s.Addr)
	tgt := Target{Conn: connFrom(opt)}
	res, err := Run(ctx, reg, tgt, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep := res.Report
	if res.Complete || rep.Summary.Keys != 300 || rep.Coverage.Share != 0.5 {
		t.Errorf("complete %v, %d keys, share %v; want incomplete, 300 keys, 0.5", res.Complete, rep.Summary.Keys, rep.Coverage.Share)
	}
	if d := rep.Coverage.Nodes[0].DBs[0]; d.Counted != 600 || d.Unreadable != 300 {
		t.Errorf("coverage %+v: want 600 counted, 300 unreadable", d)
	}
	if g := rep.Coverage.NotCovered; len(g) != 1 || !strings.Contains(g[0].Reason, "300 keys not readable by this ACL user") || !strings.Contains(g[0].Reason, "--match") {
		t.Errorf("not covered %+v", g)
	}
	res, err = Run(ctx, reg, tgt, Options{Match: "order:*"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete || res.Report.Summary.Keys != 300 || len(res.Report.Coverage.NotCovered) != 0 {
		t.Errorf("--match order:*: complete %v, %d keys, %+v", res.Complete, res.Report.Summary.Keys, res.Report.Coverage.NotCovered)
	}
}

// A Cluster walked on its replicas (--cluster --replicas) with exactly
// the documented ACL: each replica is asked who it is before it is read
// (CLUSTER NODES, which the ACL allows), and every key is counted.
func TestDocumentedACLClusterReplicas(t *testing.T) {
	reg := testRegistry(t)
	c := redistest.StartClusterWithReplicas(t, 3, 1)
	ctx := context.Background()
	n := plant.Clean(t, c.Client(t), 300)
	rules := documentedACL(t, "audit-pw")
	for _, s := range append(append([]*redistest.Server{}, c.Nodes...), c.Replicas...) {
		setUser(t, s.Client(t), "keyguard-audit", rules)
	}
	for i := range c.Nodes {
		waitSameDBSize(t, c.Nodes[i].Client(t), c.Replicas[i].Client(t))
	}
	opt, _ := redis.ParseURL("redis://keyguard-audit:audit-pw@" + c.Addrs[0])
	tg := Target{Conn: connFrom(opt), Cluster: true, Seeds: c.Addrs[1:], Display: "redis://" + c.Addrs[0]}
	res, err := Run(ctx, reg, tg, Options{Replicas: true, RetryFor: 2 * time.Second, IOTimeout: time.Second})
	if err != nil {
		t.Fatalf("--cluster --replicas with the documented ACL: %v", err)
	}
	if !res.Complete || res.Report.Summary.Keys != int64(n) || hasNote(res.Report, "could not be read") {
		t.Errorf("complete %v keys %d of %d, notes %q", res.Complete, res.Report.Summary.Keys, n, res.Report.Notes)
	}
}
