// Package writers says who wrote which template, from the records the
// SDK's redishook.Recorder flushes to Redis, judged against the registry,
// and prints it (text or JSON): keyguard writers. It must not be imported
// by the SDK.
package writers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/cli"
	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/internal/jsonout"
	"github.com/keyguard/keyguard/internal/redisconn"
	"github.com/keyguard/keyguard/redishook"
	"github.com/keyguard/keyguard/registry"
	"github.com/redis/go-redis/v9"
)

// Options are what keyguard writers runs with.
type Options struct {
	Registry  *registry.Registry
	Target    *redisconn.Target
	Window    time.Duration // how far back to look
	Format    string        // text or json
	Out       string
	Threshold finding.Severity
}

// Run reads the records of the last Window and writes them: a second
// writer of a template is the warning sign of a conflict. A writer the
// registry does not allow is an error, no records at all a warning, a
// template shared by allowed writers is info; it returns cli.ErrFindings
// when one reaches the threshold.
func Run(ctx context.Context, e *cli.Env, o Options) error {
	reg, target := o.Registry, o.Target
	rdb, err := redisconn.Connect(ctx, target)
	if err != nil {
		if target.Cluster {
			if msg := redisconn.ClusterTrouble(ctx, target, redishook.RecordIndexKey); msg != "" {
				return errors.New(msg)
			}
		}
		return err
	}
	defer rdb.Close()
	now := time.Now()
	w, err := read(ctx, rdb, reg, now.Add(-o.Window))
	if err != nil {
		return writersError(ctx, target, err)
	}
	w.target, w.window, w.now = target.Display, o.Window, now
	out, err := cli.OpenOutput(e, "--out", o.Out)
	if err != nil {
		return err
	}
	for _, warn := range w.warnings() {
		fmt.Fprintf(e.Stderr, "keyguard writers: warning: %s\n", warn)
	}
	if o.Format == "json" {
		err = w.writeJSON(out)
	} else {
		err = w.writeText(out)
	}
	if err := out.Finish(err); err != nil {
		return err
	}
	if w.failed(o.Threshold) {
		return cli.ErrFindings
	}
	return nil
}

// writers is what the records say, judged.
type writers struct {
	tws     []redishook.TemplateWriters
	indexed int64 // templates the records name at all, however old
	target  string
	window  time.Duration
	now     time.Time
}

func read(ctx context.Context, c redis.Cmdable, reg *registry.Registry, since time.Time) (*writers, error) {
	tws, err := redishook.ReadWriters(ctx, c, reg, since)
	if err != nil {
		return nil, err
	}
	w := &writers{tws: tws, indexed: int64(len(tws))}
	if len(tws) == 0 {
		if w.indexed, err = redishook.IndexedTemplates(ctx, c); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// writersError says why the records could not be read: a Cluster node
// down, a connection lost, a key of another type where the records live,
// or an ACL user that may not read them.
func writersError(ctx context.Context, t *redisconn.Target, err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "WRONGTYPE"):
		return fmt.Errorf("%w\n\tTry: %s* are the SDK's writer records; another program wrote a key of another type there: rename or delete it", err, redishook.RecordPrefix)
	case strings.Contains(msg, "NOPERM"):
		return fmt.Errorf("%w\n\tTry: let the user read the records: ACL SETUSER <user> +hgetall +hlen +zrevrangebyscore ~%s*", err, redishook.RecordPrefix)
	}
	if t.Cluster {
		if m := redisconn.ClusterTrouble(ctx, t, redishook.RecordIndexKey); m != "" {
			return errors.New(m)
		}
	}
	return t.ConnError(err)
}

// severity of one template's records: error when a writer is not
// allowed, info when allowed writers share it.
func templateSeverity(tw *redishook.TemplateWriters) (finding.Severity, bool) {
	switch {
	case tw.Violation():
		return finding.Error, true
	case len(tw.Writers) > 1:
		return finding.Info, true
	}
	return finding.Info, false
}

// warnings say when the records cannot be trusted to show a conflict.
func (w *writers) warnings() []string {
	if len(w.tws) > 0 {
		return nil
	}
	how := "services record with redishook.NewRecorder(client, redishook.RecorderOptions{}), passed as redishook.Options{Recorder: rec} to the hook, and rec.Start(ctx) (or rec.Close() at exit)"
	if w.indexed == 0 {
		return []string{fmt.Sprintf("no writer records at all on %s: the services' SDK may not be recording, or records to another server or database; %s", w.target, how)}
	}
	return []string{fmt.Sprintf("no writes recorded in the last %s on %s, though %d templates have older records: the services may have stopped recording; %s",
		registry.FormatDuration(w.window), w.target, w.indexed, how)}
}

// failed reports whether something in the records reaches threshold.
func (w *writers) failed(threshold finding.Severity) bool {
	if len(w.warnings()) > 0 && finding.Warning.AtLeast(threshold) {
		return true
	}
	for i := range w.tws {
		if s, ok := templateSeverity(&w.tws[i]); ok && s.AtLeast(threshold) {
			return true
		}
	}
	return false
}

func (w *writers) writeText(out io.Writer) error {
	violations, multi := 0, 0
	for i := range w.tws {
		tw := &w.tws[i]
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
		fmt.Fprintf(out, "%s  (%s)%s\n", tw.Template, owner, mark)
		for _, wr := range tw.Writers {
			note := ""
			if tw.Entry != nil && !wr.Allowed {
				note = "  NOT ALLOWED: neither the owner nor in writers"
			}
			fmt.Fprintf(out, "  %-24s last write %s (%s ago)%s\n", wr.Service, wr.LastWrite.UTC().Format(time.RFC3339), w.now.Sub(wr.LastWrite).Round(time.Second), note)
		}
	}
	_, err := fmt.Fprintf(out, "%s written in the last %s: %d with a writer the registry does not allow, %d shared by allowed writers\n",
		human.Plural(len(w.tws), "template"), registry.FormatDuration(w.window), violations, multi)
	if violations > 0 {
		fmt.Fprintln(out, "\tTry: move the foreign writer to a template it owns, or list it in the template's writers if the sharing is intended")
	}
	return err
}

func (w *writers) writeJSON(out io.Writer) error {
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
		Severity   string   `json:"severity,omitempty"`
	}
	doc := struct {
		Target     string     `json:"target"`
		Window     string     `json:"window"`
		Since      time.Time  `json:"since"`
		Violations int        `json:"violations"`
		Indexed    int64      `json:"templates_recorded"`
		Warnings   []string   `json:"warnings"`
		Templates  []template `json:"templates"`
	}{Target: w.target, Window: registry.FormatDuration(w.window), Since: w.now.Add(-w.window).UTC(), Indexed: w.indexed,
		Warnings: w.warnings(), Templates: []template{}}
	if doc.Warnings == nil {
		doc.Warnings = []string{}
	}
	for i := range w.tws {
		tw := &w.tws[i]
		t := template{Template: tw.Template, ID: tw.ID, Registered: tw.Entry != nil, Violation: tw.Violation()}
		if tw.Entry != nil {
			t.Owner = tw.Entry.Owner
		}
		if s, ok := templateSeverity(tw); ok {
			t.Severity = s.String()
		}
		for _, wr := range tw.Writers {
			t.Writers = append(t.Writers, writer{wr.Service, wr.LastWrite.UTC(), wr.Allowed})
		}
		if t.Violation {
			doc.Violations++
		}
		doc.Templates = append(doc.Templates, t)
	}
	return jsonout.Write(out, doc)
}
