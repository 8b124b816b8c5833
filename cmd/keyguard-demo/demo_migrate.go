package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/dualwrite"
	"github.com/keyguard/keyguard/internal/migrate"
)

// migrate moves the order team's settle preview out of the promo team's
// hashes (promo:sku:1001 of the incident) into its registered home,
// order:sku:{skuId:int}:settle-preview, while the order service keeps
// writing: plan, dual-write, copy, read with fallback, verify, cleanup.
func (d *demo) migrate() error {
	d.title("Moving the order team's preview out of promo:sku:1001 while it keeps writing (keyguard migrate, dualwrite)")
	plan, err := migrate.NewPlan(d.reg, "promo:sku:{skuId:int}", "order:sku:{skuId:int}:settle-preview",
		migrate.PlanOptions{Fields: []string{"couponAmount", "promoTotal"}})
	if err != nil {
		return fmt.Errorf("demo migrate plan: %w", err)
	}
	samples, err := plan.Samples(d.ctx, d.rdb, 3)
	if err != nil {
		return fmt.Errorf("demo migrate plan: %w", err)
	}
	fmt.Fprintln(d.w, "  keyguard migrate plan --from 'promo:sku:{skuId:int}' --to 'order:sku:{skuId:int}:settle-preview' --fields couponAmount,promoTotal")
	if err := plan.WriteText(indent(d.w, "    "), samples); err != nil {
		return err
	}
	d.serverSupport()

	metrics := prometheus.NewRegistry()
	writer, err := dualwrite.NewWriter(d.rdb, plan.Plan, dualwrite.Options{Registerer: metrics})
	if err != nil {
		return err
	}
	reader, err := dualwrite.NewReader(d.rdb, plan.Plan, dualwrite.Options{Percent: 100, Registerer: metrics})
	if err != nil {
		return err
	}
	if err := d.dualWrite(writer, reader); err != nil {
		return err
	}
	last, err := d.copyWhileWriting(plan, writer)
	if err != nil {
		return err
	}
	if err := d.verifyAndClean(plan); err != nil {
		return err
	}
	fmt.Fprintf(d.w, "  (promoTotal %d is the writer's last value: no update was lost)\n", last)
	return d.readMetrics(metrics)
}

// preview is the order service's write: its settle preview, whole.
func (d *demo) preview(total int) dualwrite.Write {
	return func(p redis.Pipeliner, key string) { p.HSet(d.ctx, key, "couponAmount", 10, "promoTotal", total) }
}

// dualWrite shows a read before and after the first dual write.
func (d *demo) dualWrite(writer *dualwrite.Writer, reader *dualwrite.Reader) error {
	read := func(format string) error {
		v, src, err := reader.HMGet(d.ctx, "promo:sku:1001", "couponAmount", "promoTotal")
		if err == nil {
			fmt.Fprintf(d.w, format, v, src)
		}
		return err
	}
	if err := read("\n  order-service readers, 100%% rolled out: promo:sku:1001 → %v from the %s key (the new one is empty)\n"); err != nil {
		return err
	}
	if _, err := writer.Replace(d.ctx, "promo:sku:1001", d.preview(30)); err != nil {
		return fmt.Errorf("demo dual write: %w", err)
	}
	fmt.Fprintln(d.w, "  order-service deploys the dual-writer: every preview goes to both keys, one TTL, one MULTI:")
	fmt.Fprintln(d.w, "    writer.Replace(ctx, \"promo:sku:1001\", HSET couponAmount 10 promoTotal 30)")
	fmt.Fprintln(d.w, "    → promo:sku:1001 (its two fields; the promo team's stay) and order:sku:1001:settle-preview")
	return read("  readers: promo:sku:1001 → %v from the %s key\n")
}

// copyWhileWriting runs the copy while the writer keeps writing
// promo:sku:1001 (before, during and after it), and returns the writer's
// last promoTotal.
func (d *demo) copyWhileWriting(plan *migrate.Plan, writer *dualwrite.Writer) (int, error) {
	var wg sync.WaitGroup
	stop := make(chan struct{})
	last, writes := 30, 0
	var werr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for total := 31; ; total++ {
			if _, werr = writer.Replace(d.ctx, "promo:sku:1001", d.preview(total)); werr != nil {
				return
			}
			last, writes = total, writes+1
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	time.Sleep(20 * time.Millisecond)
	res, err := plan.Copy(d.ctx, d.rdb, migrate.Options{Rate: 1000})
	time.Sleep(20 * time.Millisecond)
	close(stop)
	wg.Wait()
	if err == nil {
		err = werr
	}
	if err != nil {
		return 0, fmt.Errorf("demo migrate copy: %w", err)
	}
	fmt.Fprintf(d.w, "\n  keyguard migrate copy …   (meanwhile the writer rewrote promo:sku:1001 %d times, before, during and after the copy)\n", writes)
	return last, res.WriteText(indent(d.w, "    "))
}

// verifyAndClean verifies, cleans up and shows the two hashes.
func (d *demo) verifyAndClean(plan *migrate.Plan) error {
	ver, err := plan.Verify(d.ctx, d.rdb, migrate.Options{})
	if err != nil {
		return fmt.Errorf("demo migrate verify: %w", err)
	}
	fmt.Fprintln(d.w, "\n  keyguard migrate verify …")
	if err := ver.WriteText(indent(d.w, "    ")); err != nil {
		return err
	}
	fmt.Fprintln(d.w, "\n  After a business cycle the order service writes only its own key, and:")
	fmt.Fprintln(d.w, "  keyguard migrate cleanup … --confirm")
	cl, err := plan.Cleanup(d.ctx, d.rdb, migrate.Options{})
	if err != nil {
		return fmt.Errorf("demo migrate cleanup: %w", err)
	}
	if err := cl.WriteText(indent(d.w, "    ")); err != nil {
		return err
	}
	for _, k := range []string{"promo:sku:1001", "order:sku:1001:settle-preview"} {
		h, err := d.rdb.HGetAll(d.ctx, k).Result()
		if err != nil {
			return err
		}
		fmt.Fprintf(d.w, "  HGETALL %-30s → %s\n", k, fieldList(h))
	}
	return nil
}

// serverSupport says which of COPY, DUMP and RESTORE the embedded server
// has, and what migrate does without them.
func (d *demo) serverSupport() {
	ctx := d.ctx
	copyOK := d.rdb.Do(ctx, "COPY", "keyguard:demo:none", "keyguard:demo:none2").Err() == nil
	dumpOK := d.rdb.Dump(ctx, "promo:sku:1001").Err() == nil
	fmt.Fprintf(d.w, "\n  The embedded server: COPY %s, DUMP/RESTORE %s.\n", yesNo(copyOK, "no"), yesNo(dumpOK, "for strings only"))
	fmt.Fprintln(d.w, "  Moving fields needs neither (atomic HMGET and HSET scripts); a whole-key copy on one node would")
	fmt.Fprintln(d.w, "  use COPY, and verify compares values read with HGETALL where DUMP cannot serialize them.")
	fmt.Fprintln(d.w, "  On a real Redis Cluster, keys in two slots travel with DUMP and RESTORE … ABSTTL.")
}

func yesNo(ok bool, no string) string {
	if ok {
		return "yes"
	}
	return no
}

func (d *demo) readMetrics(g prometheus.Gatherer) error {
	families, err := g.Gather()
	if err != nil {
		return err
	}
	fmt.Fprintln(d.w, "\n  What the service's /metrics shows (fallback reads dry up once the copy is done):")
	for _, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" {
					labels = append(labels, l.GetName()+"="+fmt.Sprintf("%q", l.GetValue()))
				}
			}
			v := m.GetCounter().GetValue() + m.GetGauge().GetValue()
			name := f.GetName()
			if len(labels) > 0 {
				name += "{" + strings.Join(labels, ",") + "}"
			}
			fmt.Fprintf(d.w, "    %s %g\n", name, v)
		}
	}
	return nil
}

func fieldList(h map[string]string) string {
	var out []string
	for _, f := range slices.Sorted(maps.Keys(h)) {
		out = append(out, f+"="+h[f])
	}
	if len(out) == 0 {
		return "(gone)"
	}
	return strings.Join(out, " ")
}

// indent prefixes every line written to w.
func indent(w io.Writer, prefix string) *prefixWriter {
	return &prefixWriter{w: w, prefix: prefix, bol: true}
}

type prefixWriter struct {
	w      io.Writer
	prefix string
	bol    bool
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	var out []byte
	for _, c := range b {
		if p.bol {
			out = append(out, p.prefix...)
		}
		out = append(out, c)
		p.bol = c == '\n'
	}
	if _, err := p.w.Write(out); err != nil {
		return 0, err
	}
	return len(b), nil
}
