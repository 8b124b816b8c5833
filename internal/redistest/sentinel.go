package redistest

import (
	"net"
	"path/filepath"
	"strconv"
	"testing"
)

// StartSentinel starts a Redis Sentinel (redis-server --sentinel) that
// monitors master under name, with a quorum of one and a failure noticed
// after a second; extra are more sentinel.conf lines. A Sentinel answers
// SENTINEL commands, INFO and PING on its port; Kill and Stop work as on
// a server.
func StartSentinel(tb testing.TB, name string, master *Server, extra ...string) *Server {
	tb.Helper()
	dir := tb.TempDir()
	bin := lookBinary(tb)
	s := &Server{Dir: dir, bin: bin, logPath: filepath.Join(dir, "sentinel.log"), confIn: filepath.Join(dir, "sentinel.conf"), stderr: &lockedBuffer{}}
	host, port, _ := net.SplitHostPort(master.Addr)
	lines := append([]string{
		"sentinel monitor " + name + " " + host + " " + port + " 1",
		"sentinel down-after-milliseconds " + name + " 1000",
		"sentinel failover-timeout " + name + " 5000",
	}, extra...)
	err := s.startOnFreePorts(tb, 1, func(ports []int) string { return sentinelConfig(dir, s.logPath, ports[0], lines) })
	if err != nil {
		tb.Fatalf("redistest: start redis-server --sentinel (%s) in %s: %v\n%s", bin, dir, err, s.tail())
	}
	return s
}

// sentinelConfig is a Sentinel's sentinel.conf: the server's own lines a
// Sentinel takes, then lines.
func sentinelConfig(dir, logPath string, port int, lines []string) string {
	out := ""
	for _, l := range append([]string{
		"port " + strconv.Itoa(port),
		"bind 127.0.0.1",
		"protected-mode no",
		"daemonize no",
		"dir " + quote(dir),
		"logfile " + quote(logPath),
	}, lines...) {
		out += l + "\n"
	}
	return out
}
