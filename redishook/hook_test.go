package redishook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/hotkey"
	"github.com/keyguard/keyguard/internal/rediscmd"
	"github.com/keyguard/keyguard/registry"
)

func testRegistry(t testing.TB) *registry.Registry {
	t.Helper()
	reg, err := registry.Load("testdata/keyguard.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func newHook(t testing.TB, service string, mode Mode) (*Hook, *prometheus.Registry) {
	t.Helper()
	pr := prometheus.NewPedanticRegistry()
	h := New(testRegistry(t), Options{Service: service, Mode: mode, Registerer: pr})
	if err := h.Err(); err != nil {
		t.Fatal(err)
	}
	return h, pr
}

func cmdOf(args ...any) redis.Cmder { return redis.NewCmd(context.Background(), args...) }

// TestClassify runs commands through the hook's decision without a
// server: the hook never talks to Redis, so its verdict is a pure function
// of the command, the registry, the service and the mode.
func TestClassify(t *testing.T) {
	for _, tt := range []struct {
		name    string
		service string
		args    []any
		want    Reason // 0: allowed
	}{
		{"own hash write", "order-team", []any{"hset", "order:order:1:base", "a", "1"}, 0},
		{"read of another team's key", "order-team", []any{"hgetall", "promo:sku:1001"}, 0},
		{"write of another team's key", "order-team", []any{"hset", "promo:sku:1001", "couponAmount", "10"}, ReasonNotWriter},
		{"unregistered write", "order-team", []any{"set", "promo_sku_1001", "x", "ex", int64(60)}, ReasonUnregistered},
		{"unregistered read", "order-team", []any{"get", "promo_sku_1001"}, 0},
		{"listed writer", "sms-service", []any{"set", "verify:sms:abc:LOGIN", "1234", "ex", int64(300)}, 0},
		{"owner of shared key", "auth-team", []any{"set", "verify:sms:abc:LOGIN", "1234", "px", int64(300000)}, 0},
		{"stranger on shared key", "order-team", []any{"set", "verify:sms:abc:LOGIN", "1234", "ex", int64(300)}, ReasonNotWriter},
		{"set without ttl", "order-team", []any{"set", "order:cache:1", "v"}, ReasonNoTTL},
		{"set EX upper case", "order-team", []any{"SET", "order:cache:1", "v", "EX", 60}, 0},
		{"set keepttl", "order-team", []any{"set", "order:cache:1", "v", "keepttl"}, 0},
		{"set exat as bytes", "order-team", []any{"set", "order:cache:1", "v", []byte("EXAT"), int64(1e10)}, 0},
		{"set value equal to ex", "order-team", []any{"set", "order:cache:1", "ex"}, ReasonNoTTL},
		{"setnx", "order-team", []any{"setnx", "order:cache:1", "v"}, ReasonNoTTL},
		{"getset", "order-team", []any{"getset", "order:cache:1", "v"}, ReasonNoTTL},
		{"persist", "order-team", []any{"persist", "order:order:1:base"}, ReasonNoTTL},
		{"getex persist", "order-team", []any{"getex", "order:cache:1", "persist"}, ReasonNoTTL},
		{"getex ex", "order-team", []any{"getex", "order:cache:1", "ex", int64(5)}, 0},
		{"restore ttl 0", "order-team", []any{"restore", "order:cache:1", int64(0), "payload"}, ReasonNoTTL},
		{"restore ttl", "order-team", []any{"restore", "order:cache:1", int64(1000), "payload"}, 0},
		{"mset mixes own and foreign", "order-team", []any{"mset", "order:cache:1", "a", "promo:flag:1", "b"}, ReasonNoTTL},
		{"mset foreign first", "order-team", []any{"mset", "promo:flag:1", "b", "order:cache:1", "a"}, ReasonNotWriter},
		{"hset on ttl template (existence unknown)", "order-team", []any{"hset", "order:order:1:base", "f", "v"}, 0},
		{"persistent set", "order-team", []any{"set", "seq:order:no", "1"}, 0},
		{"persistent incr", "order-team", []any{"incr", "seq:order:no"}, 0},
		{"persistent set ex", "order-team", []any{"set", "seq:order:no", "1", "ex", int64(5)}, ReasonPersistent},
		{"persistent expire", "order-team", []any{"expire", "seq:order:no", int64(5)}, ReasonPersistent},
		{"persistent getex px", "order-team", []any{"getex", "seq:order:no", "px", int64(5)}, ReasonPersistent},
		{"persistent persist", "order-team", []any{"persist", "seq:order:no"}, 0},
		{"flushall", "order-team", []any{"flushall"}, ReasonKeyspace},
		{"flushdb async", "order-team", []any{"flushdb", "async"}, ReasonKeyspace},
		{"swapdb", "order-team", []any{"swapdb", int64(0), int64(1)}, ReasonKeyspace},
		{"ping", "order-team", []any{"ping"}, 0},
		{"client setinfo (7.2, not in the 7.0 table)", "order-team", []any{"client", "setinfo", "LIB-NAME", "x"}, 0},
		{"module command", "order-team", []any{"json.set", "order:cache:1", "$", "{}"}, ReasonUnknownCommand},
		{"eval declares a foreign key", "order-team", []any{"evalsha", "abc", 1, "promo:sku:1", "f", "v"}, ReasonNotWriter},
		{"eval_ro of a foreign key", "order-team", []any{"eval_ro", "return 1", 1, "promo:sku:1"}, 0},
		{"copy into a foreign key", "order-team", []any{"copy", "order:cache:1", "promo:flag:1"}, ReasonNotWriter},
		{"writer records are keyguard's", "order-team", []any{"zadd", RecordPrefix + "t:0011223344556677", 1, "x"}, 0},
		{"hot-key reports are keyguard's", "order-team", []any{"zadd", hotkey.ReportKey("0011223344556677"), 5, "order:cache:1"}, 0},
		{"hot-key index is keyguard's", "order-team", []any{"hset", hotkey.RecordIndexKey, "0011223344556677", "{}"}, 0},
		{"near a record prefix", "order-team", []any{"hset", "keyguard:{hotkeys}x:index", "a", "1"}, ReasonUnregistered},
		{"wrong arity goes to the server", "order-team", []any{"hset", "promo:sku:1"}, 0},
		{"empty args", "order-team", []any{}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, mode := range []Mode{Observe, Warn, Enforce} {
				h, _ := newHook(t, tt.service, mode)
				err := h.command(cmdOf(tt.args...))
				if mode != Enforce {
					if err != nil {
						t.Fatalf("%s: %v", mode, err)
					}
					continue
				}
				if tt.want == 0 {
					if err != nil {
						t.Fatalf("enforce: %v", err)
					}
					continue
				}
				var d *DeniedError
				if !errors.As(err, &d) || !errors.Is(err, ErrDenied) {
					t.Fatalf("enforce: got %v, want a *DeniedError (%s)", err, tt.want)
				}
				if d.Reason != tt.want {
					t.Fatalf("reason %s, want %s (%v)", d.Reason, tt.want, err)
				}
			}
		})
	}
}

func TestDeniedErrorNamesOwner(t *testing.T) {
	h, pr := newHook(t, "order-team", Enforce)
	err := h.command(cmdOf("hset", "promo:sku:1001", "couponAmount", "10"))
	var d *DeniedError
	if !errors.As(err, &d) {
		t.Fatalf("got %v", err)
	}
	want := DeniedError{Command: "hset", Key: "promo:sku:1001", Template: "promo:sku:{skuId:int}", Owner: "promo-team", Service: "order-team", Reason: ReasonNotWriter}
	if d.Command != want.Command || d.Key != want.Key || d.Template != want.Template || d.Owner != want.Owner || d.Service != want.Service {
		t.Fatalf("got %+v, want %+v", *d, want)
	}
	for _, s := range []string{`"promo-team"`, `"order-team"`, `"promo:sku:{skuId:int}"`, "writers"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("message %q lacks %s", err, s)
		}
	}
	if got := testutil.ToFloat64(h.ents[d.entryIndex(t, h)].denied); got != 1 {
		t.Errorf("denied = %v, want 1", got)
	}
	lintMetrics(t, pr)
}

// entryIndex finds the registry entry of d's template (test helper).
func (d *DeniedError) entryIndex(t *testing.T, h *Hook) int {
	for i, e := range h.reg.Entries {
		if e.Template.String() == d.Template {
			return i
		}
	}
	t.Fatalf("template %q not in the registry", d.Template)
	return -1
}

func TestPipelineRules(t *testing.T) {
	for _, tt := range []struct {
		name string
		cmds [][]any
		want Reason
	}{
		{"set then expire", [][]any{{"set", "order:cache:1", "v"}, {"expire", "order:cache:1", int64(60)}}, 0},
		{"set then pexpire of another key", [][]any{{"set", "order:cache:1", "v"}, {"pexpire", "order:cache:2", int64(60)}}, ReasonNoTTL},
		{"expire before set", [][]any{{"expire", "order:cache:1", int64(60)}, {"set", "order:cache:1", "v"}}, ReasonNoTTL},
		{"tx hset", [][]any{{"multi"}, {"hset", "order:order:1:base", "f", "v"}, {"pexpire", "order:order:1:base", int64(1000)}, {"exec"}}, 0},
		{"tx with one foreign write", [][]any{{"multi"}, {"hset", "order:order:1:base", "f", "v"}, {"hset", "promo:sku:1", "f", "v"}, {"exec"}}, ReasonNotWriter},
		{"set then set ex", [][]any{{"set", "order:cache:1", "v"}, {"set", "order:cache:1", "v", "px", int64(10)}}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := newHook(t, "order-team", Enforce)
			var cmds []redis.Cmder
			for _, a := range tt.cmds {
				cmds = append(cmds, cmdOf(a...))
			}
			err := h.pipeline(cmds)
			var d *DeniedError
			switch {
			case tt.want == 0 && err != nil:
				t.Fatal(err)
			case tt.want != 0 && (!errors.As(err, &d) || d.Reason != tt.want):
				t.Fatalf("got %v, want %s", err, tt.want)
			}
		})
	}
}

func TestAllowUnknown(t *testing.T) {
	h := New(testRegistry(t), Options{Service: "order-team", Mode: Enforce, AllowUnknown: []string{"JSON.SET"}})
	if err := h.command(cmdOf("json.set", "order:cache:1", "$", "{}")); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ToFloat64(h.unknown); got != 1 {
		t.Fatalf("unknown = %v", got)
	}
	if err := h.command(cmdOf("hsetex", "order:cache:1", "ex", 1, "fields", 1, "f", "v")); !errors.Is(err, ErrDenied) {
		t.Fatalf("hsetex: %v", err)
	}
}

func TestConfigErrors(t *testing.T) {
	h := New(testRegistry(t), Options{Mode: Enforce})
	if h.Err() == nil {
		t.Fatal("no error for an empty service")
	}
	if err := h.command(cmdOf("get", "order:cache:1")); err == nil {
		t.Fatal("a misconfigured hook let a command through")
	}
	if err := New(nil, Options{Service: "x"}).Err(); err == nil {
		t.Fatal("no error for a nil registry")
	}
	if _, err := ParseMode("Enforce"); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseMode("strict"); err == nil {
		t.Fatal("strict parsed")
	}
}

// TestMetricsShared: two hooks (two services of one process) on one
// Registerer share the collectors.
func TestMetricsShared(t *testing.T) {
	pr := prometheus.NewPedanticRegistry()
	reg := testRegistry(t)
	a := New(reg, Options{Service: "order-team", Registerer: pr})
	b := New(reg, Options{Service: "promo-team", Registerer: pr})
	for _, h := range []*Hook{a, b} {
		if err := h.Err(); err != nil {
			t.Fatal(err)
		}
		if err := h.command(cmdOf("hset", "promo:sku:1", "f", "v")); err != nil {
			t.Fatal(err)
		}
	}
	a.GuardConflictKey("promo:sku:1", "promo-team")
	a.GuardConflictKey("nope", "promo-team")
	const want = `
# HELP keyguard_commands_total Redis commands per key template, template owner, calling service and access (read|write).
# TYPE keyguard_commands_total counter
keyguard_commands_total{access="write",owner="promo-team",service="order-team",template="promo:sku:{skuId:int}"} 1
keyguard_commands_total{access="write",owner="promo-team",service="promo-team",template="promo:sku:{skuId:int}"} 1
# HELP keyguard_foreign_writes_total Write attempts by a service that is neither the template's owner nor one of its writers.
# TYPE keyguard_foreign_writes_total counter
keyguard_foreign_writes_total{owner="promo-team",service="order-team",template="promo:sku:{skuId:int}"} 1
# HELP keyguard_guard_conflicts_total Namespace guard conflicts: writes refused because another namespace owns the key.
# TYPE keyguard_guard_conflicts_total counter
keyguard_guard_conflicts_total{owner="promo-team",template="promo:sku:{skuId:int}"} 1
keyguard_guard_conflicts_total{owner="promo-team",template="unregistered"} 1
`
	if err := testutil.GatherAndCompare(nonZero{pr}, strings.NewReader(want),
		MetricCommands, MetricForeignWrites, MetricGuardConflicts); err != nil {
		t.Fatal(err)
	}
	lintMetrics(t, pr)
}

func TestWarnIsRateLimited(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	h := New(testRegistry(t), Options{Service: "order-team", Mode: Warn, Logger: log, WarnEvery: time.Hour})
	for range 5 {
		if err := h.command(cmdOf("hset", "promo:sku:1001", "f", "v")); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.command(cmdOf("set", "nobody:knows", "v")); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d log lines, want 2 (one per template per hour):\n%s", len(lines), buf.String())
	}
	for _, want := range []string{"reason=not-writer", "owner=promo-team", "template=promo:sku:{skuId:int}", "key=promo:sku:1001"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("log line lacks %s: %s", want, lines[0])
		}
	}
	if got := testutil.ToFloat64(h.ents[2].foreign); got != 5 {
		t.Errorf("foreign writes = %v, want 5", got)
	}
	if got := h.ents[2].quiet.Load(); got != 4 {
		t.Errorf("suppressed = %d, want 4", got)
	}
}

// TestClassifyDoesNotAllocate: the hit path of the hook allocates nothing.
func TestClassifyDoesNotAllocate(t *testing.T) {
	for _, mode := range []Mode{Observe, Warn, Enforce} {
		h, _ := newHook(t, "order-team", mode)
		h.rec = NewRecorder(nil, RecorderOptions{}).table(h.reg, "order-team")
		for _, c := range []redis.Cmder{
			redis.NewStringCmd(context.Background(), "get", "order:cache:1"),
			redis.NewStatusCmd(context.Background(), "set", "order:cache:1", "v", "ex", int64(60)),
			redis.NewIntCmd(context.Background(), "hset", "order:order:1:base", "a", "1", "b", "2"),
			redis.NewStringCmd(context.Background(), "get", "unregistered_key"),
			redis.NewSliceCmd(context.Background(), "mget", "order:cache:1", "order:order:2:base", "promo:sku:3"),
		} {
			if n := testing.AllocsPerRun(100, func() {
				if err := h.command(c); err != nil {
					t.Fatal(err)
				}
			}); n != 0 {
				t.Errorf("%s %v: %v allocs per command", mode, c.Args(), n)
			}
		}
		pipe := []redis.Cmder{cmdOf("multi"), cmdOf("set", "order:cache:1", "v"), cmdOf("pexpire", "order:cache:1", int64(10)), cmdOf("exec")}
		if n := testing.AllocsPerRun(100, func() {
			if err := h.pipeline(pipe); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("%s tx: %v allocs", mode, n)
		}
	}
}

// TestManyTemplatesInOneCommand: past maxSeen distinct templates every key
// is still counted.
func TestManyTemplatesInOneCommand(t *testing.T) {
	h, _ := newHook(t, "order-team", Observe)
	args := []any{"mget"}
	for range 3 {
		args = append(args, "order:order:1:base", "order:cache:1", "promo:sku:1", "promo:flag:1", "verify:sms:a:b", "seq:order:no", "x1", "x2")
	}
	args = append(args, "order:order:1:base")
	if err := h.command(cmdOf(args...)); err != nil {
		t.Fatal(err)
	}
	total := testutil.ToFloat64(h.unreg.cmds[accRead])
	for i := range h.ents {
		total += testutil.ToFloat64(h.ents[i].cmds[accRead])
	}
	if total != 7 { // 6 templates + unregistered, each once
		t.Fatalf("counted %v, want 7", total)
	}
}

// FuzzCommand holds the hook's verdict to invariants on any command: it
// is a function of the command alone (the same twice, the same alone in a
// pipeline); only enforce mode refuses; a refusal names the command and a
// key among its arguments (or none, for keyspace and unknown commands);
// reads are never refused.
func FuzzCommand(f *testing.F) {
	f.Add("set", "order:cache:1", "v", "ex")
	f.Add("mset", "promo:flag:1", "x", "order:cache:\xff")
	f.Add("client", "setinfo", "lib-name", "x")
	f.Add("eval", "return 1", "2", "a")
	f.Add("hset", "promo:sku:1001", "couponAmount", "10")
	f.Add("eval_ro", "return 1", "1", "promo:sku:1")
	f.Add("flushall", "async", "", "")
	h, _ := newHook(f, "order-team", Enforce)
	h.rec = NewRecorder(nil, RecorderOptions{}).table(h.reg, "order-team")
	lax := map[Mode]*Hook{}
	for _, m := range []Mode{Observe, Warn} {
		lax[m], _ = newHook(f, "order-team", m)
	}
	f.Fuzz(func(t *testing.T, a, b, c, d string) {
		for _, args := range [][]any{{a, b, c, d}, {a, b, []byte(c)}, {a, c, d, a}} {
			err := h.command(cmdOf(args...))
			if again := h.command(cmdOf(args...)); verdict(again) != verdict(err) {
				t.Fatalf("%q: %v, then %v", args, err, again)
			}
			if alone := h.pipeline([]redis.Cmder{cmdOf(args...)}); verdict(alone) != verdict(err) {
				t.Fatalf("%q: %v alone, %v in a pipeline of one", args, err, alone)
			}
			for m, lh := range lax {
				if err := lh.command(cmdOf(args...)); err != nil {
					t.Fatalf("%q: %s mode refused: %v", args, m, err)
				}
			}
			if err == nil {
				continue
			}
			var den *DeniedError
			if !errors.As(err, &den) || den.Service != "order-team" {
				t.Fatalf("%q: refused with %v, want a *DeniedError of order-team", args, err)
			}
			if name := strings.ToLower(argText(args[0])); !strings.HasPrefix(den.Command, name) {
				t.Fatalf("%q: refusal names command %q", args, den.Command)
			}
			if den.Key != "" && !slices.ContainsFunc(args, func(x any) bool { return argText(x) == den.Key }) {
				t.Fatalf("%q: refusal names key %q, not an argument", args, den.Key)
			}
			if cmd, ok := rediscmd.LookupArgs(args); ok && cmd.Class == rediscmd.ClassRead {
				t.Fatalf("%q: a read (%s) refused: %v", args, cmd.Name, err)
			}
		}
		_ = h.pipeline([]redis.Cmder{cmdOf(a, b), cmdOf(c, d, a)})
	})
}

// verdict is what a refusal says, for comparing two: "" when allowed.
func verdict(err error) string {
	var d *DeniedError
	if errors.As(err, &d) {
		return d.Reason.String() + " " + d.Key
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

func argText(x any) string {
	if b, ok := x.([]byte); ok {
		return string(b)
	}
	return fmt.Sprint(x)
}

// nonZero drops the series still at 0 (New creates one per template).
type nonZero struct{ g prometheus.Gatherer }

func (n nonZero) Gather() ([]*dto.MetricFamily, error) {
	mfs, err := n.g.Gather()
	var out []*dto.MetricFamily
	for _, mf := range mfs {
		var ms []*dto.Metric
		for _, m := range mf.Metric {
			if m.GetCounter().GetValue() != 0 {
				ms = append(ms, m)
			}
		}
		if len(ms) > 0 {
			mf.Metric = ms
			out = append(out, mf)
		}
	}
	return out, err
}

// lintMetrics checks names, help and units with promlint, on the
// collectors directly and as gathered.
func lintMetrics(t *testing.T, pr *prometheus.Registry) {
	t.Helper()
	problems, err := testutil.GatherAndLint(pr)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("metric lint: %s: %s", p.Metric, p.Text)
	}
	m, err := newMetrics(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []prometheus.Collector{m.commands, m.denied, m.unregistered, m.foreign, m.unknown, m.guard, m.schema} {
		problems, err := testutil.CollectAndLint(c)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range problems {
			t.Errorf("metric lint: %s: %s", p.Metric, p.Text)
		}
	}
}

// TestOwnRecordsDeclared: keyguard's records declared in the registry with
// keyguard as owner (RecordRegistry, hotkey.RecordRegistry) are still
// written by every service in enforce mode: a service's detector reports
// through its own client.
func TestOwnRecordsDeclared(t *testing.T) {
	if hotKeyRecordPrefix != hotkey.RecordPrefix {
		t.Fatalf("the hook exempts %q, hotkey reports under %q", hotKeyRecordPrefix, hotkey.RecordPrefix)
	}
	reg, err := registry.Parse("records.yaml", []byte("version: 1\n"+RecordRegistry+hotkey.RecordRegistry+
		"  - {key: \"keyguard:other:{id}\", ttl: 1m}\n"))
	if err != nil {
		t.Fatal(err)
	}
	h := New(reg, Options{Service: "catalog-team", Mode: Enforce, Registerer: prometheus.NewPedanticRegistry()})
	if err := h.Err(); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]any{
		{"hset", hotkey.RecordIndexKey, "0011223344556677", "{}"},
		{"zadd", hotkey.ReportKey("0011223344556677"), 5, "cache:product:detail:P1001"},
		{"pexpire", hotkey.ReportKey("0011223344556677"), 600000},
		{"del", hotkey.ReportKey("0011223344556677")},
		{"zadd", RecordKey("order:order:{orderId:int}:base"), 1, "catalog-team"},
		{"hset", RecordIndexKey, TemplateID("x"), "x"},
	} {
		if err := h.command(cmdOf(args...)); err != nil {
			t.Errorf("%v: %v", args, err)
		}
	}
	var d *DeniedError
	if err := h.command(cmdOf("set", "keyguard:other:1", "v", "ex", 60)); !errors.As(err, &d) || d.Reason != ReasonNotWriter {
		t.Errorf("another key of the keyguard domain: %v, want refused", err)
	}
}
