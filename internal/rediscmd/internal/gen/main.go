// Command gen writes rediscmd's zz_commands.go from the COMMAND INFO of a
// real redis-server.
//
//	go run ./internal/gen -addr 127.0.0.1:6379 -out zz_commands.go
//	go run ./internal/gen -out zz_commands.go   # starts redis-server from PATH on a unix socket
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/rediscmd/internal/gencmd"
)

func main() {
	addr := flag.String("addr", "", "host:port of a running Redis >= 7.0 (empty: start -server on a temporary unix socket)")
	server := flag.String("server", "redis-server", "redis-server binary started when -addr is empty")
	out := flag.String("out", "zz_commands.go", "file to write")
	flag.Parse()
	if err := run(*addr, *server, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gen-commands:", err)
		os.Exit(1)
	}
}

func run(addr, server, out string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	opt := &redis.Options{Addr: addr, Protocol: 2}
	if addr == "" {
		sock, stop, err := startServer(ctx, server)
		if err != nil {
			return err
		}
		defer stop()
		opt.Network, opt.Addr = "unix", sock
	}
	c := redis.NewClient(opt)
	defer c.Close()
	snap, err := gencmd.Fetch(ctx, c)
	if err != nil {
		return fmt.Errorf("read command table from %s: %w", opt.Addr, err)
	}
	if err := gencmd.Check(snap); err != nil {
		return err
	}
	src, err := gencmd.Render(snap)
	if err != nil {
		return fmt.Errorf("render %s: %w", out, err)
	}
	if err := os.WriteFile(out, src, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	fmt.Fprintf(os.Stderr, "gen-commands: wrote %s from redis %s (%d commands)\n", out, snap.Version, len(snap.Commands))
	return nil
}

// startServer runs a throw-away redis-server listening on a unix socket
// only (no TCP port to race for) and waits until it answers PING.
func startServer(ctx context.Context, bin string) (sock string, stop func(), err error) {
	dir, err := os.MkdirTemp("", "gen-commands-")
	if err != nil {
		return "", nil, fmt.Errorf("temp dir: %w", err)
	}
	sock = filepath.Join(dir, "redis.sock")
	cmd := exec.Command(bin, "--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no", "--dir", dir)
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("start %s: %w (install redis-server >= 7.0 or pass -addr)", bin, err)
	}
	stop = func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		os.RemoveAll(dir)
	}
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, Protocol: 2, MaxRetries: -1})
	defer c.Close()
	for {
		if err = c.Ping(ctx).Err(); err == nil {
			return sock, stop, nil
		}
		select {
		case <-ctx.Done():
			stop()
			return "", nil, fmt.Errorf("%s did not answer PING on %s: %w", bin, sock, errors.Join(err, ctx.Err()))
		case <-time.After(20 * time.Millisecond):
		}
	}
}
