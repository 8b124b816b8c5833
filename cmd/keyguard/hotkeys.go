package main

import "context"

// runHotkeys is being built; this placeholder keeps the command list whole.
func runHotkeys(ctx context.Context, e *env, args []string) error {
	return usagef("this command is being built")
}
