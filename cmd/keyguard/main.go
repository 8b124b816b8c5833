// Command keyguard is Redis key governance for teams that share one Redis
// or Redis Cluster: a key registry, lint, key checks, audits and more.
// Run "keyguard help" for the command list.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/keyguard/keyguard/internal/cli"
	"github.com/keyguard/keyguard/internal/human"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/logging"
)

func main() {
	// go-redis logs dial retries and cluster state through a package
	// logger, to stderr, before keyguard can say what went wrong in one
	// line. The process is keyguard's: silence the library here, once.
	redis.SetLogger(&logging.VoidLogger{})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv})
	stop()
	os.Exit(code)
}

// env is everything a command touches outside itself, injected so tests
// run commands in-process.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
}

// Exit codes, the same for every command.
const (
	exitClean    = 0 // nothing at or above --fail-on
	exitFindings = 1 // findings at or above --fail-on
	exitError    = 2 // usage, configuration or connection error
)

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, e *env, args []string) error
}

func commands() []command {
	return []command{
		{"lint", "load and lint the registry", runLint},
		{"check", "classify concrete keys (arguments, or one per line on stdin with -)", runCheck},
		{"gen", "generate typed key builders (Go, Java, Python, TypeScript) from the registry", runGen},
		{"audit", "audit a live Redis / Cluster (read-only SCAN; inventory and rule findings)", runAudit},
		{"rdb", "the same audit from RDB snapshot files, offline (several files: one Cluster)", runRDB},
		{"diff", "drift between two audit reports: new and gone groups, growth, new findings", runDiff},
		{"merge", "one report from reports of different shards, hosts or resumed runs", runMerge},
		{"investigate", "who overwrites whose key: find, look, watch TTLs, capture writers", runInvestigate},
		{"migrate", "rename keys from one template to another: plan, copy, verify, cleanup", runMigrate},
		{"scan-code", "find hand-built and unregistered Redis keys in Go, Java, Python and TypeScript code", runScanCode},
		{"hotkeys", "hot keys merged from SDK reports and server evidence", runHotkeys},
		{"preheat", "load a list of keys through the loader, rate-limited", runPreheat},
		{"serve", "web dashboard and Prometheus /metrics, auditing on a schedule", runServe},
		{"writers", "who wrote which template (from SDK writer records)", runWriters},
		{"acl", "Redis ACL rules generated from the registry, one user per owner", runACL},
		{"init", "write a commented starter keyguard.yaml (or one from an audit report)", runInit},
		{"version", "print the version and VCS revision", runVersion},
		{"demo", "the whole story on an embedded server, no setup", runDemo},
	}
}

func run(ctx context.Context, args []string, e *env) int {
	if len(args) == 0 {
		printHelp(e.stderr) // a command line that does nothing is a usage error
		return exitError
	}
	switch args[0] {
	case "help", "-h", "--help", "-help":
		if len(args) > 1 {
			return run(ctx, []string{args[1], "-h"}, e)
		}
		printHelp(e.stdout)
		return exitClean
	case "--version", "-version", "-V":
		return run(ctx, append([]string{"version"}, args[1:]...), e)
	}
	var names []string
	for _, c := range commands() {
		if c.name == args[0] {
			return exitCode(e, c.name, c.run(ctx, e, args[1:]))
		}
		names = append(names, c.name)
	}
	if strings.HasPrefix(args[0], "-") {
		fmt.Fprintf(e.stderr, "keyguard: %s before a command: write keyguard COMMAND [flags] ('keyguard help' lists the commands)\n", args[0])
		return exitError
	}
	best, bestD := "", 3
	for _, n := range names {
		if d := human.EditDistance(args[0], n); d < bestD {
			best, bestD = n, d
		}
	}
	if best != "" {
		fmt.Fprintf(e.stderr, "keyguard: unknown command %q: did you mean %s?\n", args[0], best)
	} else {
		fmt.Fprintf(e.stderr, "keyguard: unknown command %q\nRun 'keyguard help' for the list.\n", args[0])
	}
	return exitError
}

// exitCode is the one place that turns an outcome into an exit code.
func exitCode(e *env, name string, err error) int {
	var ue *cli.UsageError
	switch {
	case err == nil:
		return exitClean
	case errors.Is(err, cli.ErrFindings):
		return exitFindings
	case errors.Is(err, cli.ErrHelp):
		return exitClean
	case errors.As(err, &ue) && ue.OneLine:
		fmt.Fprintf(e.stderr, "keyguard %s: %v\n", name, err)
		return exitError
	case errors.As(err, &ue):
		fmt.Fprintf(e.stderr, "keyguard %s: %v\nRun 'keyguard %s -h' for usage.\n", name, err, name)
		return exitError
	default:
		fmt.Fprintf(e.stderr, "keyguard %s: %v\n", name, err)
		return exitError
	}
}

func printHelp(w io.Writer) {
	fmt.Fprintln(w, "keyguard: Redis key governance for teams that share one Redis or Redis Cluster.")
	fmt.Fprintln(w, "\nUsage: keyguard COMMAND [flags]\n\nCommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-12s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nExit codes: 0 clean, 1 findings at or above --fail-on, 2 usage, configuration or connection error.")
	fmt.Fprintln(w, "Run 'keyguard COMMAND -h' for a command's flags and examples; docs/rules.md explains every rule.")
}

// runDemo runs keyguard-demo, a command of its own so that this binary does
// not carry the embedded server: the one beside this executable or on PATH.
func runDemo(ctx context.Context, e *env, args []string) error {
	path, err := exec.LookPath("keyguard-demo")
	if self, serr := os.Executable(); serr == nil {
		if p := filepath.Join(filepath.Dir(self), "keyguard-demo"); fileExists(p) {
			path, err = p, nil
		}
	}
	if err != nil {
		return cli.Usagef("the demo is its own command: run it with 'go run github.com/keyguard/keyguard/cmd/keyguard-demo' (or 'go run ./cmd/keyguard-demo' in a checkout)")
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = e.stdin, e.stdout, e.stderr
	return cmd.Run()
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}
