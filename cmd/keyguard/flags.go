package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/registry"
)

// errHelp is returned when -h was asked for; usage has been printed.
var errHelp = errors.New("help shown")

// options are the flags shared by commands (SPEC §4). Each command
// registers the ones it uses.
type options struct {
	registry string
	redis    string
	cluster  bool
	format   string
	out      string
	failOn   string
}

type flagSet struct {
	*flag.FlagSet
	opts     options
	examples string
	formats  []string
}

func newFlags(e *env, name, usage, examples string) *flagSet {
	fs := &flagSet{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError), examples: examples}
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "Usage: keyguard %s\n\n", usage)
		fs.PrintDefaults()
		if fs.examples != "" {
			fmt.Fprintf(w, "\nExamples:\n%s\n", fs.examples)
		}
	}
	return fs
}

func (fs *flagSet) registryFlag(e *env) {
	def := "keyguard.yaml"
	if v := e.getenv("KEYGUARD_REGISTRY"); v != "" {
		def = v
	}
	fs.StringVar(&fs.opts.registry, "registry", def, "registry `file` (env KEYGUARD_REGISTRY)")
}

func (fs *flagSet) redisFlags(e *env) {
	fs.StringVar(&fs.opts.redis, "redis", e.getenv("KEYGUARD_REDIS"), "server `URL`: redis:// or rediss://, user and password in the URL (env KEYGUARD_REDIS)")
	fs.BoolVar(&fs.opts.cluster, "cluster", false, "treat the URL's hosts as Redis Cluster seeds")
}

func (fs *flagSet) outputFlags(formats ...string) {
	fs.formats = formats
	fs.StringVar(&fs.opts.format, "format", formats[0], "output format: "+strings.Join(formats, "|"))
	fs.StringVar(&fs.opts.out, "out", "", "write the output to `file` instead of stdout (written whole or not at all)")
}

func (fs *flagSet) failOnFlag() {
	fs.StringVar(&fs.opts.failOn, "fail-on", "error", "exit 1 when a finding is at or above this severity: error|warning|info|never")
}

// parse parses flags and positional arguments in any order ("check KEY
// --fail-on warning" works); "--" ends flags.
func (fs *flagSet) parse(args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, errHelp
			}
			return nil, &usageError{err.Error()}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if rest[0] == "--" {
			pos = append(pos, rest[1:]...)
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	if fs.formats != nil {
		ok := false
		for _, f := range fs.formats {
			ok = ok || f == fs.opts.format
		}
		if !ok {
			return nil, usagef("--format %q: use one of %s", fs.opts.format, strings.Join(fs.formats, ", "))
		}
	}
	if fs.opts.failOn != "" {
		if _, err := finding.ParseSeverity(fs.opts.failOn); err != nil {
			return nil, usagef("--fail-on: %v", err)
		}
	}
	return pos, nil
}

func (fs *flagSet) threshold() finding.Severity {
	s, _ := finding.ParseSeverity(fs.opts.failOn)
	return s
}

func (fs *flagSet) loadRegistry() (*registry.Registry, error) {
	r, err := registry.Load(fs.opts.registry)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w\n\tTry: write a keyguard.yaml (see 'keyguard demo' for one) or pass --registry FILE", err)
		}
		return nil, err
	}
	return r, nil
}

