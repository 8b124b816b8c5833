package main

import "context"

// runServe is being built; this placeholder keeps the command list whole.
func runServe(ctx context.Context, e *env, args []string) error {
	return usagef("this command is being built")
}
