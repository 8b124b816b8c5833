package main

import "context"

// runVersion is being built; this placeholder keeps the command list whole.
func runVersion(ctx context.Context, e *env, args []string) error {
	return usagef("this command is being built")
}
