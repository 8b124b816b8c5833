package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/guard"
	"github.com/keyguard/keyguard/internal/audit/live"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/demodata"
	"github.com/keyguard/keyguard/internal/demodata/keys"
	"github.com/keyguard/keyguard/keybuild"
	"github.com/keyguard/keyguard/redishook"
	"github.com/keyguard/keyguard/registry"
)

// run tells the shared-Redis story on an embedded Redis-protocol server:
// two services write one key with two shapes, keys pile up without TTL,
// and keyguard shows each problem and where it comes from.
func run(ctx context.Context, w io.Writer) error {
	reg, err := registry.Parse(demodata.Path, demodata.Registry)
	if err != nil {
		return fmt.Errorf("demo registry: %w", err)
	}
	srv, err := miniredis.Run()
	if err != nil {
		return fmt.Errorf("start the embedded server: %w", err)
	}
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()

	d := &demo{ctx: ctx, w: w, reg: reg, rdb: rdb, srv: srv}
	for _, step := range []func() error{d.lint, d.incident, d.classify, d.builders, d.sdk, d.audit, d.migrate, d.hotkeys} {
		if err := step(); err != nil {
			return err
		}
	}
	fmt.Fprintln(d.w, "\nNext, on your own Redis (no registry needed to start): keyguard audit --redis redis://HOST:6379 --format json --out audit.json,\n"+
		"then keyguard init --from-audit audit.json writes a keyguard.yaml of its key families to review; run 'keyguard lint' and 'keyguard scan-code' in CI.")
	return nil
}

type demo struct {
	ctx  context.Context
	w    io.Writer
	reg  *registry.Registry
	rdb  *redis.Client
	srv  *miniredis.Miniredis
	step int
}

func (d *demo) title(s string) {
	d.step++
	fmt.Fprintf(d.w, "\n== %d. %s\n\n", d.step, s)
}

func (d *demo) lint() error {
	d.title("The registry: " + fmt.Sprint(len(d.reg.Entries)) + " key templates, one per team's key (keyguard lint)")
	fmt.Fprintf(d.w, "The demo's registry is embedded in it; in keyguard's source it is %s.\n\n", d.reg.File)
	fds := d.reg.Lint()
	if err := finding.WriteText(d.w, fds); err != nil {
		return err
	}
	fmt.Fprintf(d.w, "%s: %d templates, %s\n", d.reg.File, len(d.reg.Entries), finding.Count(fds))
	fmt.Fprintln(d.w, "\nThe overlap is what CI catches before merge: the order team's new template can")
	fmt.Fprintln(d.w, "produce the promo team's keys. In production nothing would have errored.")
	return nil
}

// incident replays the promo:sku:1001 overwrite on the embedded server.
func (d *demo) incident() error {
	d.title("The incident: two services write promo:sku:1001")
	ctx, r := d.ctx, d.rdb
	steps := []struct {
		who  string
		cmd  []any
		note string
	}{
		{"promo-service", []any{"HSET", "promo:sku:1001", "activityId", "12345", "discountType", "1", "discountValue", "50"}, "the activity the promo page shows"},
		{"order-service", []any{"HSET", "promo:sku:1001", "couponAmount", "10", "promoTotal", "30"}, "its settle preview, into the same key"},
		{"promo-service", []any{"HSET", "promo:sku:1002", "activityId", "12346", "discountType", "2", "discountValue", "20"}, "no TTL"},
		{"promo-service", []any{"HSET", "promo:sku:1003", "activityId", "12347", "discountType", "1", "discountValue", "5"}, ""},
		{"promo-service", []any{"HSET", "promo:sku:1004", "activityId", "12348", "discountType", "1", "discountValue", "8"}, ""},
		{"order-service", []any{"HSET", "order:sku:1002:settle-preview", "couponAmount", "5", "promoTotal", "20"}, "its own key for the same preview"},
		{"order-service", []any{"HSET", "order:sku:1003:settle-preview", "couponAmount", "0", "promoTotal", "5"}, ""},
		{"order-service", []any{"HSET", "order:sku:1004:settle-preview", "couponAmount", "2", "promoTotal", "8"}, ""},
		{"order-service", []any{"HSET", "order:sku:1005:settle-preview", "couponAmount", "1", "promoTotal", "9"}, ""},
		{"order-service", []any{"HSET", "order:order:1001:base", "status", "paid", "amount", "100"}, ""},
		{"order-service", []any{"EXPIRE", "order:order:1001:base", "3600"}, ""},
		{"catalog-service", []any{"SET", "cache:product:detail:P1001", `{"name":"phone","price":1999}`}, "no TTL: cache keys pile up"},
		{"auth-service", []any{"SET", "rate:login:18812345678", "3", "EX", "70"}, "a phone number in clear"},
		{"someone", []any{"SET", "tmp_data_20240321150322", "x"}, "a time stamp in the name, no TTL"},
		{"someone", []any{"SET", "user_1024_token", "abc"}, "no separator, no TTL"},
		{"someone", []any{"SET", "12345:info", "{}"}, "starts with an ID"},
		{"order-service", []any{"SET", "lock:order:pay:ORD20240321001", "1", "EX", "30"}, ""},
		{"order-service", []any{"INCR", "seq:order:no"}, "persistent by design"},
	}
	for _, s := range steps {
		if err := r.Do(ctx, s.cmd...).Err(); err != nil {
			return fmt.Errorf("demo write %v: %w", s.cmd, err)
		}
		note := ""
		if s.note != "" {
			note = "   # " + s.note
		}
		fmt.Fprintf(d.w, "  %-16s %s%s\n", s.who+":", strings.Join(strs(s.cmd), " "), note)
	}
	fields, err := r.HGetAll(ctx, "promo:sku:1001").Result()
	if err != nil {
		return err
	}
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	sort.Strings(names)
	fmt.Fprintf(d.w, "\n  HGETALL promo:sku:1001 → %s\n", strings.Join(names, ", "))
	fmt.Fprintln(d.w, "  Both writers think all is well; every reader now sees two shapes in one value.")
	return nil
}

func strs(args []any) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = fmt.Sprint(a)
		if strings.ContainsAny(out[i], " \"{") {
			out[i] = fmt.Sprintf("'%s'", out[i])
		}
	}
	return out
}

// classify walks the embedded server with SCAN and checks each key.
func (d *demo) classify() error {
	d.title("What is in Redis: SCAN + TTL + keyguard check")
	var keys []string
	var cursor uint64
	for {
		batch, next, err := d.rdb.Scan(d.ctx, cursor, "*", 100).Result()
		if err != nil {
			return err
		}
		keys = append(keys, batch...)
		if cursor = next; cursor == 0 {
			break
		}
	}
	sort.Strings(keys)
	chk := d.reg.NewChecker()
	counts := map[string]int{}
	for _, k := range keys {
		ttl, err := d.rdb.PTTL(d.ctx, k).Result()
		if err != nil {
			return err
		}
		var fds []finding.Finding
		res := chk.Check(k, func(f finding.Finding) { fds = append(fds, f) })
		where := "unregistered (looks like " + res.Inferred + ")"
		if res.Entry != nil {
			where = res.Entry.Key + " owner=" + res.Entry.Owner
			if ttl < 0 && !res.Entry.Persistent {
				fds = append(fds, finding.Finding{Rule: finding.NoTTL, Severity: finding.Error, Message: "no TTL, but the registry says " + res.Entry.TTLText()})
			}
		} else if ttl < 0 {
			fds = append(fds, finding.Finding{Rule: finding.NoTTL, Severity: finding.Warning, Message: "no TTL"})
		}
		fmt.Fprintf(d.w, "  %-30s %-8s %s\n", k, ttlShort(ttl), where)
		for _, f := range fds {
			counts[f.Rule]++
			fmt.Fprintf(d.w, "      %s %s: %s\n", f.Severity, f.Rule, f.Message)
		}
	}
	rules := make([]string, 0, len(counts))
	for r := range counts {
		rules = append(rules, r)
	}
	sort.Strings(rules)
	fmt.Fprintf(d.w, "\n  %d keys; findings by rule:", len(keys))
	for _, r := range rules {
		fmt.Fprintf(d.w, " %s=%d", r, counts[r])
	}
	fmt.Fprintln(d.w)
	fmt.Fprintln(d.w, "\n  promo:sku:1001 belongs to the promo team; the order team's own home for its preview is")
	fmt.Fprintln(d.w, "  order:sku:{skuId:int}:settle-preview. Nothing on this path stops the wrong writer yet.")
	return nil
}

func ttlShort(ttl time.Duration) string {
	if ttl < 0 {
		return "no-ttl"
	}
	return registry.FormatTTL(ttl / time.Second * time.Second)
}

// builders shows keys built through the package keyguard gen wrote from
// the demo registry (internal/demodata/keys), and what they refuse.
func (d *demo) builders() error {
	d.title("Keys from the generated builder package (keyguard gen --lang go)")
	show := func(call string, k keybuild.Key, err error) {
		if err != nil {
			msg := strings.ReplaceAll(err.Error(), "\n\t", "\n"+strings.Repeat(" ", 51))
			fmt.Fprintf(d.w, "  %-48s refused: %s\n", call, msg)
			return
		}
		ttl := "persistent"
		if !k.Persistent() {
			ttl = registry.FormatTTL(k.TTL())
		}
		fmt.Fprintf(d.w, "  %-48s %s  (%s, ttl %s, owner %s)\n", call, k, k.Type(), ttl, k.Owner())
		if e := d.reg.Lookup(k.String()); e == nil || e.Key != k.Template() {
			fmt.Fprintf(d.w, "  %-48s !! the matcher classifies it elsewhere\n", "")
		}
	}
	show("keys.PromoSku(1001)", keys.PromoSku(1001), nil)
	show("keys.OrderSettlePreview(1001)", keys.OrderSettlePreview(1001), nil)
	k, err := keys.VerifySMS("13800138000", keys.VerifySMSSceneLogin)
	show(`keys.VerifySMS("13800138000", …SceneLogin)`, k, err)
	k, err = keys.LockOrderPay("ORD:1001")
	show(`keys.LockOrderPay("ORD:1001")`, k, err)
	k, err = keys.ProductDetail("P1001\n")
	show(`keys.ProductDetail("P1001\n")`, k, err)
	fmt.Fprintln(d.w, "\n  The phone number never reaches Redis: the builder stores a hash of it. Values that")
	fmt.Fprintln(d.w, "  would move a key to another template or slot (separators, braces, newlines) are refused.")
	return nil
}

// sdk replays the incident through the runtime SDK: the order service's
// write to the promo team's key is refused before it is sent (hook) or by
// the server-side guard, the metrics count it, and the writer records name
// the second writer.
func (d *demo) sdk() error {
	d.title("The same incident through the SDK (hook, guard, metrics, keyguard writers)")
	ctx := d.ctx
	metrics := prometheus.NewRegistry()
	rec := redishook.NewRecorder(d.rdb, redishook.RecorderOptions{})
	var hooks []*redishook.Hook
	client := func(service string, mode redishook.Mode) (*redis.Client, error) {
		opt := &redis.Options{Addr: d.srv.Addr()}
		if err := redishook.NameConnections(opt, service); err != nil {
			return nil, err
		}
		c := redis.NewClient(opt)
		h := redishook.New(d.reg, redishook.Options{Service: service, Mode: mode, Registerer: metrics, Recorder: rec})
		if err := h.Err(); err != nil {
			return nil, err
		}
		h.Install(c)
		hooks = append(hooks, h)
		return c, nil
	}
	promo, err := client("promo-team", redishook.Enforce)
	if err != nil {
		return err
	}
	defer promo.Close()
	order, err := client("order-team", redishook.Enforce)
	if err != nil {
		return err
	}
	defer order.Close()
	legacy, err := client("order-team", redishook.Observe) // a service not yet switched to enforce
	if err != nil {
		return err
	}
	defer legacy.Close()
	legacyHook := hooks[2]

	key := keys.PromoSku(2001)
	e := d.reg.Lookup(key.String())
	opts := guard.Options{TTL: e.TTL, Jitter: e.TTLJitter, Persistent: e.Persistent}
	promoGuard := guard.New(promo, "promo-team", opts)
	res, err := promoGuard.SetMany(ctx, key.String(), map[string]any{"activityId": 12345, "discountType": 1, "discountValue": 50})
	if err != nil {
		return fmt.Errorf("demo guarded write: %w", err)
	}
	fmt.Fprintf(d.w, "  promo-team  guard.SetMany(%s)            ok: %d fields added, owner claimed=%v, TTL set=%v\n", key, res.Added, res.Claimed, res.TTLSet)
	for _, id := range []int64{2004, 2005} { // more of the promo team's activities
		if _, err := promoGuard.SetMany(ctx, keys.PromoSku(id).String(), map[string]any{"activityId": id, "discountType": 2, "discountValue": 20}); err != nil {
			return fmt.Errorf("demo guarded write: %w", err)
		}
	}

	err = order.HSet(ctx, key.String(), "couponAmount", 10, "promoTotal", 30).Err()
	var denied *redishook.DeniedError
	if !errors.As(err, &denied) {
		return fmt.Errorf("demo: the order team's write was not refused (err = %v)", err)
	}
	fmt.Fprintf(d.w, "  order-team  HSET %s couponAmount 10 …  refused before sending:\n      %v\n", key, denied)

	_, err = guard.New(legacy, "order-team", opts).SetMany(ctx, key.String(), map[string]any{"couponAmount": 10})
	var conflict *guard.ConflictError
	if !errors.As(err, &conflict) {
		return fmt.Errorf("demo: the guard did not refuse the order team (err = %v)", err)
	}
	legacyHook.GuardConflictKey(conflict.Key, conflict.Owner)
	fmt.Fprintf(d.w, "  order-team  guard.SetMany(%s) (observe-mode client)  refused by the server-side guard:\n      %v\n", key, conflict)

	for _, id := range []int64{2004, 2005} {
		if err := legacy.HSet(ctx, keys.PromoSku(id).String(), "couponAmount", 10, "promoTotal", 30).Err(); err != nil {
			return err
		}
	}
	fmt.Fprintf(d.w, "  order-team  HSET %s, 2005 couponAmount 10 … (observe mode, no guard)  went through, and were recorded\n", keys.PromoSku(2004))

	return d.sdkRecords(ctx, rec, metrics)
}

// sdkRecords shows what the SDK recorded of the incident: the writer
// records, as keyguard writers reads them, and the hook's metrics.
func (d *demo) sdkRecords(ctx context.Context, rec *redishook.Recorder, metrics *prometheus.Registry) error {
	if err := rec.Flush(ctx); err != nil {
		return fmt.Errorf("demo writer records: %w", err)
	}
	tws, err := redishook.ReadWriters(ctx, d.rdb, d.reg, time.Now().Add(-24*time.Hour))
	if err != nil {
		return err
	}
	fmt.Fprintln(d.w, "\n  keyguard writers (second-writer detection over the last 24h):")
	for _, tw := range tws {
		mark := "ok"
		if tw.Violation() {
			mark = "VIOLATION"
		}
		var ws []string
		for _, w := range tw.Writers {
			s := w.Service
			if !w.Allowed {
				s += " (not allowed)"
			}
			ws = append(ws, s)
		}
		fmt.Fprintf(d.w, "    %-28s %-9s writers: %s\n", tw.Template, mark, strings.Join(ws, ", "))
	}

	fmt.Fprintln(d.w, "\n  Metrics (what /metrics would serve), non-zero series:")
	families, err := metrics.Gather()
	if err != nil {
		return err
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			v := m.GetCounter().GetValue()
			if v == 0 {
				continue
			}
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+fmt.Sprintf("%q", l.GetValue()))
			}
			fmt.Fprintf(d.w, "    %s{%s} %g\n", f.GetName(), strings.Join(labels, ","), v)
		}
	}
	return nil
}

// audit runs keyguard audit against the embedded server: the inventory an
// SRE reads, with every key rule applied; then the value formats again
// with the fields learned from the values instead of declared.
func (d *demo) audit() error {
	d.title("keyguard audit of the embedded server (what an SRE runs against production)")
	target := live.Target{Conn: live.Conn{Addr: d.srv.Addr()}, Display: "demo"}
	res, err := live.Run(d.ctx, d.reg, target, live.Options{})
	if err != nil {
		return fmt.Errorf("demo audit: %w", err)
	}
	rep := res.Report
	rep.Prefixes = report.PrefixTree(rep.Groups, d.reg.Separator, report.DefaultPrefixDepth)
	if err := rep.WriteText(d.w, report.TextOptions{}); err != nil {
		return err
	}
	fmt.Fprintln(d.w, "\n  The registry declares the fields of promo:sku and of the order team's settle preview.")
	fmt.Fprintln(d.w, "  Without those declarations keyguard learns each template's fields from its values:")
	learned, err := registry.Parse(d.reg.File, []byte(strings.ReplaceAll(string(demodata.Registry), "    fields: ", "    # fields: ")))
	if err != nil {
		return fmt.Errorf("demo registry without fields: %w", err)
	}
	res, err = live.Run(d.ctx, learned, target, live.Options{})
	if err != nil {
		return fmt.Errorf("demo audit: %w", err)
	}
	for _, f := range res.Report.Findings {
		if f.Rule == finding.MixedSchema {
			fmt.Fprintf(d.w, "    %s %s: %s\n", f.Rule, f.Key, f.Message)
		}
	}
	return nil
}
