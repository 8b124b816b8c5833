// Command keyguard-demo tells keyguard's whole story on an embedded
// Redis-protocol server: no server, no registry, no setup.
//
//	go run ./cmd/keyguard-demo
//
// It is a command of its own so that the keyguard binary does not carry the
// embedded server.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
)

func main() {
	fs := flag.NewFlagSet("keyguard-demo", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: keyguard-demo\n\nThe whole keyguard story on an embedded server; it takes no flags.")
	}
	if err := fs.Parse(os.Args[1:]); err != nil {
		if err == flag.ErrHelp {
			return
		}
		os.Exit(2)
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "keyguard-demo takes no arguments")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "keyguard-demo:", err)
		os.Exit(2)
	}
}
