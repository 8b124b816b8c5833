// Command probecost walks a server loaded by bench/auditgen the way the
// live audit does (SCAN COUNT 1000, the probes of a batch in the next
// pipeline) and sends, per key, the commands given for its type (known
// from auditgen's key names), so that the server CPU of one way of
// probing can be set beside another's in turns.
//
//	go run ./bench/probecost -addr 127.0.0.1:6379 -hash 'HLEN _;PTTL _;MEMORY USAGE _ SAMPLES 5'
//
// A command is its words separated by spaces, "_" standing for the key;
// commands are separated by ";". A command prefixed "1/8 " is sent for
// one key in eight.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/keyguard/keyguard/internal/resp"
)

type cmd struct {
	kc    resp.KeyCmd
	every int
}

func parse(spec string) []cmd {
	var out []cmd
	for _, s := range strings.Split(spec, ";") {
		s = strings.TrimSpace(s)
		every := 1
		if rest, ok := strings.CutPrefix(s, "1/8 "); ok {
			s, every = rest, 8
		}
		w := strings.Fields(s)
		i := 0
		for i < len(w) && w[i] != "_" {
			i++
		}
		var after []string
		if i+1 < len(w) {
			after = w[i+1:]
		}
		out = append(out, cmd{resp.NewKeyCmd(w[:i], after...), every})
	}
	return out
}

func kind(k string) int {
	switch {
	case strings.HasPrefix(k, "order:"), strings.HasPrefix(k, "promo:"), strings.HasPrefix(k, "auth:"):
		return 0
	case strings.HasPrefix(k, "cache:"):
		return 1
	case strings.HasPrefix(k, "tmp_"), strings.HasPrefix(k, "user_"):
		return 2
	}
	return 3
}

func main() {
	addr := flag.String("addr", "127.0.0.1:6379", "server")
	floor := "TYPE _;PTTL _;MEMORY USAGE _ SAMPLES 5"
	h := flag.String("hash", floor, "commands for a hash")
	s := flag.String("string", floor, "commands for a registered string")
	u := flag.String("unreg", floor, "commands for an unregistered string")
	o := flag.String("other", floor, "commands for a list, set, zset or stream")
	first := flag.Bool("probes-first", false, "probes before the next SCAN")
	flag.Parse()
	specs := [4][]cmd{parse(*h), parse(*s), parse(*u), parse(*o)}
	ctx := context.Background()
	c, err := resp.Dial(ctx, resp.Config{}, *addr, resp.Session{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	n := [4]int{}
	cursor := "0"
	var batch []string
	scanning := true
	sent := 0
	for scanning || len(batch) > 0 {
		must(c.Begin(ctx))
		if scanning && !*first {
			c.Cmd("SCAN", cursor, "COUNT", "1000")
		}
		cnt := 0
		for _, k := range batch {
			t := kind(k)
			n[t]++
			for _, cm := range specs[t] {
				if cm.every == 1 || n[t]%cm.every == 0 {
					c.Key(cm.kc, k)
					cnt++
				}
			}
		}
		if scanning && *first {
			c.Cmd("SCAN", cursor, "COUNT", "1000")
		}
		c.Take()
		must(c.Flush())
		was := scanning
		var next []string
		if scanning && !*first {
			cursor, next = scan(c)
			scanning = cursor != "0"
		}
		for range cnt {
			rp, err := c.Read()
			must(err)
			if rp.Kind == '-' {
				fmt.Fprintln(os.Stderr, "error:", string(rp.Str))
				os.Exit(1)
			}
			must(c.Skip(rp))
		}
		if was && *first {
			cursor, next = scan(c)
			scanning = cursor != "0"
		}
		sent += cnt
		batch = next
	}
	fmt.Println("commands", sent)
}

func scan(c *resp.Conn) (string, []string) {
	rp, err := c.Read()
	must(err)
	_ = rp
	cr, err := c.Read()
	must(err)
	cursor := string(cr.Str)
	kr, err := c.Read()
	must(err)
	keys := make([]string, kr.N)
	for i := range keys {
		k, err := c.Read()
		must(err)
		keys[i] = string(k.Str)
	}
	return cursor, keys
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
