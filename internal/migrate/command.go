package migrate

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/keyguard/keyguard/internal/cli"
	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/internal/redisconn"
)

// PrintOptions are what keyguard migrate plan runs with.
type PrintOptions struct {
	Plans   []*Plan
	Redis   string // --redis: show real keys as samples (reads only); "" for the examples
	Cluster bool
	Sample  int // real keys per plan
	Format  string
	Out     string
}

// PrintPlans writes each plan: how old keys map to new ones, with samples.
func PrintPlans(ctx context.Context, e *cli.Env, o PrintOptions) error {
	plans := o.Plans
	samples := make([][]Sample, len(plans))
	for i, p := range plans {
		samples[i] = p.ExampleSamples()
	}
	if o.Redis != "" {
		tgt, err := redisconn.FromFlags(o.Redis, o.Cluster)
		if err != nil {
			return err
		}
		rdb, err := redisconn.Connect(ctx, tgt)
		if err != nil {
			return err
		}
		defer rdb.Close()
		for i, p := range plans {
			if samples[i], err = p.Samples(ctx, rdb, o.Sample); err != nil {
				return err
			}
		}
	}
	out, err := cli.OpenOutput(e, "--out", o.Out)
	if err != nil {
		return err
	}
	if o.Format == "json" {
		err = WritePlansJSON(out, plans, samples)
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
	return out.Finish(err)
}

// StepOptions are what keyguard migrate copy, verify and cleanup run with.
type StepOptions struct {
	Step     string // copy, verify or cleanup
	Plans    []*Plan
	Target   *redisconn.Target
	Options  Options
	Restore  bool          // cleanup: bring back the tombstones instead
	Progress *cli.Progress // nil: none shown
	Format   string
	Out      string
}

// RunStep runs the step for each plan, one after the other, writes the
// results and returns the verdict: an error for a run that failed or was
// interrupted (after its report), cli.ErrFindings for keys that do not
// verify.
func RunStep(ctx context.Context, e *cli.Env, o StepOptions) error {
	opts := o.Options
	rdb, err := redisconn.Connect(ctx, o.Target)
	if err != nil {
		return err
	}
	defer rdb.Close()

	opts.Progress = func(p Progress) { o.Progress.Show(progressLine(p), p.Final) }
	var results []*Result
	var runErr error
	for _, p := range o.Plans {
		var res *Result
		switch o.Step {
		case "copy":
			res, runErr = p.Copy(ctx, rdb, opts)
		case "verify":
			res, runErr = p.Verify(ctx, rdb, opts)
		case "cleanup":
			if o.Restore {
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
	o.Progress.Clear()
	if err := writeResults(e, o, results); err != nil {
		return err
	}
	return stepVerdict(e, o, results, runErr)
}

func writeResults(e *cli.Env, o StepOptions, results []*Result) error {
	out, err := cli.OpenOutput(e, "--out", o.Out)
	if err != nil {
		return err
	}
	if o.Format == "json" {
		err = WriteResultsJSON(out, o.Target.Display, results)
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
	return out.Finish(err)
}

// stepVerdict is the exit: 2 for a run that failed or was interrupted
// (after its report), 1 for keys that do not verify, else 0.
func stepVerdict(e *cli.Env, o StepOptions, results []*Result, runErr error) error {
	step, opts := o.Step, o.Options
	resume := "run the same command again to continue from --cursor " + opts.CursorFile
	if opts.CursorFile == "" {
		resume = "run it again (copy skips the keys it copied; pass --cursor FILE to make a run resumable)"
	}
	last := results[len(results)-1]
	switch {
	case runErr != nil:
		return fmt.Errorf("%w\n\tTry: check the server, then %s", runErr, resume)
	case !last.Complete && last.Stopped == "max-keys":
		fmt.Fprintf(e.Stderr, "keyguard migrate %s: stopped at --max-keys; %s\n", step, resume)
		return nil
	case !last.Complete && strings.HasPrefix(last.Stopped, "not covered"):
		return fmt.Errorf("incomplete: %s; %s", last.Stopped, resume)
	case !last.Complete:
		return errors.New("interrupted; " + resume)
	}
	for _, r := range results {
		if r.Counts.Mismatched > 0 {
			return cli.ErrFindings
		}
	}
	return nil
}

// progressLine is a step's progress: "copy a:{id} [###…]  50%  …".
func progressLine(p Progress) string {
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
	return fmt.Sprintf("%s %s %s  %s scanned, %s keys, %s done%s", p.Op, p.From, cli.Meter(p.Done), human.Count(c.Scanned), human.Count(c.Keys), human.Count(done), rate)
}
