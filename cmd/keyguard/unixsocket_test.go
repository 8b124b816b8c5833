package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/keyguard/keyguard/internal/redistest"
)

// TestUnixSocketURL: every command that talks to a server reaches one on
// its Unix socket (unix:///path, the server's unixsocket setting), with
// credentials and a database in the URL, as it does on host:port; a path
// that is not absolute, --cluster and a socket that is not there are told
// what to write. Before, unix:// was refused ("the scheme must be redis://
// or rediss://").
func TestUnixSocketURL(t *testing.T) {
	dir, reg := migrateFiles(t)
	sock := filepath.Join(t.TempDir(), "r.sock")
	srv := redistest.Start(t, "unixsocket "+sock, "unixsocketperm 700", "maxmemory-policy allkeys-lfu", "lfu-log-factor 0")
	rdb := srv.Client(t)
	ctx := context.Background()
	if err := rdb.Do(ctx, "ACL", "SETUSER", "ops", "on", ">s3cret", "~*", "&*", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	for i := range 300 {
		rdb.Set(ctx, fmt.Sprintf("user:profile:%d:base", i), fmt.Sprintf("p%d", i), time.Hour)
	}
	for range 50 {
		rdb.Get(ctx, "user:profile:7:base")
	}
	url := "unix://ops:s3cret@" + sock
	for _, tc := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"audit", "--registry", reg, "--fail-on", "never"}, 0, []string{"of unix://ops@" + sock + " (1 node)", "complete", sock + " master", "300 keys"}},
		{[]string{"audit", "--snapshot", "--registry", reg, "--fail-on", "never"}, 0, []string{"complete", "300 keys"}},
		{[]string{"hotkeys", "--registry", reg, "--top", "3"}, 0, []string{"OBJECT FREQ on " + sock + " (allkeys-lfu): 300 keys read", "user:profile:7:base"}},
		{[]string{"investigate", "--registry", reg, "--key", "user:profile:7:base", "--watch", "0"}, 0, []string{`"user:profile:7:base"  string`}},
		{[]string{"writers", "--registry", reg}, 0, []string{"unix://ops@" + sock}},
		{[]string{"migrate", "copy", "--registry", reg, "--all-deprecated", "--progress", "never", "--cursor", filepath.Join(dir, "c")}, 0, []string{"300 copied"}},
		{[]string{"migrate", "verify", "--registry", reg, "--all-deprecated", "--progress", "never"}, 0, []string{"300 verified"}},
	} {
		code, out, errOut := runCLI(t, "", append(tc.args, "--redis", url)...)
		if code != tc.code || strings.Contains(out+errOut, "s3cret") {
			t.Errorf("%v: exit %d, want %d\n%s%s", tc.args[:2], code, tc.code, out, errOut)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(out+errOut, w) {
				t.Errorf("%v: no %q in\n%s%s", tc.args[:2], w, out, errOut)
			}
		}
	}
	// A database in the URL: only it is walked.
	rdb.Do(ctx, "SELECT", "0")
	code, out, errOut := runCLI(t, "", "audit", "--registry", reg, "--fail-on", "never", "--redis", url+"?db=4")
	if code != 0 || !strings.Contains(out, "coverage: database 4;") || !strings.Contains(out, "?db=4") {
		t.Errorf("?db=4: exit %d\n%s%s", code, out, errOut)
	}
	for _, tc := range []struct{ url, want string }{
		{"unix://tmp/r.sock", "no socket path"},
		{"unix://ops:s3cret@" + sock + "x", "cannot connect to " + sock + "x"},
		{"unix://ops:wrong@" + sock, "refused the credentials"},
	} {
		code, out, errOut := runCLI(t, "", "audit", "--registry", reg, "--redis", tc.url)
		if code != exitError || !strings.Contains(errOut, tc.want) || strings.Contains(errOut, "s3cret") || strings.Contains(errOut, "wrong") {
			t.Errorf("%s: exit %d\n%s%s", tc.url, code, out, errOut)
		}
	}
	if code, _, errOut := runCLI(t, "", "audit", "--cluster", "--registry", reg, "--redis", url); code != exitError || !strings.Contains(errOut, "a Unix socket reaches one server") {
		t.Errorf("--cluster: exit %d, %s", code, errOut)
	}
}
