package main

import "context"

// runScanCode is being built; this placeholder keeps the command list whole.
func runScanCode(ctx context.Context, e *env, args []string) error {
	return usagef("this command is being built")
}
