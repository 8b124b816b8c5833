package redisconn

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
)

// tlsParams are the options of a rediss:// URL that keyguard reads itself
// (go-redis's ParseURL refuses them), named as redis-cli's TLS flags:
// cacert (the CA that signed the server's certificate, PEM), cert and key
// (the client's certificate and key, for a server with tls-auth-clients),
// sni (the name the certificate is checked against, when not the host).
var tlsParams = []string{"cacert", "cert", "key", "sni"}

// tlsFiles is what a URL's TLS options ask for.
type tlsFiles struct {
	caCert, cert, key, sni string
}

func (f tlsFiles) any() bool { return f != tlsFiles{} }

// splitTLSParams takes keyguard's TLS options out of a URL's tail (its
// path and query) and returns the tail left for go-redis.
func splitTLSParams(tail string) (string, tlsFiles, error) {
	path, query, ok := strings.Cut(tail, "?")
	if !ok {
		return tail, tlsFiles{}, nil
	}
	v, err := url.ParseQuery(query)
	if err != nil {
		return tail, tlsFiles{}, nil // go-redis says what is wrong
	}
	var f tlsFiles
	for _, p := range tlsParams {
		if !v.Has(p) {
			continue
		}
		if len(v[p]) > 1 {
			return "", f, fmt.Errorf("%s is given %d times", p, len(v[p]))
		}
		val := v.Get(p)
		if val == "" {
			return "", f, fmt.Errorf("%s= is empty: give a file (sni: a host name)", p)
		}
		switch p {
		case "cacert":
			f.caCert = val
		case "cert":
			f.cert = val
		case "key":
			f.key = val
		case "sni":
			f.sni = val
		}
		v.Del(p)
	}
	if !f.any() {
		return tail, f, nil
	}
	if len(v) == 0 {
		return path, f, nil
	}
	return path + "?" + v.Encode(), f, nil
}

// apply loads the files into c, the TLS config go-redis made of the URL.
// Its errors name the file and never quote a key.
func (f tlsFiles) apply(c *tls.Config) error {
	if f.caCert != "" {
		pem, err := os.ReadFile(f.caCert)
		if err != nil {
			return fmt.Errorf("cacert: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return fmt.Errorf("cacert=%s holds no PEM certificate (-----BEGIN CERTIFICATE-----)", f.caCert)
		}
		c.RootCAs = pool
	}
	switch {
	case f.cert != "" && f.key != "":
		pair, err := tls.LoadX509KeyPair(f.cert, f.key)
		if err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				return fmt.Errorf("cert/key: %w", pe)
			}
			return fmt.Errorf("cert=%s and key=%s are not a PEM certificate and its private key: %s", f.cert, f.key, strings.TrimPrefix(err.Error(), "tls: "))
		}
		c.Certificates = []tls.Certificate{pair}
	case f.cert != "":
		return errors.New("cert= needs key= (the client certificate's private key) too")
	case f.key != "":
		return errors.New("key= needs cert= (the client certificate) too")
	}
	if f.sni != "" {
		c.ServerName = f.sni
	}
	return nil
}

// tlsAdvice is what to change in the --redis URL (flag) after a failed TLS
// handshake with err.
func tlsAdvice(err error, flag string) string {
	var ua x509.UnknownAuthorityError
	var hn x509.HostnameError
	msg := err.Error()
	switch {
	case errors.As(err, &ua), strings.Contains(msg, "certificate signed by unknown authority"):
		return fmt.Sprintf("the server's certificate is signed by a CA this machine does not trust: add cacert=CA.pem to the rediss:// URL of %s (skip_verify=true only to test)", flag)
	case errors.As(err, &hn), strings.Contains(msg, "certificate is valid for"):
		return fmt.Sprintf("the server's certificate names another host: connect by a name it lists, or add sni=NAME to the rediss:// URL of %s", flag)
	case strings.Contains(msg, "certificate required"), strings.Contains(msg, "bad certificate"), strings.Contains(msg, "unknown certificate"):
		return fmt.Sprintf("the server wants a client certificate it trusts (tls-auth-clients): add cert=client.pem&key=client.key to the rediss:// URL of %s", flag)
	case strings.Contains(msg, "expired"):
		return "a certificate has expired or is not valid yet: check the server's (and the client's) certificate dates and this machine's clock"
	}
	return "check rediss:// and the server certificate"
}
