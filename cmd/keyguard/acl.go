package main

import (
	"context"

	"github.com/keyguard/keyguard/internal/acl"
	"github.com/keyguard/keyguard/internal/cli"
)

// runACL prints Redis 7 ACL rules from the registry: one user per service,
// %RW~ on the templates it owns or writes, %R~ on those it reads.
func runACL(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "acl", "acl [--registry FILE] [--format commands|aclfile] [--commands RULES] [--no-records] [--out FILE]",
		"  keyguard acl                                  # ACL SETUSER lines, commented\n"+
			"  keyguard acl | grep -v '^#' | redis-cli       # load them (then give each user a password)\n"+
			"  keyguard acl --format aclfile --out users.acl # for the aclfile directive\n"+
			"  keyguard acl --commands '+@all -@dangerous +sort'")
	fs.RegistryFlag(e.cli())
	fs.OutputFlags("commands", "aclfile")
	commands := fs.String("commands", acl.DefaultCommands, "command rules of every user")
	noRecords := fs.Bool("no-records", false, "do not grant "+acl.RecordPattern+" (the SDK's writer records)")
	pos, err := fs.Parse(args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return cli.Usagef("acl takes no arguments; got %q", pos[0])
	}
	reg, err := fs.LoadRegistry()
	if err != nil {
		return err
	}
	opts := acl.Options{Commands: *commands, NoRecords: *noRecords}
	users, err := acl.Users(reg, opts)
	if err != nil {
		return err
	}
	out, err := fs.OpenOutput(e.cli())
	if err != nil {
		return err
	}
	if fs.Opts.Format == "aclfile" {
		err = acl.WriteFile(out, e.stderr, users, opts)
	} else {
		err = acl.WriteCommands(out, users, opts)
	}
	return out.Finish(err)
}
