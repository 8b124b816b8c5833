package migrate

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/audit/live"
	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/internal/jsonout"
	"github.com/keyguard/keyguard/internal/resp/redisopt"
	"github.com/keyguard/keyguard/registry"
)

// Sample is an old key and the new key it maps to (or why it has none).
type Sample struct {
	Old   string `json:"old"`
	New   string `json:"new,omitempty"`
	Error string `json:"error,omitempty"`
}

// Samples returns up to n keys of the old template found on the masters
// with the audit's walk (every slot of a Cluster), and their new keys. It
// only reads.
func (p *Plan) Samples(ctx context.Context, rdb redis.UniversalClient, n int) ([]Sample, error) {
	cfg, addrs, db, cluster, err := redisopt.Reach(ctx, rdb)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	var out []Sample
	_, err = live.Walk(ctx, live.TargetOf(cfg, addrs, db, cluster), live.WalkOptions{
		Match: p.Glob(),
		Name:  "keyguard-migrate",
		Visit: func(_ context.Context, b *live.Batch) error {
			mu.Lock()
			defer mu.Unlock()
			for _, k := range b.Keys {
				if len(out) < n && p.Owns(k) {
					out = append(out, p.sample(k))
				}
			}
			if len(out) >= n {
				cancel() // enough: the samples need no more
			}
			return nil
		},
	})
	if err != nil && ctx.Err() == nil {
		return nil, fmt.Errorf("find samples: %w", err)
	}
	mu.Lock()
	defer mu.Unlock()
	slices.SortFunc(out, func(a, b Sample) int { return strings.Compare(a.Old, b.Old) })
	return out, nil
}

func (p *Plan) sample(old string) Sample {
	nk, _, err := p.Map(old)
	if err != nil {
		return Sample{Old: old, Error: err.Error()}
	}
	return Sample{Old: old, New: nk}
}

// ExampleSamples is one typical old key of the template and its new key,
// for a plan shown without a server.
func (p *Plan) ExampleSamples() []Sample {
	return []Sample{p.sample(p.OldTemplate().Example())}
}

// WriteText writes the plan for a person: the two templates, what changes,
// how each placeholder's value travels, the samples and the notes.
func (p *Plan) WriteText(w io.Writer, samples []Sample) error {
	bw := &errWriter{w: w}
	bw.printf("%s → %s\n", p.From, p.To)
	from := "not registered"
	if p.FromEntry != nil {
		from = p.FromEntry.Owner + ", " + ttlText(p.FromEntry)
	}
	bw.printf("  %s, %s → %s, %s\n", p.Type, from, p.ToEntry.Owner, ttlText(p.ToEntry))
	if p.Fields != nil {
		bw.printf("  moves the hash fields %s\n", strings.Join(p.Fields, ", "))
	}
	for _, m := range p.Mappings {
		bw.printf("  {%s}: %s → %s, %s\n", m.Name, m.FromKind, m.ToKind, m.Conv)
	}
	bw.printf("  keys: SCAN MATCH %s on every master\n", p.Glob())
	for _, s := range samples {
		if s.Error != "" {
			bw.printf("    %s  (not copied: %s)\n", s.Old, s.Error)
		} else {
			bw.printf("    %s → %s\n", s.Old, s.New)
		}
	}
	for _, n := range p.Notes {
		bw.printf("  note: %s\n", n)
	}
	return bw.err
}

func ttlText(e *registry.Entry) string {
	if e.Persistent {
		return "persistent"
	}
	return "ttl " + registry.FormatTTL(e.TTL)
}

// planJSON is a plan as `keyguard migrate plan --format json` writes it.
type planJSON struct {
	From      string    `json:"from"`
	To        string    `json:"to"`
	Type      string    `json:"type"`
	FromOwner string    `json:"from_owner,omitempty"`
	ToOwner   string    `json:"to_owner"`
	Fields    []string  `json:"fields,omitempty"`
	Mappings  []mapJSON `json:"placeholders"`
	Match     string    `json:"match"`
	Samples   []Sample  `json:"samples"`
	Notes     []string  `json:"notes"`
}

type mapJSON struct {
	Name       string `json:"name"`
	From       string `json:"from"`
	To         string `json:"to"`
	Conversion string `json:"conversion"` // same, check or hash
}

// WritePlansJSON writes plans with their samples (samples[i] for plans[i]).
func WritePlansJSON(w io.Writer, plans []*Plan, samples [][]Sample) error {
	out := struct {
		Plans []planJSON `json:"plans"`
	}{Plans: []planJSON{}}
	for i, p := range plans {
		pj := planJSON{From: p.From, To: p.To, Type: p.Type, ToOwner: p.ToEntry.Owner, Fields: p.Fields, Match: p.Glob(), Samples: samples[i], Notes: p.Notes}
		if p.FromEntry != nil {
			pj.FromOwner = p.FromEntry.Owner
		}
		for _, m := range p.Mappings {
			pj.Mappings = append(pj.Mappings, mapJSON{m.Name, m.FromKind, m.ToKind, [...]string{"same", "check", "hash"}[m.Conv]})
		}
		out.Plans = append(out.Plans, pj)
	}
	return encode(w, out)
}

// WriteResultsJSON writes the results of one command run against target.
func WriteResultsJSON(w io.Writer, target string, results []*Result) error {
	return encode(w, struct {
		Target  string    `json:"target"`
		Results []*Result `json:"results"`
	}{target, results})
}

func encode(w io.Writer, v any) error {
	return jsonout.Write(w, v)
}

// WriteText writes the result for a person.
func (r *Result) WriteText(w io.Writer) error {
	bw := &errWriter{w: w}
	c := &r.Counts
	head := r.Op + " " + r.From + " → " + r.To
	if r.Fields != nil {
		head += " (fields " + strings.Join(r.Fields, ", ") + ")"
	}
	if r.DryRun {
		head += "  [dry run: nothing written]"
	}
	bw.printf("%s\n", head)
	would := ""
	if r.DryRun {
		would = "would be "
	}
	bw.printf("  %s keys of the old template (%s scanned)\n", human.Count(c.Keys), human.Count(c.Scanned))
	if r.Coverage != nil {
		bw.printf("  walked: %s\n", r.Coverage.Summary())
		for _, g := range r.Coverage.NotCovered {
			bw.printf("  NOT COVERED %s\n", g.String())
		}
	}
	var parts []string
	add := func(n int64, what string) {
		if n > 0 {
			parts = append(parts, human.Count(n)+" "+what)
		}
	}
	switch r.Op {
	case opCopy:
		add(c.Copied, would+"copied")
		add(c.TTLSet, "of them with an expiry set by the new template's TTL")
		add(c.TTLBreaks, "of them keep an expiry that breaks the new template (--keep-ttl)")
		add(c.Existing, "skipped: the new key exists (never overwritten without --overwrite)")
	case opVerify:
		add(c.Verified, "verified")
		add(c.Mismatched-c.NotFit-c.WrongType, "mismatched")
	case opCleanup:
		add(c.Removed, would+"removed (verified)")
		add(c.Tombstoned, "of them kept as tombstones until the grace period ends (cleanup --restore brings them back)")
		add(c.Mismatched-c.NotFit-c.WrongType, "left: they do not verify")
		add(c.Changed, "left: changed since verified")
		add(c.Rechecked, "tombstones of earlier deletes checked again: their new key still verifies")
		add(c.Restored, would+"put back from their tombstones: their new key no longer verifies")
	case opRestore:
		add(c.Restored, would+"restored from their tombstones")
		add(c.Existing, "left: the old key was written again since (newer)")
	}
	add(c.Expired, "expired meanwhile")
	add(c.NotFit, "do not fit the new template (left alone)")
	add(c.WrongType, "not a "+r.Type+" (left alone)")
	add(c.NoFields, "hold none of the fields")
	if len(parts) > 0 {
		bw.printf("  %s\n", strings.Join(parts, ", "))
	}
	for _, m := range r.Mismatches {
		bw.printf("  MISMATCH %s: %s: %s\n", m.Old, m.Kind, m.Detail)
	}
	if r.MoreMismatches > 0 {
		bw.printf("  … and %s more mismatches\n", human.Count(r.MoreMismatches))
	}
	for _, m := range r.Warnings {
		bw.printf("  WARNING %s: %s: %s\n", m.Old, m.Kind, m.Detail)
	}
	if r.MoreWarnings > 0 {
		bw.printf("  … and %s more warnings\n", human.Count(r.MoreWarnings))
	}
	rate := ""
	if s := r.Duration.Seconds(); s > 0 && r.RunKeys > 0 {
		rate = fmt.Sprintf(", %s keys/s", human.Count(int64(float64(r.RunKeys)/s)))
	}
	if r.Complete {
		bw.printf("  complete in %s%s\n", r.Duration.Round(1e6), rate)
	} else {
		bw.printf("  STOPPED (%s) after %s%s: run the same command again to continue\n", r.Stopped, r.Duration.Round(1e6), rate)
	}
	if r.ResumedOf != "" {
		bw.printf("  resumed from %s: %s in this run, %s before it\n", r.ResumedOf, human.Plural(r.RunKeys, "key"), human.Count(c.Keys-r.RunKeys))
	}
	for _, n := range r.Notes {
		bw.printf("  note: %s\n", n)
	}
	return bw.err
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}
