package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/keyguard/keyguard/hotkey"
	"github.com/keyguard/keyguard/internal/redistest"
)

// TestPreheatExec: keys from a file, values from a command; every copy
// of a replicated key is written with the template's TTL; a key the
// command fails on is listed and makes the exit code 1.
func TestPreheatExec(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	c := srv.Client(t)
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys.txt")
	os.WriteFile(keys, []byte("cache:product:detail:P1\r\nconfig:global:banner\n\nconfig:global:gone\nconfig:global:broken\n"), 0o644)
	loader := `case "$1" in *gone) exit 3;; *broken) echo "no such row" >&2; exit 1;; esac; printf 'v:%s' "$1"`
	code, out, errOut := runCLI(t, "", "preheat", "--registry", hotRegistry, "--redis", srv.URL(), "--exec", loader, "--rate", "0", "--progress", "never", keys)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (one key failed)\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"preheated 4 of 4 keys", "2 stored, 0 present already, 1 without data, 1 failed", "failed config:global:broken: loader command: exit status 1: no such row"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, name := range hotkey.ReplicaKeys("cache:product:detail:P1", 3) {
		if v := c.Get(ctx, name).Val(); v != "v:cache:product:detail:P1" {
			t.Errorf("copy %s = %q", name, v)
		}
		if ttl := c.PTTL(ctx, name).Val(); ttl < 9*time.Minute || ttl > 12*time.Minute {
			t.Errorf("copy %s TTL %v", name, ttl)
		}
	}
	if v := c.Get(ctx, "config:global:banner").Val(); v != "v:config:global:banner" {
		t.Errorf("banner = %q", v)
	}
}

// TestPreheatFromRedisByRegion: keys generated region by region, copied
// from another Redis, only those the target lacks.
func TestPreheatFromRedisByRegion(t *testing.T) {
	ctx := context.Background()
	src, dst := redistest.Start(t), redistest.Start(t)
	s, d := src.Client(t), dst.Client(t)
	for _, k := range []string{"goods:hot:area:110101:1", "goods:hot:area:110101:2", "goods:hot:area:310100:1"} {
		s.Set(ctx, k, "src:"+k, time.Hour)
	}
	d.Set(ctx, hotkey.ReplicaKey("goods:hot:area:110101:2", 0, 6), "already", time.Hour)
	code, out, errOut := runCLI(t, "", "preheat", "--registry", hotRegistry, "--redis", dst.URL(), "--from-redis", src.URL(), "--missing",
		"--template", "goods:hot:area:{area:region}:{sku:int}", "--set", "area=110101,310100", "--set", "sku=1,2", "--format", "json", "--progress", "never")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	var doc struct {
		Total       int `json:"total"`
		Stored      int `json:"stored"`
		Present     int `json:"present"`
		WithoutData int `json:"without_data"`
		Batches     []struct {
			Region string `json:"region"`
			Keys   int    `json:"keys"`
			Stored int    `json:"stored"`
		} `json:"batches"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Total != 4 || doc.Stored != 2 || doc.Present != 1 || doc.WithoutData != 1 || len(doc.Batches) != 2 || doc.Batches[0].Region != "110101" || doc.Batches[1].Region != "310100" {
		t.Fatalf("%+v\n%s", doc, out)
	}
	for _, name := range hotkey.ReplicaKeys("goods:hot:area:310100:1", 6) {
		if v := d.Get(ctx, name).Val(); v != "src:goods:hot:area:310100:1" {
			t.Errorf("copy %s = %q", name, v)
		}
	}
}

// TestPreheatStdinAndUsage: keys on stdin; wrong combinations of flags
// are usage errors (exit 2).
func TestPreheatStdinAndUsage(t *testing.T) {
	srv := redistest.Start(t)
	code, out, errOut := runCLI(t, "config:global:a\nconfig:global:b\n", "preheat", "--registry", hotRegistry, "--redis", srv.URL(), "--exec", "echo x", "--progress", "never", "-")
	if code != 0 || !strings.Contains(out, "2 stored") {
		t.Fatalf("stdin: exit %d\n%s%s", code, out, errOut)
	}
	// Keys preheat cannot store are told in its own words, not the SDK's.
	code, out, errOut = runCLI(t, "order:order:7:base\nnope:1\n", "preheat", "--registry", hotRegistry, "--redis", srv.URL(), "--exec", "echo x", "--progress", "never", "-")
	for _, want := range []string{"2 failed", "failed order:order:7:base: its template order:order:{orderId:int}:base declares a hash: preheat stores string values only",
		"failed nope:1: no template of " + hotRegistry + " matches it"} {
		if code != 1 || !strings.Contains(out, want) || strings.Contains(out, "hotkey:") || strings.Contains(out, "the Cache") {
			t.Errorf("keys of a hash template and of none: exit %d, want %q\n%s%s", code, want, out, errOut)
		}
	}
	base := []string{"preheat", "--registry", hotRegistry, "--redis", srv.URL()}
	for _, args := range [][]string{
		{"keys.txt"}, // no loader
		{"--exec", "x", "--from-redis", "r", "-"}, // two loaders
		{"--exec", "x"},                                       // no keys
		{"--exec", "x", "--set", "a=1", "-"},                  // --set without --template
		{"--exec", "x", "--template", "nope:{x}"},             // not a template
		{"--exec", "x", "--template", "config:global:{name}"}, // no values
		{"--exec", "x", "--concurrency", "0", "-"},
	} {
		if code, _, errOut := runCLI(t, "", append(base, args...)...); code != 2 {
			t.Errorf("%v: exit %d %s", args, code, errOut)
		}
	}
}

// TestPreheatFromRedisNamed: a bad or unreachable --from-redis URL is
// reported under --from-redis (and --from-cluster), never as --redis,
// and without its password.
func TestPreheatFromRedisNamed(t *testing.T) {
	srv := redistest.Start(t)
	base := []string{"preheat", "--registry", hotRegistry, "--redis", srv.URL(), "--progress", "never"}
	for _, tt := range []struct {
		from string
		want string
	}{
		{"http://u:Sekret9@127.0.0.1:1", `--from-redis "http://u:xxxxx@127.0.0.1:1": the scheme`},
		{"redis://u:Sek%zzret9@127.0.0.1:1", `--from-redis "redis://u:xxxxx@127.0.0.1:1": the password`},
		{"redis://u:Sekret9@", `--from-redis "redis://u:xxxxx@": no host`},
		{"redis://u:Sekret9@127.0.0.1:1,127.0.0.1:2", "--from-redis lists 2 hosts: pass --from-cluster"},
		{"redis://u:Sekret9@127.0.0.1:1/x", `--from-redis "redis://u:xxxxx@127.0.0.1:1/x"`},
		{"redis://u:Sekret9@127.0.0.1:1", "is --from-redis right?"},
	} {
		code, _, errOut := runCLI(t, "config:global:a\n", append(base, "--from-redis", tt.from, "-")...)
		if code != 2 || !strings.Contains(errOut, tt.want) || strings.Contains(errOut, "--redis ") || strings.Contains(errOut, "Sekret9") {
			t.Errorf("%s: exit %d %s; want %q", tt.from, code, errOut, tt.want)
		}
	}
}
