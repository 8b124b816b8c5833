package dashboard

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

func TestCheckListen(t *testing.T) {
	token := Access{Token: "t"}
	for _, tc := range []struct {
		addr     string
		access   Access
		insecure bool
		ok       bool
	}{
		{"127.0.0.1:8080", Access{}, false, true},
		{"127.1.2.3:0", Access{}, false, true},
		{"localhost:8080", Access{}, false, true},
		{"[::1]:8080", Access{}, false, true},
		{":8080", Access{}, false, false},
		{"0.0.0.0:8080", Access{}, false, false},
		{"[::]:8080", Access{}, false, false},
		{"10.0.0.5:8080", Access{}, false, false},
		{"dashboard.internal:8080", Access{}, false, false},
		{"0.0.0.0:8080", token, false, true},
		{"0.0.0.0:8080", Access{User: "u", Password: "p"}, false, true},
		{"0.0.0.0:8080", Access{}, true, true},
		{"8080", Access{}, false, false},
		{"127.0.0.1", Access{}, false, false},
	} {
		err := CheckListen(tc.addr, tc.access, tc.insecure)
		if (err == nil) != tc.ok {
			t.Errorf("%s %+v insecure=%v: %v", tc.addr, tc.access, tc.insecure, err)
		}
	}
	err := CheckListen(":8080", Access{}, false)
	if err == nil || !strings.Contains(err.Error(), "--auth-token") || !strings.Contains(err.Error(), "--insecure-public") {
		t.Errorf("the refusal says what to do: %v", err)
	}
}

func TestParseBasicAuth(t *testing.T) {
	for _, tc := range []struct {
		in, user, pass string
		ok             bool
	}{
		{"ops:s3cret", "ops", "s3cret", true},
		{"ops:a:b:c", "ops", "a:b:c", true},
		{"ops", "", "", false},
		{":pw", "", "", false},
		{"ops:", "", "", false},
		{"o\nps:pw", "", "", false},
	} {
		u, p, err := ParseBasicAuth(tc.in)
		if (err == nil) != tc.ok || u != tc.user || p != tc.pass {
			t.Errorf("%q: %q %q %v", tc.in, u, p, err)
		}
	}
}

// TestAccess: with credentials set, every path but /healthz needs them.
func TestAccess(t *testing.T) {
	_, hs := newTestServer(t, Config{Auditor: &fixedAuditor{reps: []*Report{smallReport(t0)}},
		Access: Access{Token: "tok-123", User: "ops", Password: "pw"}})
	do := func(path string, set func(*http.Request)) int {
		req, _ := http.NewRequest("GET", hs.URL+path, nil)
		if set != nil {
			set(req)
		}
		resp, err := hs.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == 401 && resp.Header.Get("WWW-Authenticate") == "" {
			t.Error("401 without WWW-Authenticate")
		}
		return resp.StatusCode
	}
	bearer := func(tok string) func(*http.Request) {
		return func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+tok) }
	}
	basic := func(u, p string) func(*http.Request) { return func(r *http.Request) { r.SetBasicAuth(u, p) } }
	for _, tc := range []struct {
		path string
		set  func(*http.Request)
		code int
	}{
		{"/", nil, 401},
		{"/metrics", nil, 401},
		{"/api/report.json", nil, 401},
		{"/assets/style.css", nil, 401},
		{"/healthz", nil, 200},
		{"/", bearer("tok-123"), 200},
		{"/", bearer("tok-12"), 401},
		{"/", basic("ops", "pw"), 200},
		{"/", basic("ops", "pW"), 401},
		{"/", basic("other", "pw"), 401},
		{"/", basic("anyone", "tok-123"), 200},
	} {
		if got := do(tc.path, tc.set); got != tc.code {
			t.Errorf("%s: %d, want %d", tc.path, got, tc.code)
		}
	}
}

// FuzzParseBasicAuth: what parses joins back to the input.
func FuzzParseBasicAuth(f *testing.F) {
	f.Add("ops:pw")
	f.Add("a::b")
	f.Fuzz(func(t *testing.T, s string) {
		u, p, err := ParseBasicAuth(s)
		if err != nil {
			return
		}
		if u+":"+p != s || u == "" || p == "" || strings.Contains(u, ":") {
			t.Fatalf("%q → %q %q", s, u, p)
		}
	})
}

// TestHostCheck is a DNS-rebinding attempt: a page on attacker.example
// that resolved its name to the dashboard's address sends that name as
// Host. Without credentials the dashboard answers only loopback names, IP
// addresses and AllowedHosts (421 otherwise, no key name in the body);
// with credentials the credentials decide, whatever the Host.
func TestHostCheck(t *testing.T) {
	do := func(hs *httptest.Server, host, path string, set func(*http.Request)) (int, string) {
		req, _ := http.NewRequest("GET", hs.URL+path, nil)
		if host != "" {
			req.Host = host
		}
		if set != nil {
			set(req)
		}
		resp, err := hs.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	open, ohs := newTestServer(t, Config{Auditor: &fixedAuditor{reps: []*Report{smallReport(t0)}},
		Access: Access{AllowedHosts: []string{"dash.internal", "dash.example:8080", ".corp.example"}}})
	if err := open.AuditNow(context.Background()); err != nil {
		t.Fatal(err)
	}
	port := ohs.Listener.Addr().(*net.TCPAddr).Port
	for _, tc := range []struct {
		host, path string
		code       int
	}{
		{"", "/api/report.json", 200}, // 127.0.0.1:port
		{"localhost:" + strconv.Itoa(port), "/api/report.json", 200},
		{"LOCALHOST.", "/", 200},
		{"app.localhost:1", "/", 200},
		{"[::1]:" + strconv.Itoa(port), "/api/report.json", 200},
		{"10.1.2.3:7581", "/", 200},
		{"dash.internal:7581", "/api/report.json", 200},
		{"dash.example:8080", "/", 200},
		{"a.corp.example", "/", 200},
		{"attacker.example:7581", "/api/report.json", 421},
		{"attacker.example", "/", 421},
		{"attacker.example", "/metrics", 421},
		{"attacker.example", "/assets/style.css", 421},
		{"dash.example:9090", "/", 421},
		{"dash.internal.attacker.example", "/", 421},
		{"corp.example.attacker.example", "/", 421},
		{"localhost.attacker.example", "/", 421},
		{"127.0.0.1.nip.io", "/api/report.json", 421},
		{"attacker.example", "/healthz", 200},
	} {
		code, body := do(ohs, tc.host, tc.path, nil)
		if code != tc.code {
			t.Errorf("Host %q %s: %d, want %d", tc.host, tc.path, code, tc.code)
		}
		if code == 421 && (strings.Contains(body, "order:order:1:base") || !strings.Contains(body, "--allowed-host")) {
			t.Errorf("Host %q: the refusal is %q", tc.host, body)
		}
		if tc.path == "/api/report.json" && code == 200 && !strings.Contains(body, "order:order:1:base") {
			t.Errorf("Host %q: no report in %q", tc.host, body)
		}
	}
	_, ahs := newTestServer(t, Config{Auditor: &fixedAuditor{reps: []*Report{smallReport(t0)}}, Access: Access{Token: "tok"}})
	bearer := func(r *http.Request) { r.Header.Set("Authorization", "Bearer tok") }
	if code, _ := do(ahs, "attacker.example", "/", nil); code != 401 {
		t.Errorf("with auth, no credentials: %d, want 401", code)
	}
	if code, _ := do(ahs, "dash.anywhere.example", "/", bearer); code != 200 {
		t.Errorf("with auth and credentials, any Host: %d, want 200", code)
	}
}
