package snapshot

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/audit/inventory"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/cli"
	"github.com/keyguard/keyguard/registry"
)

// DiffOptions are what keyguard diff runs with.
type DiffOptions struct {
	Inputs    [2]string // OLD and NEW: reports, key exports or RDB files; "-" is stdin
	Format    string    // text, json or csv (key diffs)
	Out       string
	Threshold finding.Severity
	Docs      string // --docs-url
	MaxLine   int64  // the longest line of a key export
	Limit     int    // key diffs, text: changes listed per kind
	Keys      report.KeyDiffOptions
	// LoadRegistry is called only when an input is an RDB file, to
	// classify its keys.
	LoadRegistry func() (*registry.Registry, bool, error)
}

// Diff writes the drift between two audit reports (new and gone groups,
// growth, new findings), or between two key exports or RDB files in any
// mix (every key added, removed, retyped, grown or shrunk). It returns
// cli.ErrFindings when a new finding reaches the threshold.
func Diff(ctx context.Context, e *cli.Env, o DiffOptions) error {
	var ins [2]*diffInput
	for i, p := range o.Inputs {
		in, err := openDiffInput(e, p)
		if err != nil {
			return err
		}
		defer in.Close()
		ins[i] = in
	}
	if (ins[0].kind == diffReport) != (ins[1].kind == diffReport) {
		rep, other := ins[0], ins[1]
		if other.kind == diffReport {
			rep, other = other, rep
		}
		return cli.Usagef("%s is an audit report and %s is not: compare two reports, or two key exports or RDB files (audit or rdb --keys FILE exports keys)",
			rep.name, other.name)
	}
	if ins[0].kind != diffReport {
		return keyDiff(ctx, e, o, ins)
	}
	if o.Format == "csv" {
		return cli.Usagef("--format csv is for key diffs; a diff of two reports is text or json")
	}
	warmed := cli.WarmReportBytes(ins[0].size + ins[1].size) // the files' sizes, read when opened
	old, err := ins[0].report()
	if err != nil {
		warmed()
		return err
	}
	cur, err := ins[1].report()
	warmed()
	if err != nil {
		return err
	}
	d := report.Diff(old, cur)
	if o.Docs != "" {
		for i := range d.NewFindings {
			d.NewFindings[i].Doc = finding.HelpURI(o.Docs, d.NewFindings[i].Rule)
		}
	}
	out, err := cli.OpenOutput(e, "--out", o.Out)
	if err != nil {
		return err
	}
	if o.Format == "json" {
		err = d.WriteJSON(out)
	} else {
		err = d.WriteText(out)
	}
	if err := out.Finish(err); err != nil {
		return err
	}
	fds := make([]finding.Finding, len(d.NewFindings))
	for i, f := range d.NewFindings {
		fds[i] = f.Finding
	}
	return cli.Verdict(fds, o.Threshold)
}

// Kinds of diff input, told apart by their first bytes.
const (
	diffReport = "report"
	diffKeys   = "keys"
	diffRDB    = "rdb"
)

// diffInput is one side of a diff.
type diffInput struct {
	name string
	kind string
	br   *bufio.Reader
	f    *os.File // nil for stdin
	size int64
}

func openDiffInput(e *cli.Env, path string) (*diffInput, error) {
	in := &diffInput{name: path}
	if path == "-" {
		in.br = bufio.NewReaderSize(e.Stdin, 1<<16)
	} else {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("%w\n\tTry: write reports with keyguard audit --format json --out FILE, key exports with --keys FILE", err)
		}
		if fi, err := f.Stat(); err == nil {
			in.size = fi.Size()
		}
		in.f, in.br = f, bufio.NewReaderSize(f, 1<<16)
	}
	head, _ := in.br.Peek(256)
	switch {
	case bytes.HasPrefix(head, []byte("REDIS")):
		in.kind = diffRDB
	case report.IsKeyExport(head):
		in.kind = diffKeys
	default:
		in.kind = diffReport
	}
	return in, nil
}

func (in *diffInput) Close() {
	if in.f != nil {
		in.f.Close()
	}
}

func (in *diffInput) report() (*report.Report, error) {
	rep, err := report.ReadReport(in.br)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", in.name, err)
	}
	return rep, nil
}

// keyDiff compares two key exports or RDB files; an RDB file is first
// exported to a temporary file.
func keyDiff(ctx context.Context, e *cli.Env, do DiffOptions, ins [2]*diffInput) error {
	o := do.Keys
	var readers [2]*report.KeyReader
	for i, in := range ins {
		if in.kind == diffRDB {
			path, err := rdbKeys(ctx, e, do.LoadRegistry, in, o.TempDir)
			if path != "" {
				defer os.Remove(path)
			}
			if err != nil {
				return err
			}
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			fi, _ := f.Stat()
			// Buckets are sized by the inputs' bytes: a row of this
			// format is about half the bytes of its CSV row, and takes in
			// a bucket's tables what the CSV row did.
			in.size = 2 * fi.Size()
			readers[i] = report.NewDiffKeyReader(f)
		} else {
			r, err := report.NewKeyReaderLimited(in.br, do.MaxLine)
			if err != nil {
				return fmt.Errorf("%s: %w", in.name, err)
			}
			readers[i] = r
		}
		o.SizeHint += in.size
	}
	if o.SizeHint == 0 {
		o.SizeHint = -1 // stdin: split into the default number of buckets
	}
	out, err := cli.OpenOutput(e, "--out", do.Out)
	if err != nil {
		return err
	}
	w := report.NewKeyDiffWriter(out, do.Format, do.Limit)
	o.Stop = func() error {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("interrupted: %w", err)
		}
		return nil
	}
	sum, err := report.KeyDiff(readers[0], readers[1], o, func(c *report.KeyChange) error {
		if err := o.Stop(); err != nil {
			return err
		}
		return w.Change(c)
	})
	if err == nil {
		err = w.Close(sum, ins[0].name, ins[1].name)
	}
	return out.Finish(err)
}

// rdbKeys exports the keys of an RDB file to a temporary file (in
// report.KeysDiff, what the comparison reads) and returns its path.
func rdbKeys(ctx context.Context, e *cli.Env, load func() (*registry.Registry, bool, error), in *diffInput, dir string) (string, error) {
	reg, noReg, err := load()
	if err != nil {
		return "", err
	}
	src, err := Open([]string{in.name}, in.br)
	defer Close(src)
	if err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, "keyguard-keys-*")
	if err != nil {
		return "", fmt.Errorf("key diff: temporary file: %w", err)
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<16)
	x, err := report.NewKeyExport(bw, report.KeysDiff)
	if err != nil {
		return f.Name(), err
	}
	res, err := Run(ctx, reg, src, Options{Inventory: inventory.Options{NoRegistry: noReg, Keys: x}, DB: -1, TuneGC: e.Getenv("GOGC") == ""})
	if err != nil {
		return f.Name(), err
	}
	if !res.Complete {
		return f.Name(), &rdbIncompleteError{stops: res.Stopped, keysOnly: true}
	}
	if err := x.Err(); err != nil {
		return f.Name(), err
	}
	return f.Name(), bw.Flush()
}
