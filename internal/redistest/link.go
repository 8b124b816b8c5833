package redistest

import (
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// HeldLink is a replica's link to its master through the test: what the
// master sends is held while the link is held (the link stays up, the
// replica applies nothing: a replica behind its master), and passes
// again once let go. Start the replica with "replicaof 127.0.0.1
// "+link.Port().
type HeldLink struct {
	ln   net.Listener
	mu   sync.Mutex
	held bool
	cond *sync.Cond
}

// NewHeldLink listens on a free loopback port and forwards each
// connection to master.
func NewHeldLink(tb testing.TB, master string) *HeldLink {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	l := &HeldLink{ln: ln}
	l.cond = sync.NewCond(&l.mu)
	tb.Cleanup(func() { ln.Close(); l.Release() })
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", master)
			if err != nil {
				in.Close()
				continue
			}
			go func() { io.Copy(out, in); out.Close() }()
			go l.pass(in, out)
		}
	}()
	return l
}

// pass copies what the master sends to the replica, waiting while the
// link is held.
func (l *HeldLink) pass(in, out net.Conn) {
	defer in.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := out.Read(buf)
		l.mu.Lock()
		for l.held {
			l.cond.Wait()
		}
		l.mu.Unlock()
		if n > 0 {
			if _, werr := in.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// Port is the port the replica connects to.
func (l *HeldLink) Port() string { return strings.TrimPrefix(l.ln.Addr().String(), "127.0.0.1:") }

// Hold keeps what the master sends from here on from the replica.
func (l *HeldLink) Hold() { l.mu.Lock(); l.held = true; l.mu.Unlock() }

// Release lets what was held, and what follows, through.
func (l *HeldLink) Release() {
	l.mu.Lock()
	l.held = false
	l.mu.Unlock()
	l.cond.Broadcast()
}

// StartReplica starts a replica of master (extraConfig after its
// replicaof line). It does not wait for the sync: tests wait for what
// they need of it (WaitInfo).
func StartReplica(tb testing.TB, master *Server, extraConfig ...string) *Server {
	tb.Helper()
	return Start(tb, append([]string{"replicaof 127.0.0.1 " + strconv.Itoa(master.Port)}, extraConfig...)...)
}

// StartHeldReplica starts a master and a replica of it whose link passes
// through a HeldLink, waits until the replica is in sync, and returns the
// three; the link is not held yet.
func StartHeldReplica(tb testing.TB) (master, replica *Server, link *HeldLink) {
	tb.Helper()
	master = Start(tb, "repl-diskless-sync-delay 0")
	link = NewHeldLink(tb, master.Addr)
	replica = Start(tb, "replicaof 127.0.0.1 "+link.Port(), "repl-diskless-sync-delay 0")
	replica.WaitInfo(tb, "replication", func(in string) bool {
		return strings.Contains(in, "master_link_status:up") && strings.Contains(in, "master_sync_in_progress:0")
	})
	master.WaitInfo(tb, "replication", func(in string) bool { return strings.Contains(in, "state=online") })
	return master, replica, link
}
