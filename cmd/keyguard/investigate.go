package main

import "context"

// runInvestigate is being built; this placeholder keeps the command list whole.
func runInvestigate(ctx context.Context, e *env, args []string) error {
	return usagef("this command is being built")
}
