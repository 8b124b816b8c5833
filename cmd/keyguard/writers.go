package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/keyguard/keyguard/redishook"
	"github.com/keyguard/keyguard/registry"
)

// runWriters lists who wrote which template, from the records the SDK's
// redishook.Recorder flushes to Redis (seed 000 §5.3: a second writer of a
// key within 24 hours is the warning sign of a conflict). It exits 1 when
// a writer is not allowed by the template's owner/writers: cron it.
func runWriters(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "writers", "writers --redis URL [--cluster] [--registry FILE] [--window 24h] [--format text|json]",
		"  keyguard writers --redis redis://127.0.0.1:6379\n"+
			"  keyguard writers --redis redis://10.0.0.1:7000,10.0.0.2:7000 --cluster --window 1h --format json\n"+
			"  # cron: alert when a service writes a template it does not own\n"+
			"  keyguard writers --redis \"$KEYGUARD_REDIS\" >/dev/null || page-oncall")
	fs.registryFlag(e)
	fs.redisFlags(e)
	fs.outputFlags("text", "json")
	window := fs.Duration("window", redishook.DefaultWindow, "how far back to look (records are kept 24h by default)")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("writers takes no arguments; got %q", pos[0])
	}
	if *window <= 0 {
		return usagef("--window %v: give a positive duration such as 24h", *window)
	}
	reg, err := fs.loadRegistry()
	if err != nil {
		return err
	}
	target, err := fs.redisTarget()
	if err != nil {
		return err
	}
	rdb, err := connectRedis(ctx, target)
	if err != nil {
		return err
	}
	defer rdb.Close()
	now := time.Now()
	tws, err := redishook.ReadWriters(ctx, rdb, reg, now.Add(-*window))
	if err != nil {
		return fmt.Errorf("%w\n\tTry: check that the services run the SDK with a redishook.Recorder on this server", err)
	}
	out, err := fs.openOutput(e)
	if err != nil {
		return err
	}
	if fs.opts.format == "json" {
		err = writeWritersJSON(out, target.display, *window, now, tws)
	} else {
		err = writeWritersText(out, *window, now, tws)
	}
	if cerr := out.close(err == nil); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	for i := range tws {
		if tws[i].Violation() {
			return errFindings
		}
	}
	return nil
}

func writeWritersText(w io.Writer, window time.Duration, now time.Time, tws []redishook.TemplateWriters) error {
	violations, multi := 0, 0
	for i := range tws {
		tw := &tws[i]
		owner := "not in the registry"
		if tw.Entry != nil {
			owner = "owner " + tw.Entry.Owner
			if len(tw.Entry.Writers) > 0 {
				owner += ", writers " + strings.Join(tw.Entry.Writers, ", ")
			}
		}
		mark := ""
		switch {
		case tw.Violation():
			violations++
			mark = "  VIOLATION"
		case len(tw.Writers) > 1:
			multi++
			mark = "  shared"
		}
		fmt.Fprintf(w, "%s  (%s)%s\n", tw.Template, owner, mark)
		for _, wr := range tw.Writers {
			note := ""
			if tw.Entry != nil && !wr.Allowed {
				note = "  NOT ALLOWED: neither the owner nor in writers"
			}
			fmt.Fprintf(w, "  %-24s last write %s (%s ago)%s\n", wr.Service, wr.LastWrite.UTC().Format(time.RFC3339), now.Sub(wr.LastWrite).Round(time.Second), note)
		}
	}
	_, err := fmt.Fprintf(w, "%s written in the last %s: %d with a writer the registry does not allow, %d shared by allowed writers\n",
		plural(len(tws), "template"), registry.FormatTTL(window), violations, multi)
	if violations > 0 {
		fmt.Fprintln(w, "\tTry: move the foreign writer to a template it owns (seed 000 §3.1), or list it in the template's writers if the sharing is intended")
	}
	return err
}

func writeWritersJSON(w io.Writer, target string, window time.Duration, now time.Time, tws []redishook.TemplateWriters) error {
	type writer struct {
		Service   string    `json:"service"`
		LastWrite time.Time `json:"last_write"`
		Allowed   bool      `json:"allowed"`
	}
	type template struct {
		Template   string   `json:"template"`
		ID         string   `json:"id"`
		Registered bool     `json:"registered"`
		Owner      string   `json:"owner,omitempty"`
		Writers    []writer `json:"writers"`
		Violation  bool     `json:"violation"`
	}
	doc := struct {
		Target     string     `json:"target"`
		Window     string     `json:"window"`
		Since      time.Time  `json:"since"`
		Violations int        `json:"violations"`
		Templates  []template `json:"templates"`
	}{Target: target, Window: registry.FormatTTL(window), Since: now.Add(-window).UTC(), Templates: []template{}}
	for i := range tws {
		tw := &tws[i]
		t := template{Template: tw.Template, ID: tw.ID, Registered: tw.Entry != nil, Violation: tw.Violation()}
		if tw.Entry != nil {
			t.Owner = tw.Entry.Owner
		}
		for _, wr := range tw.Writers {
			t.Writers = append(t.Writers, writer{wr.Service, wr.LastWrite.UTC(), wr.Allowed})
		}
		if t.Violation {
			doc.Violations++
		}
		doc.Templates = append(doc.Templates, t)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(doc)
}
