package main

import "context"

// runPreheat is being built; this placeholder keeps the command list whole.
func runPreheat(ctx context.Context, e *env, args []string) error {
	return usagef("this command is being built")
}
