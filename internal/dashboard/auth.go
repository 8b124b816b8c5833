package dashboard

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
)

// Access is who may see the dashboard. The zero value lets everyone in,
// which CheckListen allows only on a loopback address.
type Access struct {
	// Token is a bearer token: "Authorization: Bearer TOKEN" (Prometheus'
	// authorization.credentials), or the password of basic auth with any
	// user name (a browser's login prompt).
	Token string
	// User and Password are basic-auth credentials.
	User, Password string
	// AllowedHosts are the names, besides loopback names and IP addresses,
	// that a dashboard without credentials answers to in the Host header:
	// "dash.internal" (any port), "dash.internal:8080", or ".internal" for
	// every name under it.
	AllowedHosts []string
}

func (a Access) enabled() bool { return a.Token != "" || a.User != "" }

// ParseBasicAuth reads "user:password" (the password may hold colons).
func ParseBasicAuth(s string) (user, password string, err error) {
	user, password, ok := strings.Cut(s, ":")
	switch {
	case !ok:
		return "", "", errors.New("want user:password")
	case user == "":
		return "", "", errors.New("the user name is empty (want user:password)")
	case password == "":
		return "", "", errors.New("the password is empty (want user:password)")
	case strings.ContainsAny(user, "\x00\r\n"), strings.ContainsAny(password, "\x00\r\n"):
		return "", "", errors.New("user and password cannot hold control characters")
	}
	return user, password, nil
}

// CheckListen refuses a listen address that other machines can reach
// unless access is protected, or insecurePublic says an open dashboard is
// intended. Loopback addresses (127.0.0.0/8, ::1, localhost) are always
// allowed.
func CheckListen(addr string, a Access, insecurePublic bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		return fmt.Errorf("--listen %q: want host:port, such as 127.0.0.1:8080", addr)
	}
	if isLoopback(host) || a.enabled() || insecurePublic {
		return nil
	}
	where := host
	if where == "" {
		where = "every interface"
	}
	return fmt.Errorf("--listen %s is reachable from other machines (%s) and the dashboard lists key names: protect it with --auth-token or --basic-auth user:password, or pass --insecure-public to serve it open", addr, where)
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	host, _, _ = strings.Cut(host, "%") // a zone: fe80::1%eth0
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// protect wraps h so that every path but /healthz needs the credentials,
// or, without credentials, a Host that hostAllowed accepts.
func (a Access) protect(h http.Handler) http.Handler {
	if !a.enabled() {
		return a.checkHost(h)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" || a.allows(r) {
			h.ServeHTTP(w, r)
			return
		}
		w.Header().Set("WWW-Authenticate", `Basic realm="keyguard", charset="UTF-8"`)
		http.Error(w, "keyguard: authentication required (basic auth, or Authorization: Bearer TOKEN)", http.StatusUnauthorized)
	})
}

// checkHost answers 421 Misdirected Request, on every path but /healthz,
// to a Host that hostAllowed refuses. A web page on another site can
// point its own name at this machine's address (DNS rebinding) and read a
// dashboard that asks for no credentials; the browser then sends that
// site's name as Host, which is how the request is told apart.
func (a Access) checkHost(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" || a.hostAllowed(r.Host) {
			h.ServeHTTP(w, r)
			return
		}
		http.Error(w, fmt.Sprintf("keyguard: this dashboard has no authentication and does not answer to the host %q: "+
			"open it as localhost or by IP address, start serve with --allowed-host NAME, or protect it with --auth-token or --basic-auth", r.Host),
			http.StatusMisdirectedRequest)
	})
}

// hostAllowed accepts a Host header (host or host:port) that is a
// loopback name (localhost, *.localhost), an IP address, or matches
// AllowedHosts. An IP address cannot be a rebinding: a page opened by
// address has that address as its origin, not another site's.
func (a Access) hostAllowed(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if host == "" || isLoopback(host) || strings.HasSuffix(host, ".localhost") {
		return true
	}
	if ip, _, _ := strings.Cut(host, "%"); net.ParseIP(ip) != nil {
		return true
	}
	for _, allowed := range a.AllowedHosts {
		allowed = strings.ToLower(strings.TrimSuffix(allowed, "."))
		switch {
		case strings.HasPrefix(allowed, "."):
			if strings.HasSuffix(host, allowed) {
				return true
			}
		case strings.Contains(allowed, ":") && !strings.HasPrefix(allowed, "["):
			if strings.EqualFold(hostport, allowed) {
				return true
			}
		case host == allowed:
			return true
		}
	}
	return false
}

func (a Access) allows(r *http.Request) bool {
	if a.Token != "" {
		if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && same(strings.TrimSpace(tok), a.Token) {
			return true
		}
	}
	user, pass, ok := r.BasicAuth()
	if !ok {
		return false
	}
	if a.Token != "" && same(pass, a.Token) {
		return true
	}
	// Both compared, always, so the time taken says nothing about which
	// one was wrong.
	u, p := same(user, a.User), same(pass, a.Password)
	return a.User != "" && u && p
}

// same compares secrets in constant time (hashed first, so that the
// lengths do not show either).
func same(got, want string) bool {
	g, w := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(g[:], w[:]) == 1
}
