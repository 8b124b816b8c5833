package main

import (
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
