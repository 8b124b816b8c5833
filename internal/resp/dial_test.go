package resp

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keyguard/keyguard/internal/redistest"
)

// TestMonitorStream reads MONITOR over a unix socket as an ACL user, on a
// real server: the lines are the commands another client sends, in order,
// with their size on the wire; the deadline of BeginUntil ends the stream
// with a timeout, and a cancelled context at once.
func TestMonitorStream(t *testing.T) {
	sock := t.TempDir() + "/r.sock"
	srv := redistest.Start(t, "unixsocket "+sock, "unixsocketperm 700")
	admin := srv.Client(t)
	ctx := context.Background()
	if err := admin.Do(ctx, "ACL", "SETUSER", "watcher", "on", ">pw", "+monitor", "+client|setname", "+client|id").Err(); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Network: "unix", Username: "watcher", Password: "pw"}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c, err := Dial(cctx, cfg, sock, Session{Name: "resp-test"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if ok, err := c.Simple(ctx, "MONITOR"); err != nil || ok != "OK" {
		t.Fatalf("MONITOR: %q %v", ok, err)
	}
	if err := c.BeginUntil(ctx, time.Now().Add(5*time.Second)); err != nil {
		t.Fatal(err)
	}
	admin.Set(ctx, "k\x00\"", strings.Repeat("v", 300), 0)
	admin.Get(ctx, "k")
	want := []string{`"set" "k\x00\"" "` + strings.Repeat("v", 300) + `"`, `"get" "k"`}
	for i, w := range want {
		l, err := c.ReadLine(200)
		if err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		full := len(w) + len(" [0 127.0.0.1:00000] ")
		if !strings.Contains(string(l.Text), "] "+w[:min(len(w), 100)]) || l.Cut != (l.Size-3 > 200) || l.Size < full {
			t.Errorf("line %d: %q cut %v size %d, want …%q", i, l.Text, l.Cut, l.Size, w)
		}
	}
	// The deadline ends the stream…
	if err := c.BeginUntil(ctx, time.Now().Add(50*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	var ne net.Error
	if _, err := c.ReadLine(200); !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("after the deadline: %v", err)
	}
	// …and so does the dial's context, at once.
	if err := c.BeginUntil(ctx, time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	time.AfterFunc(50*time.Millisecond, cancel)
	if _, err := c.ReadLine(200); err == nil || time.Since(start) > 30*time.Second {
		t.Errorf("after cancel: %v in %v", err, time.Since(start))
	}
}

// TestDialRefusals: wrong credentials are a ConnectError marked Auth, a
// socket that does not exist a ConnectError.
func TestDialRefusals(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	_, err := Dial(ctx, Config{Password: "wrong"}, srv.Addr, Session{})
	var ce *ConnectError
	if !errors.As(err, &ce) || !ce.Auth {
		t.Errorf("wrong password: %v", err)
	}
	_, err = Dial(ctx, Config{Network: "unix"}, filepath.Join(t.TempDir(), "none.sock"), Session{})
	if !errors.As(err, &ce) || ce.Auth {
		t.Errorf("missing socket: %v", err)
	}
}

// TestDialTLS: a real TLS port, with the server's certificate trusted
// and, without it, refused.
func TestDialTLS(t *testing.T) {
	certPEM, addr := tlsServer(t)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	ctx := context.Background()
	c, err := Dial(ctx, Config{TLS: &tls.Config{RootCAs: pool}}, addr, Session{Name: "resp-tls"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got, err := c.Simple(ctx, "CLIENT", "GETNAME"); err != nil || got != "resp-tls" {
		t.Errorf("CLIENT GETNAME over TLS: %q %v", got, err)
	}
	if _, err := Dial(ctx, Config{TLS: &tls.Config{}}, addr, Session{}); err == nil || !strings.Contains(err.Error(), "TLS handshake") {
		t.Errorf("untrusted certificate: %v", err)
	}
}

// tlsServer starts a redis-server with a TLS port and a self-signed
// certificate for 127.0.0.1; it returns the certificate and the address.
func tlsServer(t *testing.T) ([]byte, string) {
	t.Helper()
	dir := t.TempDir()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "keyguard test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	// redistest chooses the TLS port and chooses again if another process
	// takes it before redis-server binds it.
	_, ports := redistest.StartPorts(t, 1, func(p []int) []string {
		return []string{"tls-port " + strconv.Itoa(p[0]), "tls-cert-file " + certFile, "tls-key-file " + keyFile, "tls-auth-clients no"}
	})
	return certPEM, "127.0.0.1:" + strconv.Itoa(ports[0])
}

// ConfigGets reads several parameters in one round trip on a real
// server: one it does not have is left out, a user not allowed CONFIG GET
// gets the refusal, and the connection is in step after either.
func TestConfigGets(t *testing.T) {
	srv := redistest.Start(t, "repl-diskless-sync-delay 3", `save "3600 1"`)
	ctx := context.Background()
	c, err := Dial(ctx, Config{}, srv.Addr, Session{Name: "resp-test"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	v, err := c.ConfigGets(ctx, "repl-diskless-sync-delay", "no-such-parameter", "save")
	if err != nil || len(v) != 2 || v["repl-diskless-sync-delay"] != "3" || v["save"] != "3600 1" {
		t.Fatalf("ConfigGets: %q %v", v, err)
	}
	if _, err := c.ConfigGet(ctx, "no-such-parameter"); err == nil || !strings.Contains(err.Error(), "no-such-parameter") {
		t.Errorf("ConfigGet of a parameter the server does not have: %v", err)
	}
	if got, err := c.Simple(ctx, "PING"); err != nil || got != "PONG" {
		t.Fatalf("after: %q %v", got, err)
	}
	if err := srv.Client(t).Do(ctx, "ACL", "SETUSER", "snap", "on", ">pw", "+ping").Err(); err != nil {
		t.Fatal(err)
	}
	u, err := Dial(ctx, Config{Username: "snap", Password: "pw"}, srv.Addr, Session{})
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	var se ServerError
	if _, err := u.ConfigGets(ctx, "save", "repl-diskless-sync"); !errors.As(err, &se) || se.Code() != "NOPERM" {
		t.Errorf("a user without +config|get: %v", err)
	}
	if got, err := u.Simple(ctx, "PING"); err != nil || got != "PONG" {
		t.Fatalf("after the refusal: %q %v", got, err)
	}
}
