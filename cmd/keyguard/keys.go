package main

import (
	"bufio"
	"path/filepath"
	"strings"

	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/cli"
)

// keysFlags are --keys and --keys-format of the audits: every key read,
// one row each, besides the report.
type keysFlags struct{ path, format string }

func newKeysFlags(fs *cli.FlagSet) *keysFlags {
	k := &keysFlags{}
	fs.StringVar(&k.path, "keys", "", "also write every key read, one row each (db, key, type, encoding, bytes, elements, TTL, template or family, owner), to `FILE`")
	fs.StringVar(&k.format, "keys-format", "", "`FORMAT` of --keys: csv|jsonl (default: jsonl for a .jsonl, .ndjson or .json file, else csv)")
	return k
}

// check refuses a format no export is written in.
func (k *keysFlags) check() error {
	if k.format == "" {
		return nil
	}
	k.format = strings.ToLower(k.format)
	for _, f := range report.KeyExportFormats {
		if f == k.format {
			return nil
		}
	}
	return cli.Usagef("--keys-format %q: use csv or jsonl", k.format)
}

// keysOut is an open --keys file.
type keysOut struct {
	out *cli.Output
	bw  *bufio.Writer
	x   *report.KeyExport
}

// open opens the --keys file (nil without --keys): written to a temporary
// file beside it, renamed into place when the run ends.
func (k *keysFlags) open(e *env) (*keysOut, error) {
	if k.path == "" {
		return nil, nil
	}
	format := k.format
	if format == "" {
		format = report.KeysCSV
		if ext := strings.ToLower(filepath.Ext(k.path)); ext == ".jsonl" || ext == ".json" || ext == ".ndjson" {
			format = report.KeysJSONL
		}
	}
	if k.path == "-" {
		return nil, cli.Usagef("--keys -: the rows would mix with the report on stdout; name a file")
	}
	out, err := cli.OpenOutput(e.cli(), "--keys", k.path)
	if err != nil {
		return nil, err
	}
	bw := bufio.NewWriterSize(out, 1<<16)
	x, err := report.NewKeyExport(bw, format)
	if err != nil {
		out.Close(false)
		return nil, err
	}
	return &keysOut{out: out, bw: bw, x: x}, nil
}

// export is the export to give the aggregation; nil without --keys.
func (k *keysOut) export() *report.KeyExport {
	if k == nil {
		return nil
	}
	return k.x
}

// close commits the file when ok (and every row was written), or
// removes it.
func (k *keysOut) Close(ok bool) error {
	if k == nil {
		return nil
	}
	err := k.x.Err()
	if err == nil {
		err = k.bw.Flush()
	}
	if !ok {
		k.out.Close(false)
		return nil
	}
	return k.out.Finish(err)
}
