package main

import "context"

// runInit is being built; this placeholder keeps the command list whole.
func runInit(ctx context.Context, e *env, args []string) error {
	return usagef("this command is being built")
}
