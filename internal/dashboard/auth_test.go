package dashboard

import (
	"net/http"
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
