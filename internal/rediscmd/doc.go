// Package rediscmd is the Redis 7 command table: arity, flags, ACL
// categories and key specs of every command and subcommand, and key
// extraction from go-redis argument vectors that matches the server's
// COMMAND GETKEYSANDFLAGS without allocating.
//
//	cmd, ok := rediscmd.LookupArgs(args) // args := redisCmd.Args()
//	if !ok { /* unknown command (module, newer Redis): treat conservatively */ }
//	err := cmd.Keys(args, func(pos int, key string, f rediscmd.KeyFlags) bool { ...; return true })
//
// The table (zz_commands.go) is generated from a real server's COMMAND INFO
// by ./internal/gen and committed; ServerVersion records which server.
//
// Extraction reproduces the server's own (Redis 7.0 getKeysFromCommandWithSpecs:
// key specs first, the command's dedicated extractor for SET, BITFIELD,
// SORT, MIGRATE, GEORADIUS, XREAD, EVAL/FCALL, the numkeys commands when
// the specs cannot be used), quirks included: the keys are the ones ACL
// checks and cluster routing see. It cannot see keys a command only reaches
// while running: SORT's BY/GET patterns, keys a script or function touches
// without declaring them. Commands newer than ServerVersion and module
// commands are not in the table.
//
// It imports only its generated name hash; the SDK (redishook, hotkey,
// analyzer) and the tools share it.
package rediscmd

//go:generate go run ./internal/gen -out zz_commands.go
