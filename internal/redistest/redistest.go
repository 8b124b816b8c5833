package redistest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

const (
	// readyTimeout bounds how long one start attempt waits for PING.
	readyTimeout = 10 * time.Second
	// startAttempts is how often Start retries when the chosen port was
	// taken between choosing it and redis-server binding it.
	startAttempts = 5
	// restartWindow is how long Restart keeps retrying the same port.
	restartWindow = 5 * time.Second
	// cleanupGrace is how long cleanup waits after SIGTERM before SIGKILL.
	cleanupGrace = 3 * time.Second
	// stopGrace is how long Stop waits after SIGTERM before SIGKILL; longer
	// than cleanupGrace because a test may have asked for a save on shutdown.
	stopGrace = 10 * time.Second
	// logTailLines is how much of the server log a failed test gets.
	logTailLines = 40
)

// Server is one redis-server process on a loopback port.
type Server struct {
	Addr string // "127.0.0.1:port"
	Port int
	Dir  string // working directory; SAVE writes dump.rdb here

	bin     string
	conf    string // full config fed on stdin, reused by Restart
	confIn  string // a Sentinel's: the file conf is written to (a Sentinel rewrites it; stdin is refused)
	logPath string
	stderr  *lockedBuffer // output before the log file is open (config errors)

	mu   sync.Mutex
	proc *process // nil when not started or stopped
}

// process is one run of redis-server.
type process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once the process has exited and been reaped
	err  error         // Wait result, valid after done is closed

	logStart int64 // log size before this run, to read only its own lines
}

// Start starts a standalone redis-server with the default test config plus
// extraConfig lines (redis.conf syntax, later lines win), waits until it
// answers PING, and stops it at cleanup.
func Start(tb testing.TB, extraConfig ...string) *Server {
	tb.Helper()
	return start(tb, lookBinary(tb), false, extraConfig)
}

// StartPorts is Start for a server that listens on more loopback ports
// than its client port (a TLS port): config turns n free ports into
// config lines. Ports another process takes before redis-server binds
// them are chosen anew, as Start does for the client port; the ports
// used are returned.
func StartPorts(tb testing.TB, n int, config func(ports []int) []string) (*Server, []int) {
	tb.Helper()
	var used []int
	s := startPorts(tb, lookBinary(tb), false, n, func(ports []int) []string {
		used = ports
		return config(ports)
	})
	return s, used
}

// Client returns a go-redis client for s, closed at cleanup.
func (s *Server) Client(tb testing.TB) *redis.Client {
	tb.Helper()
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

// URL returns "redis://127.0.0.1:port".
func (s *Server) URL() string { return "redis://" + s.Addr }

// Kill sends SIGKILL and waits for the process to exit. It is a no-op when
// the server is not running.
func (s *Server) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.halt(syscall.SIGKILL, 0)
}

// WaitInfo waits until the server's INFO section ("" for the default
// sections) satisfies ok, for up to 10 s, and returns it; the test fails
// when it never does.
func (s *Server) WaitInfo(tb testing.TB, section string, ok func(info string) bool) string {
	tb.Helper()
	c := s.Client(tb)
	var info string
	for try := 0; try < 400; try++ {
		args := []string{}
		if section != "" {
			args = append(args, section)
		}
		in, err := c.Info(context.Background(), args...).Result()
		if err == nil && ok(in) {
			return in
		}
		info = in
		time.Sleep(25 * time.Millisecond)
	}
	tb.Fatalf("redistest: INFO %s of %s never reached the state the test waits for:\n%s", section, s.Addr, info)
	return ""
}

// Saved has the server SAVE its dataset and returns the snapshot's
// bytes. A save refused because one runs in the background (a replica's
// sync) is asked again, for up to 10 s.
func (s *Server) Saved(tb testing.TB) []byte {
	tb.Helper()
	c := s.Client(tb)
	err := c.Save(context.Background()).Err()
	for end := time.Now().Add(10 * time.Second); err != nil && strings.Contains(err.Error(), "in progress") && time.Now().Before(end); {
		time.Sleep(25 * time.Millisecond)
		err = c.Save(context.Background()).Err()
	}
	if err != nil {
		tb.Fatalf("redistest: SAVE on %s: %v", s.Addr, err)
	}
	data, err := os.ReadFile(filepath.Join(s.Dir, "dump.rdb"))
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// Freeze stops the server's process (SIGSTOP), as a host that hangs: it
// keeps its connections and answers nothing until Thaw, or the test's
// end.
func (s *Server) Freeze(tb testing.TB) {
	tb.Helper()
	s.signal(tb, syscall.SIGSTOP)
	tb.Cleanup(func() { s.Thaw(tb) })
}

// Thaw lets a frozen server run again (SIGCONT).
func (s *Server) Thaw(tb testing.TB) {
	tb.Helper()
	s.signal(tb, syscall.SIGCONT)
}

func (s *Server) signal(tb testing.TB, sig syscall.Signal) {
	tb.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return
	}
	if err := s.proc.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		tb.Fatalf("redistest: signal %v to %s: %v", sig, s.Addr, err)
	}
}

// Stop sends SIGTERM and waits for a clean shutdown (SIGKILL after 10 s).
// It is a no-op when the server is not running.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.halt(syscall.SIGTERM, stopGrace)
}

// Restart starts the server again with the same config, port and directory,
// so data saved to Dir (SAVE, or the cluster's nodes.conf) is loaded again.
// A running server is stopped first. Restart fails the test if the server
// cannot come back within a few seconds, e.g. because another process took
// the port meanwhile. For a cluster node it waits for PING only, not for
// cluster_state:ok.
func (s *Server) Restart(tb testing.TB) {
	tb.Helper()
	if err := s.TryRestart(); err != nil {
		tb.Fatal(err)
	}
}

// TryRestart is Restart for data the server may refuse (an RDB file in
// Dir this redis-server cannot load): the error, with the end of the log,
// instead of failing the test; the server then stays stopped.
func (s *Server) TryRestart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.halt(syscall.SIGTERM, stopGrace)
	deadline := time.Now().Add(restartWindow)
	for {
		err := s.launch()
		if err == nil {
			return nil
		}
		if !errors.Is(err, errPortBusy) || time.Now().After(deadline) {
			return fmt.Errorf("redistest: restart redis-server on %s: %v\n%s", s.Addr, err, s.tail())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// SlowLoading is the config of a server that loads its dataset slowly
// (key-load-delay µs a key) and answers clients while it loads, for
// RestartWhileLoading.
func SlowLoading(delayMicros int) []string {
	return []string{"key-load-delay " + strconv.Itoa(delayMicros), "loading-process-events-interval-bytes 1024"}
}

// RestartWhileLoading restarts the server (as Restart: it loads what was
// saved in its directory, so SAVE first) and returns once the new process
// answers while it still loads, with a channel that is closed when it has
// loaded. The server must load slowly and answer meanwhile: start it with
// SlowLoading's config and a few thousand keys.
func (s *Server) RestartWhileLoading(tb testing.TB) <-chan struct{} {
	tb.Helper()
	loaded := make(chan struct{})
	var rerr error
	go func() {
		defer close(loaded)
		rerr = s.TryRestart() // returns once the server answers PING: loaded
	}()
	ctx := context.Background()
	deadline := time.Now().Add(readyTimeout)
	for {
		// The old process answers loading:0 until it stops.
		c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
		info, err := c.Info(ctx, "persistence").Result()
		c.Close()
		if err == nil && strings.Contains(info, "\r\nloading:1\r\n") {
			return loaded
		}
		select {
		case <-loaded:
			if rerr != nil {
				tb.Fatal(rerr)
			}
			tb.Fatal("redistest: the server loaded its dataset before it was seen loading: give it more keys or a longer key-load-delay")
		default:
		}
		if time.Now().After(deadline) {
			tb.Fatalf("redistest: %s never answered while loading (last: %q, %v)", s.Addr, info, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Log returns the server log (all runs, including Restart), followed by
// anything redis-server wrote to stderr before its log file was open.
func (s *Server) Log() string {
	b, err := os.ReadFile(s.logPath)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		b = append(b, fmt.Sprintf("[redistest: read %s: %v]\n", s.logPath, err)...)
	}
	if e := s.stderr.String(); e != "" {
		b = append(b, "[stderr]\n"...)
		b = append(b, e...)
	}
	return string(b)
}

// logSize returns the current size of the log file (0 when absent).
func (s *Server) logSize() int64 {
	fi, err := os.Stat(s.logPath)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// logSince returns the log from byte offset off on, plus stderr.
func (s *Server) logSince(off int64) string {
	b, _ := os.ReadFile(s.logPath)
	if off <= int64(len(b)) {
		b = b[off:]
	}
	return string(b) + s.stderr.String()
}

// errPortBusy marks a start that failed because the port was taken.
var errPortBusy = errors.New("port already in use")

// start chooses free ports and launches a server, retrying on port races.
func start(tb testing.TB, bin string, cluster bool, extra []string) *Server {
	tb.Helper()
	return startPorts(tb, bin, cluster, 0, func([]int) []string { return extra })
}

// startPorts starts a server whose extra config lines use n more free
// ports (extra gets them).
func startPorts(tb testing.TB, bin string, cluster bool, n int, extra func(ports []int) []string) *Server {
	tb.Helper()
	dir := tb.TempDir()
	s := &Server{
		Dir:     dir,
		bin:     bin,
		logPath: dir + string(os.PathSeparator) + "redis.log",
		stderr:  &lockedBuffer{},
	}
	nports := 1
	if cluster {
		nports = 2 // client port and cluster bus port
	}
	err := s.startOnFreePorts(tb, nports+n, func(ports []int) string {
		return config(dir, s.logPath, ports[:nports], extra(ports[nports:]))
	})
	if err != nil {
		tb.Fatalf("redistest: start redis-server (%s) in %s: %v\n%s", s.bin, dir, err, s.tail())
	}
	return s
}

// startOnFreePorts starts s on n free ports (the first its client port)
// with the config conf renders for them, and chooses again when another
// process takes a port first.
func (s *Server) startOnFreePorts(tb testing.TB, n int, conf func(ports []int) string) error {
	var err error
	for range startAttempts {
		var ports []int
		if ports, err = freePorts(n); err != nil {
			return err
		}
		s.Port = ports[0]
		s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port))
		s.conf = conf(ports)
		s.mu.Lock()
		err = s.launch()
		s.mu.Unlock()
		if err == nil {
			tb.Cleanup(func() { s.cleanup(tb) })
			return nil
		}
		if !errors.Is(err, errPortBusy) && !errors.Is(err, errNotReady) {
			return err
		}
	}
	return err
}

// cleanup stops the server and, for a failed test, shows the log tail.
func (s *Server) cleanup(tb testing.TB) {
	s.mu.Lock()
	s.halt(syscall.SIGTERM, cleanupGrace)
	s.mu.Unlock()
	if tb.Failed() {
		tb.Logf("redistest: redis-server %s (dir %s):\n%s", s.Addr, s.Dir, s.tail())
	}
}

// config renders the config fed to redis-server on stdin. ports[1], when
// present, is the cluster bus port.
func config(dir, logPath string, ports []int, extra []string) string {
	var b strings.Builder
	lines := []string{
		"port " + strconv.Itoa(ports[0]),
		"bind 127.0.0.1",
		"protected-mode no",
		"daemonize no",
		"dir " + quote(dir),
		"logfile " + quote(logPath),
		`save ""`,
		"appendonly no",
		// DEBUG (SLEEP, RELOAD, OBJECT) is handy in fault tests; loopback only.
		"enable-debug-command yes",
	}
	if len(ports) > 1 {
		lines = append(lines, "cluster-port "+strconv.Itoa(ports[1]))
	}
	lines = append(lines, extra...)
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// quote makes a double-quoted redis.conf argument.
func quote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`)
	return `"` + r.Replace(s) + `"`
}

// launch runs redis-server with s.conf and waits until it answers PING.
// On failure the process is gone. Callers hold s.mu.
func (s *Server) launch() error {
	cmd := exec.Command(s.bin, "-")
	cmd.Stdin = strings.NewReader(s.conf)
	if s.confIn != "" {
		if err := os.WriteFile(s.confIn, []byte(s.conf), 0o600); err != nil {
			return err
		}
		cmd = exec.Command(s.bin, s.confIn, "--sentinel")
	}
	cmd.Dir = s.Dir
	cmd.Stdout = s.stderr
	cmd.Stderr = s.stderr
	cmd.SysProcAttr = sysProcAttr()
	logStart := s.logSize()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("exec %s: %w (set KEYGUARD_REDIS_SERVER to a working redis-server 7+)", s.bin, err)
	}
	p := &process{cmd: cmd, done: make(chan struct{}), logStart: logStart}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	s.proc = p
	if err := s.waitReady(p); err != nil {
		s.halt(syscall.SIGKILL, 0)
		return err
	}
	return nil
}

// errNotReady marks a server that never answered PING in time.
var errNotReady = errors.New("no PING answer")

// waitReady polls until the server started as p answers PING, p exits, or
// readyTimeout passes.
func (s *Server) waitReady(p *process) error {
	deadline := time.Now().Add(readyTimeout)
	pid := p.cmd.Process.Pid
	var last error
	for {
		select {
		case <-p.done:
			if strings.Contains(s.logSince(p.logStart), "Address already in use") {
				return fmt.Errorf("%s: %w", s.Addr, errPortBusy)
			}
			return fmt.Errorf("redis-server exited during start (%v); see log below", p.err)
		default:
		}
		ok, err := probe(s.Addr, pid)
		if ok {
			return nil
		}
		last = err
		if time.Now().After(deadline) {
			return fmt.Errorf("%s after %v (last: %v): %w", s.Addr, readyTimeout, last, errNotReady)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// probe asks addr for INFO server and PING. It reports ready only when the
// answering server is the process pid (another test's server may own the
// port we raced for) and PING says PONG (not LOADING).
func probe(addr string, pid int) (bool, error) {
	conn, err := net.DialTimeout("tcp", addr, 250*time.Millisecond)
	if err != nil {
		return false, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	const req = "*2\r\n$4\r\nINFO\r\n$6\r\nserver\r\n*1\r\n$4\r\nPING\r\n"
	if _, err := io.WriteString(conn, req); err != nil {
		return false, err
	}
	r := bufio.NewReader(conn)
	info, err := readReply(r)
	if err != nil {
		return false, fmt.Errorf("INFO: %w", err)
	}
	want := "process_id:" + strconv.Itoa(pid) + "\r\n"
	if !strings.Contains(info, want) {
		return false, fmt.Errorf("%s is served by another process", addr)
	}
	pong, err := readReply(r)
	if err != nil {
		return false, fmt.Errorf("PING: %w", err)
	}
	if pong != "PONG" {
		return false, fmt.Errorf("PING answered %q", pong)
	}
	return true, nil
}

// readReply reads one RESP2 simple string or bulk string reply.
func readReply(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("empty reply")
	}
	switch line[0] {
	case '+':
		return line[1:], nil
	case '-':
		return "", errors.New(line[1:])
	case '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 || n > 1<<20 {
			return "", fmt.Errorf("bad bulk length %q", line)
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return "", err
		}
		return string(buf[:n]), nil
	}
	return "", fmt.Errorf("unexpected reply %q", line)
}

// halt signals the running process and waits for it to exit, escalating to
// SIGKILL after grace (grace 0 means wait without escalation). Callers hold
// s.mu.
func (s *Server) halt(sig syscall.Signal, grace time.Duration) {
	p := s.proc
	if p == nil {
		return
	}
	s.proc = nil
	_ = p.cmd.Process.Signal(sig) // ErrProcessDone when it already exited
	if grace > 0 {
		select {
		case <-p.done:
			return
		case <-time.After(grace):
			_ = p.cmd.Process.Signal(syscall.SIGKILL)
		}
	}
	<-p.done
}

// tail returns the last lines of the log for failure messages.
func (s *Server) tail() string {
	log := strings.TrimRight(s.Log(), "\n")
	lines := strings.Split(log, "\n")
	if len(lines) > logTailLines {
		lines = lines[len(lines)-logTailLines:]
	}
	return "--- " + s.logPath + " (tail) ---\n" + strings.Join(lines, "\n")
}

// freePorts returns n distinct loopback ports that were free a moment ago.
// Listeners are held together so the ports differ; the race with other
// processes after closing them is handled by retries in start.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("choose a free loopback port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// lookBinary finds redis-server, skipping (or failing in CI) when missing.
func lookBinary(tb testing.TB) string {
	tb.Helper()
	name := "redis-server"
	if env := os.Getenv("KEYGUARD_REDIS_SERVER"); env != "" {
		name = env
	}
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	msg := fmt.Sprintf("redistest: %s not found (%v); install redis-server 7+ or set KEYGUARD_REDIS_SERVER", name, err)
	if os.Getenv("KEYGUARD_REQUIRE_REDIS") == "1" {
		tb.Fatal(msg + " (required: KEYGUARD_REQUIRE_REDIS=1)")
		return ""
	}
	tb.Skip(msg)
	return ""
}

// lockedBuffer is an io.Writer safe to read while the process writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
