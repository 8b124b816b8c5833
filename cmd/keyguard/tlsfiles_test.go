package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keyguard/keyguard/internal/redistest"
)

// pki writes a CA, a server certificate it signs for the name
// redis.test only (no IP address), and a client certificate it signs,
// into dir; it returns the files' paths.
func pki(t *testing.T, dir string) (ca, srvCert, srvKey, cliCert, cliKey string) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "keyguard test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	leaf := func(serial int64, cn string, usage []x509.ExtKeyUsage, dns []string) (string, string) {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn}, DNSNames: dns,
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: usage}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kder, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return write(cn+".pem", "CERTIFICATE", der), write(cn+".key", "EC PRIVATE KEY", kder)
	}
	ca = write("ca.pem", "CERTIFICATE", caDER)
	// A Cluster node shows its server certificate as a client too (on the
	// cluster bus, tls-cluster).
	srvCert, srvKey = leaf(2, "redis.test", []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}, []string{"redis.test"})
	cliCert, cliKey = leaf(3, "client", []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, nil)
	return
}

// TestTLSFiles: a server on TLS alone, its certificate signed by a private
// CA for a name that is not the address, and clients required to show a
// certificate of the same CA (tls-auth-clients yes, redis.conf's default):
// with cacert, cert, key and sni in the rediss:// URL (redis-cli's TLS
// flags) every command that talks to it works; each one missing is named,
// with the option that mends it; options that cannot work are usage
// errors. Before, only the system's CAs and no client certificate could be
// used: such a server could not be reached at all.
func TestTLSFiles(t *testing.T) {
	dir := t.TempDir()
	ca, srvCert, srvKey, cliCert, cliKey := pki(t, dir)
	srv, ports := redistest.StartPorts(t, 1, func(p []int) []string {
		return []string{"tls-port " + strconv.Itoa(p[0]), "tls-cert-file " + srvCert, "tls-key-file " + srvKey,
			"tls-ca-cert-file " + ca, "tls-auth-clients yes", "tls-replication yes"}
	})
	rdb := srv.Client(t)
	ctx := context.Background()
	for i := range 200 {
		rdb.Set(ctx, fmt.Sprintf("user:profile:%d:base", i), "p", time.Hour)
	}
	_, reg := migrateFiles(t)
	addr := "127.0.0.1:" + strconv.Itoa(ports[0])
	full := "rediss://" + addr + "?cacert=" + ca + "&cert=" + cliCert + "&key=" + cliKey + "&sni=redis.test"
	for _, args := range [][]string{
		{"audit", "--registry", reg, "--fail-on", "never"},
		{"audit", "--snapshot", "--registry", reg, "--fail-on", "never"},
		{"hotkeys", "--registry", reg},
		{"investigate", "--registry", reg, "--key", "user:profile:7:base", "--watch", "0"},
		{"writers", "--registry", reg},
		{"migrate", "verify", "--registry", reg, "--all-deprecated", "--progress", "never"},
	} {
		code, out, errOut := runCLI(t, "", append(args, "--redis", full)...)
		if code == exitError || strings.Contains(out+errOut, "TLS with") || strings.Contains(out+errOut, "cannot connect") {
			t.Errorf("%v: exit %d\n%s%s", args[:2], code, out, errOut)
		}
	}
	if code, out, errOut := runCLI(t, "", "audit", "--registry", reg, "--fail-on", "never", "--redis", full); code != 0 || !strings.Contains(out, "complete") || !strings.Contains(out, "200 keys") {
		t.Errorf("audit: exit %d\n%s%s", code, out, errOut)
	}
	for _, tt := range []struct{ url, want string }{
		{"rediss://" + addr + "?sni=redis.test", "add cacert=CA.pem"},
		{"rediss://" + addr, "add sni=NAME"},
		{"rediss://" + addr + "?cacert=" + ca, "add sni=NAME"},
		{"rediss://" + addr + "?cacert=" + ca + "&sni=redis.test", "add cert=client.pem&key=client.key"},
		{"rediss://" + addr + "?cacert=" + cliKey, "holds no PEM certificate"},
		{"rediss://" + addr + "?cacert=" + filepath.Join(dir, "nope.pem"), "no such file"},
		{"rediss://" + addr + "?cert=" + cliCert, "cert= needs key="},
		{"rediss://" + addr + "?cert=" + cliCert + "&key=" + srvKey, "are not a PEM certificate and its private key"},
		{"redis://" + addr + "?cacert=" + ca, "TLS options: use rediss://"},
		{"rediss://" + addr + "?cacert=", "cacert= is empty"},
	} {
		for _, cmd := range [][]string{{"audit", "--registry", reg}, {"hotkeys", "--registry", reg}} {
			code, _, errOut := runCLI(t, "", append(cmd, "--redis", tt.url)...)
			if code != exitError || !strings.Contains(errOut, tt.want) || strings.Contains(errOut, "PRIVATE KEY") {
				t.Errorf("%s %s: exit %d: %s\nwant %q", cmd[0], tt.url, code, errOut, tt.want)
			}
		}
	}
}

// TestTLSCluster: a Redis Cluster on TLS alone for its clients (tls-cluster:
// CLUSTER NODES and MOVED name the TLS ports), clients required to show a
// certificate: the audit with the TLS files in the URL walks every master
// and counts every key once, and so does hotkeys.
func TestTLSCluster(t *testing.T) {
	dir := t.TempDir()
	ca, srvCert, srvKey, cliCert, cliKey := pki(t, dir)
	c := redistest.StartClusterPorts(t, 3, 1, func(p []int) []string {
		return []string{"tls-port " + strconv.Itoa(p[0]), "tls-cert-file " + srvCert, "tls-key-file " + srvKey,
			"tls-ca-cert-file " + ca, "tls-auth-clients yes", "tls-cluster yes", "tls-replication yes"}
	})
	ctx := context.Background()
	// The TLS ports: CLUSTER NODES names them to a TLS client (to a
	// plain one, the plain ports).
	var seeds []string
	for _, node := range c.Nodes {
		p, err := node.Client(t).ConfigGet(ctx, "tls-port").Result()
		if err != nil || p["tls-port"] == "" || p["tls-port"] == "0" {
			t.Fatalf("tls-port of %s: %v %v", node.Addr, p, err)
		}
		seeds = append(seeds, "127.0.0.1:"+p["tls-port"])
	}
	// Keys written through the plain ports, each on its slot's node.
	n := 0
	for _, node := range c.Nodes {
		nc := node.Client(t)
		for i := 0; n < 900 && i < 5000; i++ {
			k := fmt.Sprintf("user:profile:%d:base", i)
			if err := nc.Set(ctx, k, "p", time.Hour).Err(); err == nil {
				n++
			}
		}
	}
	_, reg := migrateFiles(t)
	url := "rediss://" + strings.Join(seeds, ",") + "?cacert=" + ca + "&cert=" + cliCert + "&key=" + cliKey + "&sni=redis.test"
	code, stdout, errOut := runCLI(t, "", "audit", "--cluster", "--registry", reg, "--fail-on", "never", "--redis", url)
	if code != 0 || !strings.Contains(stdout, "3 of 3 masters") || !strings.Contains(stdout, "complete") || !strings.Contains(stdout, fmt.Sprintf("%d keys", n)) {
		t.Errorf("audit: exit %d (%d keys written)\n%s%s", code, n, stdout, errOut)
	}
	if code, stdout, errOut := runCLI(t, "", "hotkeys", "--cluster", "--registry", reg, "--redis", url); code == exitError {
		t.Errorf("hotkeys: exit %d\n%s%s", code, stdout, errOut)
	}
}
