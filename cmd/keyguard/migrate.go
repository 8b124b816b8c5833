package main

import "context"

// runMigrate is being built; this placeholder keeps the command list whole.
func runMigrate(ctx context.Context, e *env, args []string) error {
	return usagef("this command is being built")
}
