package main

import "context"

// runMerge is being built; this placeholder keeps the command list whole.
func runMerge(ctx context.Context, e *env, args []string) error {
	return usagef("this command is being built")
}
