package main

import (
	"github.com/keyguard/keyguard/internal/cli"
	"github.com/keyguard/keyguard/internal/redisconn"
)

// newFlags is the flag set of the command name.
func newFlags(e *env, name, usage, examples string) *cli.FlagSet {
	return cli.NewFlags(e.cli(), name, usage, examples)
}

// cli is the environment as the library commands take it.
func (e *env) cli() *cli.Env {
	return &cli.Env{Stdin: e.stdin, Stdout: e.stdout, Stderr: e.stderr, Getenv: e.getenv}
}

func redisFlags(fs *cli.FlagSet, e *env) {
	fs.Opts.Redis = e.getenv("KEYGUARD_REDIS")
	fs.Var((*urlValue)(&fs.Opts.Redis), "redis", "server `URL`: redis://host:port, rediss:// (TLS; ?cacert=FILE&cert=FILE&key=FILE&sni=NAME as redis-cli's flags), unix:///path (a socket) or redis-sentinel://host:26379#MASTER; user and password in the URL (env KEYGUARD_REDIS; docs/audit.md, \"Reaching the server\")")
	fs.BoolVar(&fs.Opts.Cluster, "cluster", false, "treat the URL's hosts as Redis Cluster seeds")
}

// urlValue is a Redis URL flag. Its String is what help shows as the
// default (taken from KEYGUARD_REDIS): the URL without its password.
type urlValue string

func (v *urlValue) Set(s string) error { *v = urlValue(s); return nil }

func (v *urlValue) String() string {
	if v == nil {
		return ""
	}
	return redisconn.DisplayURL(string(*v))
}

// targetFlag parses --redis (env KEYGUARD_REDIS) and --cluster.
func targetFlag(fs *cli.FlagSet) (*redisconn.Target, error) {
	return redisconn.FromFlags(fs.Opts.Redis, fs.Opts.Cluster)
}
