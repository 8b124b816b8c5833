package resp

import (
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/keyguard/keyguard/internal/redistest"
)

// full starts a server that serves one client, and takes that one; a
// password, when given, is then required of the others.
func full(t *testing.T, password string) *redistest.Server {
	t.Helper()
	srv := redistest.Start(t, "maxclients 1")
	held, err := net.Dial("tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { held.Close() })
	cmd, want := "PING\r\n", "+PONG\r\n" // the server has counted it once it answers
	if password != "" {
		cmd, want = "CONFIG SET requirepass "+password+"\r\n", "+OK\r\n"
	}
	if _, err := held.Write([]byte(cmd)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, len(want))
	if _, err := io.ReadFull(held, buf); err != nil || string(buf) != want {
		t.Fatalf("held connection: %q %v", buf, err)
	}
	return srv
}

// TestHungUpSaysWhy: a server over its maxclients answers a new
// connection with an error and closes it; the client that wrote first
// (the handshake's AUTH, or a first command) saw "broken pipe" or EOF.
// The connection's error now carries what the server said and what to
// do; a server that serves clients says nothing to Farewell.
func TestHungUpSaysWhy(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		srv  *redistest.Server
		cfg  Config
	}{
		{"no password: the first command", full(t, ""), Config{}},
		{"a password: the handshake", full(t, "pw"), Config{Password: "pw"}},
	} {
		c, err := Dial(ctx, tc.cfg, tc.srv.Addr, Session{})
		if err == nil {
			_, err = c.Simple(ctx, "INFO", "server")
			c.Close()
		}
		var hu *HungUp
		if !errors.As(err, &hu) || !strings.Contains(err.Error(), "max number of clients reached (it serves as many clients as its maxclients setting allows") {
			t.Errorf("%s: %v", tc.name, err)
		}
		var ce *ConnectError
		if errors.As(err, &ce) && ce.Auth {
			t.Errorf("%s: told as refused credentials: %v", tc.name, err)
		}
	}
	if said := Farewell(ctx, Config{}, redistest.Start(t).Addr); said != "" {
		t.Errorf("a server with room said %q", said)
	}
}

// TestProtectedModeSaysWhy: a server in protected mode (no password for
// its default user) hangs up on clients of other hosts with a page of
// text; the error says what to do in one line. It needs an address of
// this host other than loopback.
func TestProtectedModeSaysWhy(t *testing.T) {
	var ip string
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			ip = n.IP.String()
			break
		}
	}
	if ip == "" {
		t.Skip("no address of this host besides loopback")
	}
	srv := redistest.Start(t, "bind 127.0.0.1 "+ip, "protected-mode yes")
	ctx := context.Background()
	c, err := Dial(ctx, Config{}, net.JoinHostPort(ip, strconv.Itoa(srv.Port)), Session{})
	if err == nil {
		_, err = c.Simple(ctx, "INFO", "server")
		c.Close()
	}
	var hu *HungUp
	if !errors.As(err, &hu) || !strings.Contains(err.Error(), "DENIED, protected mode: while its default user has no password, Redis serves clients of its own host only") || strings.Contains(err.Error(), "\n") {
		t.Errorf("protected mode: %v", err)
	}
}
