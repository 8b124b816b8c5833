package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/cli"
	"github.com/keyguard/keyguard/internal/hotkeys"
)

// runPreheat loads keys into Redis before the traffic comes: each key's
// value comes from a command (--exec) or another Redis (--from-redis)
// and is stored as the SDK stores it (every copy of a replicated key, the
// template's TTL and jitter, an invalidation of the services' local
// tiers), rate-limited, region by region for a generated key list.
func runPreheat(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "preheat", "preheat --redis URL [--cluster] [--registry FILE] (--exec CMD | --from-redis URL) [--rate N] [--missing] (KEYS-FILE | - | --template T --set NAME=VALUES…)",
		"  # values from a command: $1 is the key, stdout the value, exit 3 = no data\n"+
			"  keyguard preheat --redis redis://127.0.0.1:6379 --exec 'curl -sf http://catalog/internal/cache/\"$1\"' keys.txt\n"+
			"  # copy from a warm Redis, only what the target lacks\n"+
			"  keyguard preheat --redis redis://new:6379 --from-redis redis://old:6379 --missing - < keys.txt\n"+
			"  # generate keys region by region\n"+
			"  keyguard preheat --redis redis://127.0.0.1:6379 --exec ./load.sh \\\n"+
			"      --template 'goods:hot:area:{area:region}:{sku:int}' --set area=110101,310100 --set sku=@skus.txt")
	fs.RegistryFlag(e.cli())
	redisFlags(fs, e)
	fs.OutputFlags("text", "json")
	fs.MaxLineFlag(report.DefaultMaxKeyLine)
	var sets setValues
	var (
		execCmd     = fs.String("exec", "", "load each key by running `command` with /bin/sh -c: the key is $1 (and $KEYGUARD_KEY), the value its standard output; exit 3 means no data")
		from        = fs.String("from-redis", "", "load each key by copying it from this Redis `URL` (a warm replica, another region)")
		fromCluster = fs.Bool("from-cluster", false, "--from-redis lists Redis Cluster seeds")
		rate        = fs.Float64("rate", 200, "at most `N` keys a second; 0 = no limit")
		conc        = fs.Int("concurrency", 4, "keys loaded at once")
		missing     = fs.Bool("missing", false, "only keys the target does not hold yet")
		tmpl        = fs.String("template", "", "generate the keys of this registry `template` from --set values, one batch per region")
		service     = fs.String("service", "keyguard-preheat", "the `name` this run writes as (the registry's owner and writers fields)")
		prog        = fs.ProgressFlag()
	)
	fs.Var(&sets, "set", "values of a --template placeholder: `NAME=V1,V2` or NAME=@FILE (one per line); repeat per placeholder")
	pos, err := fs.Parse(args)
	if err != nil {
		return err
	}
	switch {
	case (*execCmd == "") == (*from == ""):
		return cli.Usagef("give one loader: --exec COMMAND or --from-redis URL")
	case *tmpl == "" && len(pos) != 1:
		return cli.Usagef("give the keys: a file (one key per line), - for stdin, or --template with --set")
	case *tmpl != "" && len(pos) > 0:
		return cli.Usagef("give the keys one way: a file or --template, not both")
	case *tmpl == "" && len(sets) > 0:
		return cli.Usagef("--set goes with --template")
	case *rate < 0 || *conc <= 0:
		return cli.Usagef("--rate must be 0 or more and --concurrency positive")
	}
	reg, err := fs.LoadRegistry()
	if err != nil {
		return err
	}
	keys := ""
	if len(pos) > 0 {
		keys = pos[0]
	}
	return hotkeys.Preheat(ctx, e.cli(), hotkeys.PreheatOptions{Registry: reg, Redis: fs.Opts.Redis, Cluster: fs.Opts.Cluster, Keys: keys, Template: *tmpl, Sets: sets,
		MaxLine: int64(fs.Opts.MaxLineBytes), Exec: *execCmd, From: *from, FromCluster: *fromCluster, Rate: *rate, Concurrency: *conc,
		Missing: *missing, Service: *service, Progress: *prog, Format: fs.Opts.Format, Out: fs.Opts.Out})
}

// setValues is the repeated --set NAME=V1,V2 | NAME=@FILE flag.
type setValues []string

func (s *setValues) String() string { return strings.Join(*s, " ") }

func (s *setValues) Set(v string) error {
	if name, _, ok := strings.Cut(v, "="); !ok || name == "" {
		return fmt.Errorf("%q: write NAME=V1,V2 or NAME=@FILE", v)
	}
	*s = append(*s, v)
	return nil
}
