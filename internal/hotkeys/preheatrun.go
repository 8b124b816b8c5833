package hotkeys

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/keyguard/keyguard/hotkey"
	"github.com/keyguard/keyguard/internal/cli"
	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/internal/jsonout"
	"github.com/keyguard/keyguard/internal/redisconn"
	"github.com/keyguard/keyguard/registry"
)

// PreheatOptions are what keyguard preheat runs with.
type PreheatOptions struct {
	Registry    *registry.Registry
	Redis       string // --redis, the URL of the target
	Cluster     bool
	Keys        string   // a file of keys, one a line, or "-" for stdin; "" with Template
	Template    string   // generate the keys of this template from Sets
	Sets        []string // NAME=V1,V2 or NAME=@FILE, per placeholder of Template
	MaxLine     int64    // the longest line of a key list
	Exec        string   // the loader: a command run per key,
	From        string   // or a Redis to copy from (a URL)
	FromCluster bool     // From lists Cluster seeds
	Rate        float64  // keys a second; 0 = no limit
	Concurrency int
	Missing     bool   // only keys the target lacks
	Service     string // the name this run writes as
	Progress    string // --progress: auto, always or never
	Format      string // text or json
	Out         string
}

// Preheat loads keys into Redis before the traffic comes: each key's value
// comes from a command (Exec) or another Redis (From) and is stored as the
// SDK stores it (every copy of a replicated key, the template's TTL and
// jitter, an invalidation of the services' local tiers), rate-limited,
// region by region for a generated key list. It writes what it did and
// returns cli.ErrFindings when a key failed.
func Preheat(ctx context.Context, e *cli.Env, o PreheatOptions) error {
	reg := o.Registry
	batches, err := preheatBatches(ctx, e, reg, o.Template, o.Sets, o.Keys, o.MaxLine)
	if err != nil {
		return err
	}
	target, err := redisconn.FromFlags(o.Redis, o.Cluster)
	if err != nil {
		return err
	}
	rdb, err := redisconn.Connect(ctx, target)
	if err != nil {
		return err
	}
	defer rdb.Close()
	load, source, closeSrc, err := preheatLoader(ctx, reg, o.Exec, o.From, o.FromCluster)
	if err != nil {
		return err
	}
	defer closeSrc()
	c, err := hotkey.New(ctx, reg, rdb, hotkey.Options{Service: o.Service, NoReports: true})
	if err != nil {
		return err
	}
	defer c.Close()
	bar, err := cli.NewProgress(e, o.Progress)
	if err != nil {
		return err
	}
	res, runErr := c.Preheat(ctx, batches, load, hotkey.PreheatOptions{Rate: o.Rate, Concurrency: o.Concurrency, Missing: o.Missing,
		Progress: func(p hotkey.PreheatProgress) { bar.Show(preheatLine(p), p.Done == p.Total) }})
	bar.Clear()
	err = writePreheat(e, o, target.Display, source, res)
	switch {
	case runErr != nil:
		return runErr
	case err != nil:
		return err
	case res.Failed > 0:
		return cli.ErrFindings
	}
	return nil
}

// preheatBatches reads the keys: generated from --template and --set,
// one batch per region, or one batch from a file or stdin.
func preheatBatches(ctx context.Context, e *cli.Env, reg *registry.Registry, tmpl string, sets []string, keysFile string, maxLine int64) ([]hotkey.Batch, error) {
	if tmpl == "" {
		keys, err := cli.ReadKeyList(ctx, e, keysFile, maxLine)
		if err != nil {
			return nil, err
		}
		return []hotkey.Batch{{Keys: keys}}, nil
	}
	ent := reg.EntryByKey(tmpl)
	if ent == nil {
		return nil, cli.Usagef("--template %q is not a template of %s (write it as the registry does)", tmpl, reg.File)
	}
	values, err := setValues(ctx, e, sets, maxLine)
	if err != nil {
		return nil, err
	}
	batches, err := hotkey.Expand(reg, ent, values)
	if err != nil {
		return nil, cli.Usagef("%v (--set NAME=V1,V2 or NAME=@FILE for each placeholder)", err)
	}
	return batches, nil
}

// preheatLoader is the loader of --exec or --from-redis, a description
// of it for the report, and what to close after.
func preheatLoader(ctx context.Context, reg *registry.Registry, execCmd, from string, fromCluster bool) (hotkey.Loader, string, func(), error) {
	if from == "" {
		return hotkey.ExecLoader(execCmd), "command: " + execCmd, func() {}, nil
	}
	st, err := redisconn.ParseFlag(from, fromCluster, "--from-redis", "--from-cluster")
	if err != nil {
		return nil, "", nil, err
	}
	src, err := redisconn.Connect(ctx, st)
	if err != nil {
		return nil, "", nil, fmt.Errorf("--from-redis: %w", err)
	}
	return hotkey.RedisLoader(src, reg), "redis: " + st.Display, func() { src.Close() }, nil
}

// setValues reads the --set flags into placeholder values.
func setValues(ctx context.Context, e *cli.Env, s []string, maxLine int64) (map[string][]string, error) {
	out := map[string][]string{}
	for _, v := range s {
		name, list, _ := strings.Cut(v, "=")
		if file, ok := strings.CutPrefix(list, "@"); ok {
			keys, err := cli.ReadKeyList(ctx, e, file, maxLine)
			if err != nil {
				return nil, fmt.Errorf("--set %s: %w", name, err)
			}
			out[name] = append(out[name], keys...)
			continue
		}
		for _, x := range strings.Split(list, ",") {
			if x = strings.TrimSpace(x); x != "" {
				out[name] = append(out[name], x)
			}
		}
	}
	return out, nil
}

func preheatLine(p hotkey.PreheatProgress) string {
	frac := 1.0
	if p.Total > 0 {
		frac = float64(p.Done) / float64(p.Total)
	}
	s := fmt.Sprintf("%s %s/%s keys", cli.Meter(frac), human.Count(int64(p.Done)), human.Count(int64(p.Total)))
	if p.Region != "" {
		s += "  region " + p.Region
	}
	if secs := p.Elapsed.Seconds(); secs > 0 && p.Done > 0 {
		r := float64(p.Done) / secs
		s += fmt.Sprintf("  %.0f/s", r)
		if left := p.Total - p.Done; left > 0 && r > 0 {
			s += "  eta " + registry.FormatDuration(time.Duration(float64(left)/r*float64(time.Second)).Round(time.Second))
		}
	}
	if p.Failed > 0 {
		s += fmt.Sprintf("  %d failed", p.Failed)
	}
	return s
}

// writePreheat writes the result to --out in --format.
func writePreheat(e *cli.Env, o PreheatOptions, target, source string, res *hotkey.PreheatResult) error {
	out, err := cli.OpenOutput(e, "--out", o.Out)
	if err != nil {
		return err
	}
	for i := range res.Failures {
		res.Failures[i].Err = inWords(o.Registry, res.Failures[i].Key, res.Failures[i].Err)
	}
	if o.Format == "json" {
		err = writePreheatJSON(out, target, source, res)
	} else {
		err = writePreheatText(out, target, res)
	}
	return out.Finish(err)
}

// inWords says why a key failed in the command's own words: the SDK's
// errors speak of its Cache and calls.
func inWords(reg *registry.Registry, key string, err error) error {
	switch {
	case errors.Is(err, hotkey.ErrType):
		if e := reg.Lookup(key); e != nil {
			return fmt.Errorf("its template %s declares a %s: preheat stores string values only, as the SDK's cache does (load such keys from your service, or copy them with DUMP and RESTORE)", e.Key, e.Type)
		}
	case errors.Is(err, hotkey.ErrUnregistered):
		return fmt.Errorf("no template of %s matches it: register its template (keyguard check KEY shows the nearest)", reg.File)
	}
	return err
}

func writePreheatText(w io.Writer, target string, r *hotkey.PreheatResult) error {
	var b strings.Builder
	rate := 0.0
	if secs := r.Elapsed.Seconds(); secs > 0 {
		rate = float64(r.Done) / secs
	}
	fmt.Fprintf(&b, "preheated %s of %s keys into %s in %s (%.0f/s): %d stored, %d present already, %d without data, %d failed\n",
		human.Count(int64(r.Done)), human.Count(int64(r.Total)), target, r.Elapsed.Round(time.Millisecond), rate, r.OK, r.Skipped, r.Absent, r.Failed)
	for _, bt := range r.Batches {
		if bt.Region != "" {
			fmt.Fprintf(&b, "  region %s: %d keys, %d stored, %d present, %d without data, %d failed\n", bt.Region, bt.Keys, bt.OK, bt.Skipped, bt.Absent, bt.Failed)
		}
	}
	for _, f := range r.Failures {
		fmt.Fprintf(&b, "  failed %s: %v\n", f.Key, f.Err)
	}
	if more := r.Failed - len(r.Failures); more > 0 {
		fmt.Fprintf(&b, "  … and %d more failures\n", more)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writePreheatJSON(w io.Writer, target, source string, r *hotkey.PreheatResult) error {
	type batch struct {
		Region  string `json:"region,omitempty"`
		Keys    int    `json:"keys"`
		OK      int    `json:"stored"`
		Skipped int    `json:"present"`
		Absent  int    `json:"without_data"`
		Failed  int    `json:"failed"`
	}
	type failure struct {
		Key   string `json:"key"`
		Error string `json:"error"`
	}
	doc := struct {
		Target    string    `json:"target"`
		Source    string    `json:"source"`
		Total     int       `json:"total"`
		Done      int       `json:"done"`
		OK        int       `json:"stored"`
		Skipped   int       `json:"present"`
		Absent    int       `json:"without_data"`
		Failed    int       `json:"failed"`
		ElapsedMS int64     `json:"elapsed_ms"`
		Batches   []batch   `json:"batches"`
		Failures  []failure `json:"failures"`
	}{Target: target, Source: source, Total: r.Total, Done: r.Done, OK: r.OK, Skipped: r.Skipped, Absent: r.Absent, Failed: r.Failed,
		ElapsedMS: r.Elapsed.Milliseconds(), Batches: []batch{}, Failures: []failure{}}
	for _, b := range r.Batches {
		doc.Batches = append(doc.Batches, batch{b.Region, b.Keys, b.OK, b.Skipped, b.Absent, b.Failed})
	}
	for _, f := range r.Failures {
		doc.Failures = append(doc.Failures, failure{f.Key, f.Err.Error()})
	}
	return jsonout.Write(w, doc)
}
