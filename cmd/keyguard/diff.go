package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/audit/inventory"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/audit/snapshot"
	"github.com/keyguard/keyguard/internal/cli"
)

func runDiff(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "diff", "diff [--format text|json|csv] [--out FILE] [--fail-on SEVERITY] OLD NEW",
		`  keyguard diff monday.json today.json
  keyguard audit --format json | keyguard diff baseline.json -   # - reads one report from stdin
  keyguard diff --format json --fail-on warning old.json new.json  # CI: fail on any new warning
  keyguard diff yesterday.csv today.csv                            # key exports (audit or rdb --keys FILE)
  keyguard diff --format csv --out changes.csv yesterday.rdb today.rdb
  keyguard diff keys.csv dump.rdb                                   # an export against a snapshot

OLD and NEW are two audit reports (--format json): groups new, gone and
changed, and new findings. Or two key exports (--keys FILE) or RDB files,
in any mix: every key added, removed, holding another type, or grown or
shrunk past --min-bytes and --min-change, by template. Large inputs are
compared through temporary files (--tmp), in bounded memory.`)
	fs.OutputFlags("text", "json", "csv")
	fs.FailOnFlag()
	fs.RegistryFlag(e.cli())
	minBytes := fs.Int64("min-bytes", report.DefaultKeyDiffMinBytes, "key diffs: a key has grown or shrunk when its size moved by at least `N` bytes")
	minChange := fs.Float64("min-change", report.DefaultKeyDiffRatio*100, "key diffs: … and by at least this `PERCENT` of its old size")
	limit := fs.Int("limit", 20, "key diffs, text: changes listed per kind (0: all)")
	var docs string
	fs.DocsURLFlag(&docs)
	fs.MaxLineFlag(report.DefaultMaxKeyLine)
	tmp := fs.String("tmp", "", "key diffs: `DIR` for the temporary files (default: the system's)")
	pos, err := fs.Parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return cli.Usagef("give two audit reports (--format json), key exports (--keys FILE) or RDB files: OLD NEW")
	}
	if pos[0] == "-" && pos[1] == "-" {
		return cli.Usagef("only one of the inputs can come from stdin (-)")
	}
	if *minBytes < 0 || *minChange < 0 || *limit < 0 {
		return cli.Usagef("--min-bytes, --min-change and --limit cannot be negative")
	}
	var ins [2]*diffInput
	for i, p := range pos {
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
		o := report.KeyDiffOptions{MinBytes: *minBytes, Ratio: *minChange / 100, TempDir: *tmp}
		return runKeyDiff(ctx, e, fs, ins, o, *limit)
	}
	if fs.Opts.Format == "csv" {
		return cli.Usagef("--format csv is for key diffs; a diff of two reports is text or json")
	}
	old, err := ins[0].report()
	if err != nil {
		return err
	}
	cur, err := ins[1].report()
	if err != nil {
		return err
	}
	d := report.Diff(old, cur)
	if docs != "" {
		for i := range d.NewFindings {
			d.NewFindings[i].Doc = finding.HelpURI(docs, d.NewFindings[i].Rule)
		}
	}
	out, err := fs.OpenOutput(e.cli())
	if err != nil {
		return err
	}
	if fs.Opts.Format == "json" {
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
	return cli.Verdict(fds, fs.Threshold())
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

func openDiffInput(e *env, path string) (*diffInput, error) {
	in := &diffInput{name: path}
	if path == "-" {
		in.br = bufio.NewReaderSize(e.stdin, 1<<16)
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

// runKeyDiff compares two key exports or RDB files; an RDB file is first
// exported to a temporary file.
func runKeyDiff(ctx context.Context, e *env, fs *cli.FlagSet, ins [2]*diffInput, o report.KeyDiffOptions, limit int) error {
	var readers [2]*report.KeyReader
	for i, in := range ins {
		if in.kind == diffRDB {
			path, err := rdbKeys(ctx, e, fs, in, o.TempDir)
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
			in.size = fi.Size()
			in.br = bufio.NewReaderSize(f, 1<<16)
		}
		r, err := report.NewKeyReaderLimited(in.br, int64(fs.Opts.MaxLineBytes))
		if err != nil {
			return fmt.Errorf("%s: %w", in.name, err)
		}
		readers[i] = r
		o.SizeHint += in.size
	}
	if o.SizeHint == 0 {
		o.SizeHint = -1 // stdin: split into the default number of buckets
	}
	out, err := fs.OpenOutput(e.cli())
	if err != nil {
		return err
	}
	w := report.NewKeyDiffWriter(out, fs.Opts.Format, limit)
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

// rdbKeys exports the keys of an RDB file to a temporary CSV file and
// returns its path.
func rdbKeys(ctx context.Context, e *env, fs *cli.FlagSet, in *diffInput, dir string) (string, error) {
	reg, noReg, err := fs.LoadRegistryOrNone(e.cli())
	if err != nil {
		return "", err
	}
	src, err := snapshot.Open([]string{in.name}, in.br)
	defer snapshot.Close(src)
	if err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, "keyguard-keys-*.csv")
	if err != nil {
		return "", fmt.Errorf("key diff: temporary file: %w", err)
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<16)
	x, err := report.NewKeyExport(bw, report.KeysCSV)
	if err != nil {
		return f.Name(), err
	}
	res, err := snapshot.Run(ctx, reg, src, snapshot.Options{Inventory: inventory.Options{NoRegistry: noReg, Keys: x}, DB: -1, TuneGC: e.getenv("GOGC") == ""})
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

// readReportFile reads an audit report from path, or from stdin for "-".
func readReportFile(e *env, path string) (*report.Report, error) {
	return cli.ReadReportFile(e.cli(), path)
}
