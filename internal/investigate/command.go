package investigate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/cli"
	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/internal/redisconn"
	"github.com/keyguard/keyguard/registry"
)

// CommandOptions are what keyguard investigate runs with.
type CommandOptions struct {
	Options   Options // the investigation (its Registry names the registry file)
	Registry  *registry.Registry
	Target    *redisconn.Target
	Format    string // text or json
	Out       string
	Threshold finding.Severity
}

// Investigate connects, runs the investigation, writes its report, and
// returns cli.ErrFindings when a finding reaches the threshold, or an
// error when it was interrupted or could not observe a span.
func Investigate(ctx context.Context, e *cli.Env, co CommandOptions) error {
	o, target := co.Options, co.Target
	target.Opts.ClientName = DefaultSelf // our reads are not a client's
	rdb, err := redisconn.Connect(ctx, target)
	if err != nil {
		return err
	}
	defer rdb.Close()
	o.Display = target.Display
	if d := max(o.Watch, o.Monitor); d > 0 {
		fmt.Fprintf(e.Stderr, "keyguard investigate: watching for %s%s…\n", registry.FormatDuration(d), monitorNote(o.Monitor))
	}
	rep, err := Run(ctx, co.Registry, rdb, o)
	if err != nil {
		return err
	}
	out, err := cli.OpenOutput(e, "--out", co.Out)
	if err != nil {
		return err
	}
	if co.Format == "json" {
		err = rep.WriteJSON(out)
	} else {
		err = rep.WriteText(out)
	}
	err = out.Finish(err)
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		// Interrupted (Ctrl-C): the report covers what was seen until
		// then, and the exit code says it is partial, as audit's does.
		return errors.New("interrupted: the report covers what was seen before the stop")
	}
	if len(rep.NotObserved) > 0 {
		// The report is written; what it could not see is an error.
		var spans []string
		for _, sp := range rep.NotObserved {
			spans = append(spans, sp.String())
		}
		return fmt.Errorf("investigation incomplete: not observed: %s; run it again once the server answers", strings.Join(spans, "; "))
	}
	if gaps := rep.NotSearched(); len(gaps) > 0 {
		return fmt.Errorf("investigation incomplete: the key search did not cover %s; run it again", strings.Join(gaps, "; "))
	}
	if n, why := rep.notRead(); n > 0 {
		return fmt.Errorf("investigation incomplete: the server refused to read %s found (%s); run it again once it answers", human.Plural(n, "key"), why)
	}
	return cli.Verdict(rep.Findings, co.Threshold)
}

// monitorNote is what the start line adds about a MONITOR capture.
func monitorNote(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return ", capturing writers with MONITOR for " + registry.FormatDuration(d) + " (it costs the server throughput meanwhile)"
}
