package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/human"
	"github.com/keyguard/keyguard/registry"
)

// Options are the flags shared by commands. Each command registers the
// ones it uses.
type Options struct {
	Registry         string
	MaxRegistryBytes SizeValue
	MaxLineBytes     SizeValue
	Redis            string
	Cluster          bool
	Format           string
	Out              string
	FailOn           string
}

// FlagSet is a flag.FlagSet that prints its flags as --name (as the usage
// lines write them), answers a misspelt flag with one line, takes -o for
// --out and reads durations with days.
type FlagSet struct {
	*flag.FlagSet
	Opts     Options
	usage    string
	examples string
	formats  []string
	stdout   io.Writer
	aliases  map[string]string // short name → long name
}

// NewFlags is the flag set of the command name.
func NewFlags(e *Env, name, usage, examples string) *FlagSet {
	fs := &FlagSet{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError), usage: usage, examples: examples, stdout: e.Stdout}
	fs.SetOutput(io.Discard) // errors are returned, help is printed by printUsage
	fs.Usage = func() {}
	return fs
}

// printUsage writes the usage line, the flags and the examples.
func (fs *FlagSet) printUsage(w io.Writer) {
	fmt.Fprintf(w, "Usage: keyguard %s\n\nFlags:\n", fs.usage)
	long := map[string]string{} // long name → short alias
	for s, l := range fs.aliases {
		long[l] = s
	}
	fs.VisitAll(func(f *flag.Flag) {
		if _, isAlias := fs.aliases[f.Name]; isAlias {
			return
		}
		names := dashed(f.Name)
		if s, ok := long[f.Name]; ok {
			names = dashed(s) + ", " + names
		}
		arg, text := flagArg(f)
		if arg != "" {
			names += " " + arg
		}
		if def := defaultText(f); def != "" {
			text += " (default " + def + ")"
		}
		if len(names) <= 22 {
			fmt.Fprintf(w, "  %-22s %s\n", names, text)
		} else {
			fmt.Fprintf(w, "  %s\n  %-22s %s\n", names, "", text)
		}
	})
	if fs.examples != "" {
		fmt.Fprintf(w, "\nExamples:\n%s\n", fs.examples)
	}
}

// dashed writes a flag name as the command line takes it: -0, -o, --out.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// flagArg is the placeholder of a flag's value (the back-quoted word of its
// usage, or one for its type; "" for a boolean) and the usage text.
func flagArg(f *flag.Flag) (arg, text string) {
	arg, text = flag.UnquoteUsage(f)
	if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		return "", text
	}
	if _, ok := f.Value.(*durationValue); ok && arg == "value" {
		arg = "duration"
	}
	switch arg {
	case "string", "value":
		arg = "value"
	case "int", "uint", "int64", "uint64":
		arg = "n"
	case "float":
		arg = "number"
	}
	return strings.ToUpper(arg), text
}

// defaultText is the default worth showing, or "": none when the usage
// says what the default is.
func defaultText(f *flag.Flag) string {
	switch f.DefValue {
	case "", "0", "false", "0s":
		return ""
	}
	if strings.Contains(f.Usage, "(default") {
		return ""
	}
	return f.DefValue
}

// RegistryFlag registers --registry and --max-registry-bytes.
func (fs *FlagSet) RegistryFlag(e *Env) {
	def := "keyguard.yaml"
	if v := e.Getenv("KEYGUARD_REGISTRY"); v != "" {
		def = v
	}
	fs.StringVar(&fs.Opts.Registry, "registry", def, "registry `file` (env KEYGUARD_REGISTRY)")
	fs.Opts.MaxRegistryBytes = registry.DefaultMaxBytes
	fs.Var(&fs.Opts.MaxRegistryBytes, "max-registry-bytes", "refuse a registry file larger than this `size` before reading it (16MiB, 500KB, 1048576)")
}

// MaxLineFlag is --max-line-bytes, the longest line of a key list or key
// export read.
func (fs *FlagSet) MaxLineFlag(def int64) {
	fs.Opts.MaxLineBytes = SizeValue(def)
	fs.Var(&fs.Opts.MaxLineBytes, "max-line-bytes", "refuse a key list or key export whose line is longer than this `size` (8MiB, 64KB)")
}

// SizeValue is a size flag: 1048576, 500KB, 64MiB.
type SizeValue int64

func (v *SizeValue) Set(s string) error {
	n, err := human.ParseBytes(s)
	*v = SizeValue(n)
	return err
}

func (v *SizeValue) String() string {
	if v == nil {
		return "0"
	}
	if *v%(1<<20) == 0 && *v > 0 {
		return strconv.FormatInt(int64(*v)>>20, 10) + "MiB"
	}
	return strconv.FormatInt(int64(*v), 10)
}

// OutputFlags registers --format, one of formats (the first the
// default), and --out.
func (fs *FlagSet) OutputFlags(formats ...string) {
	fs.formats = formats
	fs.StringVar(&fs.Opts.Format, "format", formats[0], "output `format`: "+strings.Join(formats, "|")+" (any case)")
	fs.StringVar(&fs.Opts.Out, "out", "", "write the output to `file` instead of stdout (written whole or not at all)")
}

// FailOnFlag registers --fail-on.
func (fs *FlagSet) FailOnFlag() {
	fs.StringVar(&fs.Opts.FailOn, "fail-on", "error", "exit 1 when a finding is at or above this `severity`: error|warning|info|never (also warn, none; any case)")
}

// Duration defines a duration flag that also takes days (7d, 1d12h). It
// shadows flag.FlagSet's, so every command's duration flags read days.
func (fs *FlagSet) Duration(name string, value time.Duration, usage string) *time.Duration {
	p := new(time.Duration)
	fs.DurationVar(p, name, value, usage)
	return p
}

// DurationVar is Duration into p.
func (fs *FlagSet) DurationVar(p *time.Duration, name string, value time.Duration, usage string) {
	*p = value
	fs.Var((*durationValue)(p), name, usage)
}

// durationValue is a flag.Value read by parseDuration.
type durationValue time.Duration

func (d *durationValue) Set(s string) error {
	v, err := registry.ParseDuration(s) // as the registry's ttl fields: 90s, 1h30m, 7d, 1d12h
	if err != nil {
		return err
	}
	*d = durationValue(v)
	return nil
}

func (d *durationValue) String() string { return registry.FormatDuration(time.Duration(*d)) }

// Parse parses flags and positional arguments in any order ("check KEY
// --fail-on warning" works); "--" ends flags. -h prints the usage to
// stdout and returns errHelp; a flag error is one line.
func (fs *FlagSet) Parse(args []string) ([]string, error) {
	if fs.Lookup("out") != nil && fs.Lookup("o") == nil {
		fs.Var(fs.Lookup("out").Value, "o", "")
		fs.aliases = map[string]string{"o": "out"}
	}
	var pos []string
	for {
		if err := fs.FlagSet.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.printUsage(fs.stdout)
				return nil, ErrHelp
			}
			return nil, fs.flagError(err)
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
		fs.Opts.Format = strings.ToLower(fs.Opts.Format)
		ok := false
		for _, f := range fs.formats {
			ok = ok || f == fs.Opts.Format
		}
		if !ok {
			return nil, Usagef("--format %q: use one of %s", fs.Opts.Format, strings.Join(fs.formats, ", "))
		}
	}
	if fs.Opts.FailOn != "" {
		if _, err := finding.ParseSeverity(fs.Opts.FailOn); err != nil {
			return nil, Usagef("--fail-on: %v", err)
		}
	}
	return pos, nil
}

// flagError rewrites the flag package's errors, which write every flag
// with one dash, into one line about the --flag, with a suggestion for a
// misspelt one.
func (fs *FlagSet) flagError(err error) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		if near := fs.nearest(name); near != "" {
			return &UsageError{Msg: fmt.Sprintf("unknown flag %s: did you mean %s?", dashed(name), dashed(near)), OneLine: true}
		}
		return &UsageError{Msg: fmt.Sprintf("unknown flag %s ('keyguard %s -h' lists the flags)", dashed(name), fs.Name()), OneLine: true}
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		arg, long := "a value", name
		if l, ok := fs.aliases[name]; ok {
			long = l
		}
		if f := fs.Lookup(long); f != nil {
			if a, _ := flagArg(f); a != "" {
				arg = a
			}
		}
		return &UsageError{Msg: fmt.Sprintf("%s needs %s after it", dashed(name), arg), OneLine: true}
	}
	// invalid value "x" for flag -name: why / invalid boolean value "x" for -name: why
	for _, prefix := range []string{"invalid value ", "invalid boolean value "} {
		rest, ok := strings.CutPrefix(msg, prefix)
		if !ok {
			continue
		}
		val, rest, _ := strings.Cut(rest, " for ")
		rest = strings.TrimPrefix(rest, "flag ")
		name, why, _ := strings.Cut(strings.TrimPrefix(rest, "-"), ": ")
		if strings.Contains(why, val) { // the reason quotes the value already
			return &UsageError{Msg: fmt.Sprintf("%s: %s", dashed(name), why), OneLine: true}
		}
		return &UsageError{Msg: fmt.Sprintf("%s %s: %s", dashed(name), val, why), OneLine: true}
	}
	return &UsageError{Msg: msg}
}

// nearest is the defined flag name closest to name: within two edits,
// or one that starts with it, else "".
func (fs *FlagSet) nearest(name string) string {
	name = strings.TrimLeft(name, "-")
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	sort.Strings(names)
	best, bestD := "", 3
	for _, n := range names {
		if len(n) == 1 {
			continue
		}
		d := human.EditDistance(name, n)
		if d < bestD {
			best, bestD = n, d
		}
	}
	if best == "" && len(name) >= 2 {
		for _, n := range names {
			if strings.HasPrefix(n, name) || strings.HasPrefix(name, n) && len(n) > 2 {
				return n
			}
		}
	}
	return best
}

// Threshold is the severity of --fail-on.
func (fs *FlagSet) Threshold() finding.Severity {
	s, _ := finding.ParseSeverity(fs.Opts.FailOn)
	return s
}

// LoadRegistryOrNone is LoadRegistry for the audits, which also run
// without a registry: with none given (no --registry, no
// KEYGUARD_REGISTRY) and none found (no keyguard.yaml here), it returns
// an empty one and none = true. The audit then groups keys by the
// families it infers from their names alone.
func (fs *FlagSet) LoadRegistryOrNone(e *Env) (reg *registry.Registry, none bool, err error) {
	if !fs.RegistryGiven(e) {
		if _, err := os.Stat(fs.Opts.Registry); errors.Is(err, os.ErrNotExist) {
			reg, err := EmptyRegistry()
			return reg, true, err
		}
	}
	reg, err = fs.LoadRegistry()
	return reg, false, err
}

// RegistryGiven reports whether a registry was named: --registry, or
// KEYGUARD_REGISTRY.
func (fs *FlagSet) RegistryGiven(e *Env) bool {
	return fs.IsSet("registry") || e.Getenv("KEYGUARD_REGISTRY") != ""
}

// EmptyRegistry is the stand-in registry of a run without one: no
// templates, the default separator and policy.
func EmptyRegistry() (*registry.Registry, error) {
	return registry.Parse("", []byte("version: 1\nkeys: []\n"))
}

// LoadRegistry loads --registry within --max-registry-bytes.
func (fs *FlagSet) LoadRegistry() (*registry.Registry, error) {
	r, err := registry.LoadLimited(fs.Opts.Registry, registry.Limits{MaxBytes: int64(fs.Opts.MaxRegistryBytes)})
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w\n\tTry: keyguard init writes a starter keyguard.yaml (keyguard init --from-audit REPORT.json builds one from an audit), or pass --registry FILE", err)
		}
		return nil, err
	}
	return r, nil
}

// IsSet reports whether the flag name was given on the command line.
func (fs *FlagSet) IsSet(name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// DocsURLFlag is --docs-url of the commands that write findings: rule
// links under the published docs rather than a path that exists only in
// the repository.
func (fs *FlagSet) DocsURLFlag(p *string) {
	fs.StringVar(p, "docs-url", finding.DefaultDocsBase, "`URL` under which docs/ is published, for the rule links of the findings (\"\": links relative to the repository)")
}
