package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/internal/migrate"
	"github.com/keyguard/keyguard/registry"
)

const migrateUsage = `Usage: keyguard migrate STEP (--from OLD --to NEW | --all-deprecated) [flags]

Steps, in order (docs/migrate.md has the whole procedure with the SDK):
  plan      check the two templates and show how old keys map to new ones
  copy      copy every old key to its new key (never overwriting one that exists)
  verify    check every new key against its old key; exit 1 on a mismatch
  cleanup   delete old keys whose new key verifies (needs --confirm);
            --restore brings back the old keys kept as tombstones

Run 'keyguard migrate STEP -h' for a step's flags.`

// runMigrate renames keys from one template to another: plan, copy,
// verify, cleanup (package migrate does the work).
func runMigrate(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return usagef("give a step: plan, copy, verify or cleanup")
	}
	switch args[0] {
	case "-h", "--help", "-help", "help":
		fmt.Fprintln(e.stdout, migrateUsage)
		return errHelp
	case "plan":
		return runMigratePlan(ctx, e, args[1:])
	case "copy", "verify", "cleanup":
		return runMigrateStep(ctx, e, args[0], args[1:])
	}
	return usagef("unknown step %q: use plan, copy, verify or cleanup", args[0])
}

// migrateSelection is the migration a step works on.
type migrateSelection struct {
	from, to, fields *string
	all              *bool
}

func selectionFlags(fs *flagSet) migrateSelection {
	return migrateSelection{
		from:   fs.String("from", "", "the old `TEMPLATE`, as written in the registry (it need not be registered)"),
		to:     fs.String("to", "", "the new `TEMPLATE`; it must be registered"),
		all:    fs.Bool("all-deprecated", false, "every registry entry marked deprecated: {replaced_by: …}, one after the other"),
		fields: fs.String("fields", "", "move only these hash `FIELDS` (comma-separated), for a key two teams wrote into: the old hash keeps its other fields"),
	}
}

func (s migrateSelection) plans(reg *registry.Registry) ([]*migrate.Plan, error) {
	var opts migrate.PlanOptions
	if *s.fields != "" {
		opts.Fields = strings.Split(*s.fields, ",")
	}
	switch {
	case *s.all && (*s.from != "" || *s.to != ""):
		return nil, usagef("give --from and --to, or --all-deprecated, not both")
	case *s.all:
		return migrate.Deprecated(reg, opts)
	case *s.from == "" || *s.to == "":
		return nil, usagef("give --from OLD_TEMPLATE and --to NEW_TEMPLATE, or --all-deprecated")
	}
	p, err := migrate.NewPlan(reg, *s.from, *s.to, opts)
	if err != nil {
		return nil, err
	}
	return []*migrate.Plan{p}, nil
}

func runMigratePlan(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "migrate plan", "migrate plan (--from OLD --to NEW | --all-deprecated) [--fields F,…] [--redis URL [--cluster] --sample N] [--format text|json]",
		"  keyguard migrate plan --from 'promo:sku:{skuId:int}' --to 'order:sku:{skuId:int}:settle-preview' --fields couponAmount,promoTotal\n"+
			"  keyguard migrate plan --all-deprecated --redis redis://127.0.0.1:6379 --sample 10   # real keys as samples (reads only)")
	fs.registryFlag(e)
	fs.redisFlags(e)
	fs.outputFlags("text", "json")
	sel := selectionFlags(fs)
	sample := fs.Int("sample", 5, "with --redis, show up to `N` real keys of each old template and their new keys")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("migrate plan takes no arguments; got %q", pos[0])
	}
	reg, err := fs.loadRegistry()
	if err != nil {
		return err
	}
	plans, err := sel.plans(reg)
	if err != nil {
		return err
	}
	samples := make([][]migrate.Sample, len(plans))
	for i, p := range plans {
		samples[i] = p.ExampleSamples()
	}
	if fs.opts.redis != "" {
		tgt, err := fs.redisTarget()
		if err != nil {
			return err
		}
		rdb, err := connectRedis(ctx, tgt)
		if err != nil {
			return err
		}
		defer rdb.Close()
		for i, p := range plans {
			if samples[i], err = p.Samples(ctx, rdb, *sample); err != nil {
				return err
			}
		}
	}
	out, err := fs.openOutput(e)
	if err != nil {
		return err
	}
	if fs.opts.format == "json" {
		err = migrate.WritePlansJSON(out, plans, samples)
	} else {
		for i, p := range plans {
			if i > 0 {
				fmt.Fprintln(out)
			}
			if err = p.WriteText(out, samples[i]); err != nil {
				break
			}
		}
	}
	return out.finish(err)
}

// migrateExamples are the examples of a step's help.
func migrateExamples(step string) string {
	switch step {
	case "copy":
		return "  keyguard migrate copy --from 'promo:sku:{skuId:int}' --to 'order:sku:{skuId:int}:settle-preview' --redis redis://127.0.0.1:6379 --dry-run\n" +
			"  keyguard migrate copy --all-deprecated --redis redis://10.0.0.1:7000,10.0.0.2:7000 --cluster --rate 5000 --cursor copy.cursor\n" +
			"  # interrupted (Ctrl-C, a lost node)? run the same command again: it continues from copy.cursor"
	case "verify":
		return "  keyguard migrate verify --all-deprecated --redis redis://127.0.0.1:6379 --format json --out verify.json\n" +
			"  keyguard migrate verify --from 'old:{id}' --to 'new:{id}' --redis redis://127.0.0.1:6379 --ttl-tolerance 2s"
	}
	return "  keyguard migrate cleanup --all-deprecated --redis redis://127.0.0.1:6379 --dry-run\n" +
		"  keyguard migrate cleanup --all-deprecated --redis redis://127.0.0.1:6379 --confirm --rate 2000 --cursor cleanup.cursor\n" +
		"  # across Cluster slots, old keys stay tombstones for --grace; to undo the cleanup within it:\n" +
		"  keyguard migrate cleanup --all-deprecated --redis redis://10.0.0.1:7000 --cluster --restore --confirm"
}

// stepFlags registers the flags of copy, verify and cleanup.
func stepFlags(fs *flagSet, step string, opts *migrate.Options, confirm, restore *bool) {
	fs.Float64Var(&opts.Rate, "rate", 0, "at most `KEYS` per second, all masters together; 0 = no limit")
	fs.IntVar(&opts.Batch, "batch", 500, "keys per SCAN and per pipeline")
	fs.StringVar(&opts.Match, "match", "", "only keys matching this SCAN `pattern` (they must still belong to the old template)")
	fs.BoolVar(&opts.DryRun, "dry-run", false, "write nothing; count what would be done")
	switch step {
	case "copy":
		fs.BoolVar(&opts.Overwrite, "overwrite", false, "replace new keys that exist (by default they are left alone: a dual-writing service may have newer data there)")
		fs.BoolVar(&opts.KeepTTL, "keep-ttl", false, "keep every old key's expiry as it is, even where it breaks the new template's TTL (a warning per such key); by default a new key gets the expiry the new template allows")
	case "cleanup":
		fs.BoolVar(confirm, "confirm", false, "delete for real (without it, cleanup refuses; see --dry-run)")
		fs.DurationVar(&opts.Grace, "grace", migrate.DefaultGrace, "across Cluster slots, keep each deleted old key this long as a tombstone that --restore brings back")
		fs.BoolVar(restore, "restore", false, "bring back the old keys (or moved fields) kept as tombstones, instead of deleting (needs --confirm or --dry-run)")
	}
	if step != "verify" {
		fs.StringVar(&opts.CursorFile, "cursor", "", "resumable run: save the walk's progress (a server's SCAN cursor, a Cluster's slots done) and the counts to `FILE`, and continue from it if it exists")
		fs.Int64Var(&opts.MaxKeys, "max-keys", 0, "stop after about `N` keys of the template (resume with the same --cursor); 0 = no limit")
	}
	if step != "copy" {
		fs.DurationVar(&opts.TTLTolerance, "ttl-tolerance", time.Second, "how far apart an old and a new key's expiries may be")
		fs.IntVar(&opts.MaxMismatches, "max-mismatches", 1000, "mismatches listed (the rest are counted)")
	}
}

func runMigrateStep(ctx context.Context, e *env, step string, args []string) error {
	fs := newFlags(e, "migrate "+step, "migrate "+step+" (--from OLD --to NEW | --all-deprecated) --redis URL [--cluster] [flags]", migrateExamples(step))
	fs.registryFlag(e)
	fs.redisFlags(e)
	fs.outputFlags("text", "json")
	sel := selectionFlags(fs)
	var opts migrate.Options
	var confirm, restore bool
	stepFlags(fs, step, &opts, &confirm, &restore)
	progressMode := fs.progressFlag()
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 0:
		return usagef("migrate %s takes no arguments; got %q", step, pos[0])
	case opts.Rate < 0 || opts.Batch <= 0 || opts.MaxKeys < 0 || opts.TTLTolerance < 0 || opts.MaxMismatches < 0:
		return usagef("--rate, --max-keys, --ttl-tolerance and --max-mismatches cannot be negative, --batch must be positive")
	case step == "cleanup" && !confirm && !opts.DryRun && restore:
		return usagef("cleanup --restore writes old keys back: pass --confirm, or --dry-run to count what it would restore")
	case step == "cleanup" && !confirm && !opts.DryRun:
		return usagef("cleanup deletes old keys: pass --confirm, or --dry-run to count what it would delete")
	case restore && opts.Match != "":
		return usagef("cleanup --restore takes every tombstone of the migration: drop --match")
	case step == "cleanup" && opts.Grace <= 0:
		return usagef("--grace must be positive, such as 1h")
	case opts.MaxKeys > 0 && opts.CursorFile == "":
		return usagef("--max-keys stops a run to be resumed: give --cursor FILE too")
	}
	prog, err := newProgress(e, *progressMode)
	if err != nil {
		return err
	}
	reg, err := fs.loadRegistry()
	if err != nil {
		return err
	}
	plans, err := sel.plans(reg)
	if err != nil {
		return err
	}
	tgt, err := fs.redisTarget()
	if err != nil {
		return err
	}
	rdb, err := connectRedis(ctx, tgt)
	if err != nil {
		return err
	}
	defer rdb.Close()

	opts.Progress = func(p migrate.Progress) { prog.show(migrateProgressLine(p), p.Final) }
	var results []*migrate.Result
	var runErr error
	for _, p := range plans {
		var res *migrate.Result
		switch step {
		case "copy":
			res, runErr = p.Copy(ctx, rdb, opts)
		case "verify":
			res, runErr = p.Verify(ctx, rdb, opts)
		case "cleanup":
			if restore {
				res, runErr = p.Restore(ctx, rdb, opts)
				break
			}
			res, runErr = p.Cleanup(ctx, rdb, opts)
		default:
			res, runErr = p.Cleanup(ctx, rdb, opts)
		}
		results = append(results, res)
		if runErr != nil || !res.Complete {
			break
		}
	}
	prog.clear()
	if err := writeMigrateResults(e, fs, tgt.display, results); err != nil {
		return err
	}
	return migrateVerdict(e, step, opts, results, runErr)
}

func writeMigrateResults(e *env, fs *flagSet, target string, results []*migrate.Result) error {
	out, err := fs.openOutput(e)
	if err != nil {
		return err
	}
	if fs.opts.format == "json" {
		err = migrate.WriteResultsJSON(out, target, results)
	} else {
		for i, r := range results {
			if i > 0 {
				fmt.Fprintln(out)
			}
			if err = r.WriteText(out); err != nil {
				break
			}
		}
	}
	return out.finish(err)
}

// migrateVerdict is the exit: 2 for a run that failed or was interrupted
// (after its report), 1 for keys that do not verify, else 0.
func migrateVerdict(e *env, step string, opts migrate.Options, results []*migrate.Result, runErr error) error {
	resume := "run the same command again to continue from --cursor " + opts.CursorFile
	if opts.CursorFile == "" {
		resume = "run it again (copy skips the keys it copied; pass --cursor FILE to make a run resumable)"
	}
	last := results[len(results)-1]
	switch {
	case runErr != nil:
		return fmt.Errorf("%w\n\tTry: check the server, then %s", runErr, resume)
	case !last.Complete && last.Stopped == "max-keys":
		fmt.Fprintf(e.stderr, "keyguard migrate %s: stopped at --max-keys; %s\n", step, resume)
		return nil
	case !last.Complete && strings.HasPrefix(last.Stopped, "not covered"):
		return fmt.Errorf("incomplete: %s; %s", last.Stopped, resume)
	case !last.Complete:
		return errors.New("interrupted; " + resume)
	}
	for _, r := range results {
		if r.Counts.Mismatched > 0 {
			return errFindings
		}
	}
	return nil
}

func migrateProgressLine(p migrate.Progress) string {
	c := p.Counts
	done := c.Copied
	switch p.Op {
	case "verify":
		done = c.Verified
	case "cleanup":
		done = c.Removed
	case "restore":
		done = c.Restored
	}
	rate := ""
	if s := p.Elapsed.Seconds(); s > 0 {
		rate = fmt.Sprintf("  %s keys/s", human.Count(int64(float64(p.RunKeys)/s))) // this run's keys: a resumed run's counts hold the earlier runs'

	}
	return fmt.Sprintf("%s %s %s  %s scanned, %s keys, %s done%s", p.Op, p.From, meter(p.Done), human.Count(c.Scanned), human.Count(c.Keys), human.Count(done), rate)
}
