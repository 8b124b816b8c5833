// Command auditbare is the floor that bench/audit.sh compares "keyguard
// audit" with: per batch one pipeline of SCAN (for the next batch) plus
// TYPE, PTTL and MEMORY USAGE for every key, on one connection per master
// of keyguard's RESP client (internal/resp), all masters at once — no
// classification, no element counts, no report. What the servers' single
// threads allow.
//
// With -fields it also reads what keyguard's field census reads: the field
// names of every hash (HRANDFIELD key 32) and the head of every string
// (GETRANGE key 0 4095), sent in the next batch's pipeline once TYPE has
// answered — the floor of an audit that reads value formats. (It reads
// more than keyguard, which stops reading the strings of a template once
// they show no JSON.)
//
// With -script every batch is one EVALSHA_RO of a script that calls
// TYPE, PTTL and MEMORY USAGE for each of its keys (the same commands,
// one round trip and one command parse for the batch): what issue #28
// suggested of a read-only script, measured (bench/RESULTS.md).
//
// With -probes-first a pipeline sends the batch's probes before the SCAN
// that lists the next batch, as keyguard does: the server then probes keys
// its listing has just touched, which costs it less (bench/RESULTS.md).
//
//	go run ./bench/auditbare -addr 127.0.0.1:6379
//	go run ./bench/auditbare -cluster -addr 127.0.0.1:7000
//	go run ./bench/auditbare -fields -addr 127.0.0.1:6379
//	go run ./bench/auditbare -probes-first -addr 127.0.0.1:6379
//	go run ./bench/auditbare -script -addr 127.0.0.1:6379
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/keyguard/keyguard/internal/resp"
	"github.com/keyguard/keyguard/internal/topology"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:6379", "server address (a seed with -cluster)")
	cluster := flag.Bool("cluster", false, "walk every master of the cluster -addr belongs to")
	count := flag.Int("count", 1000, "SCAN COUNT")
	samples := flag.Int("samples", 5, "MEMORY USAGE SAMPLES")
	fields := flag.Bool("fields", false, "also read hash field names (HRANDFIELD key 32) and string heads (GETRANGE key 0 4095)")
	first := flag.Bool("probes-first", false, "send a batch's probes before the SCAN that lists the next batch")
	script := flag.Bool("script", false, "one EVALSHA_RO per batch calling TYPE, PTTL and MEMORY USAGE for its keys, instead of three commands a key")
	flag.Parse()
	if *script && (*fields || *first) {
		fmt.Fprintln(os.Stderr, "auditbare: -script reads what the floor reads, without -fields or -probes-first")
		os.Exit(2)
	}
	ctx := context.Background()
	nodes := []string{*addr}
	if *cluster {
		var err error
		if nodes, err = masters(ctx, *addr); err != nil {
			fmt.Fprintln(os.Stderr, "auditbare:", err)
			os.Exit(1)
		}
	}
	start := time.Now()
	var mu sync.Mutex
	var keys, bytes int64
	var wg sync.WaitGroup
	var failed error
	for _, n := range nodes {
		wg.Go(func() {
			walkNode := func() (int64, int64, error) {
				return walk(ctx, n, strconv.Itoa(*count), strconv.Itoa(*samples), *fields, *first)
			}
			if *script {
				walkNode = func() (int64, int64, error) { return walkScript(ctx, n, strconv.Itoa(*count), strconv.Itoa(*samples)) }
			}
			k, b, err := walkNode()
			mu.Lock()
			defer mu.Unlock()
			keys += k
			bytes += b
			if err != nil {
				failed = fmt.Errorf("%s: %w", n, err)
			}
		})
	}
	wg.Wait()
	if failed != nil {
		fmt.Fprintln(os.Stderr, "auditbare:", failed)
		os.Exit(1)
	}
	fmt.Printf("nodes %d keys %d bytes %d in %v\n", len(nodes), keys, bytes, time.Since(start).Round(time.Millisecond))
}

// read reads one reply; an error reply is an error.
func read(c *resp.Conn) (resp.Reply, error) {
	rp, err := c.Read()
	if err == nil && rp.Kind == '-' {
		err = resp.ServerError(rp.Str)
	}
	return rp, err
}

func walk(ctx context.Context, addr, count, samples string, fields, first bool) (keys, bytes int64, err error) {
	c, err := resp.Dial(ctx, resp.Config{}, addr, resp.Session{})
	if err != nil {
		return 0, 0, err
	}
	defer c.Close()
	typ, pttl, mem := resp.NewKeyCmd([]string{"TYPE"}), resp.NewKeyCmd([]string{"PTTL"}), resp.NewKeyCmd([]string{"MEMORY", "USAGE"}, "SAMPLES", samples)
	hfields, head := resp.NewKeyCmd([]string{"HRANDFIELD"}, "32"), resp.NewKeyCmd([]string{"GETRANGE"}, "0", "4095")
	cursor := "0"
	var batch []string
	var probes []resp.KeyCmd // the field probes of the last batch, by key
	var probed []string
	scanning := true
	for scanning || len(batch) > 0 || len(probed) > 0 {
		if err := c.Begin(ctx); err != nil {
			return keys, bytes, err
		}
		if scanning && !first {
			c.Cmd("SCAN", cursor, "COUNT", count)
		}
		for _, k := range batch {
			c.Key(typ, k)
			c.Key(pttl, k)
			c.Key(mem, k)
		}
		for i, k := range probed {
			c.Key(probes[i], k)
		}
		if scanning && first {
			c.Cmd("SCAN", cursor, "COUNT", count)
		}
		c.Take()
		if err := c.Flush(); err != nil {
			return keys, bytes, err
		}
		var next []string
		wasScanning := scanning
		if scanning && !first {
			if cursor, next, err = scanReply(c); err != nil {
				return keys, bytes, err
			}
			scanning = cursor != "0"
		}
		var nextProbes []resp.KeyCmd
		var nextProbed []string
		for _, k := range batch {
			for j := range 3 {
				rp, err := read(c)
				if err != nil {
					return keys, bytes, err
				}
				switch {
				case j == 0 && fields && string(rp.Str) == "hash":
					nextProbes, nextProbed = append(nextProbes, hfields), append(nextProbed, k)
				case j == 0 && fields && string(rp.Str) == "string":
					nextProbes, nextProbed = append(nextProbes, head), append(nextProbed, k)
				case j == 2:
					bytes += rp.N
				}
			}
		}
		for range probed {
			rp, err := read(c)
			if err == nil {
				err = c.Skip(rp)
			}
			if err != nil {
				return keys, bytes, err
			}
		}
		if wasScanning && first {
			if cursor, next, err = scanReply(c); err != nil {
				return keys, bytes, err
			}
			scanning = cursor != "0"
		}
		keys += int64(len(batch))
		batch, probes, probed = next, nextProbes, nextProbed
	}
	return keys, bytes, nil
}

// batchScript is -script's: TYPE, PTTL and MEMORY USAGE of every key it is
// given (on a Cluster's master, keys of many slots: allow-cross-slot-keys).
const batchScript = `#!lua flags=no-writes,allow-cross-slot-keys
local out = {}
for _, k in ipairs(KEYS) do
  out[#out+1] = redis.call('TYPE', k)['ok']
  out[#out+1] = redis.call('PTTL', k)
  out[#out+1] = redis.call('MEMORY', 'USAGE', k, 'SAMPLES', ARGV[1]) or -1
end
return out`

// walkScript is walk with one EVALSHA_RO per batch: the pipeline holds the
// SCAN of the next batch and the script call of this one.
func walkScript(ctx context.Context, addr, count, samples string) (keys, bytes int64, err error) {
	c, err := resp.Dial(ctx, resp.Config{}, addr, resp.Session{})
	if err != nil {
		return 0, 0, err
	}
	defer c.Close()
	if err := c.Begin(ctx); err != nil {
		return 0, 0, err
	}
	c.Cmd("SCRIPT", "LOAD", batchScript)
	c.Take()
	if err := c.Flush(); err != nil {
		return 0, 0, err
	}
	rp, err := read(c)
	if err != nil {
		return 0, 0, err
	}
	sha := string(rp.Str)
	cursor := "0"
	var batch []string
	scanning := true
	for scanning || len(batch) > 0 {
		if err := c.Begin(ctx); err != nil {
			return keys, bytes, err
		}
		if scanning {
			c.Cmd("SCAN", cursor, "COUNT", count)
		}
		if len(batch) > 0 {
			args := append([]string{"EVALSHA_RO", sha, strconv.Itoa(len(batch))}, batch...)
			c.Cmd(append(args, samples)...)
		}
		c.Take()
		if err := c.Flush(); err != nil {
			return keys, bytes, err
		}
		var next []string
		if scanning {
			if cursor, next, err = scanReply(c); err != nil {
				return keys, bytes, err
			}
			scanning = cursor != "0"
		}
		if len(batch) > 0 {
			rp, err := read(c)
			if err != nil {
				return keys, bytes, err
			}
			if rp.Kind != '*' || rp.N != int64(3*len(batch)) {
				return keys, bytes, fmt.Errorf("the script replied %q %d, not %d values", rp.Kind, rp.N, 3*len(batch))
			}
			for j := range 3 * len(batch) {
				if rp, err = read(c); err != nil {
					return keys, bytes, err
				}
				if j%3 == 2 && rp.N > 0 {
					bytes += rp.N
				}
			}
		}
		keys += int64(len(batch))
		batch = next
	}
	return keys, bytes, nil
}

// scanReply reads SCAN's reply: the next cursor and the keys.
func scanReply(c *resp.Conn) (string, []string, error) {
	rp, err := read(c)
	if err != nil {
		return "", nil, err
	}
	if rp.Kind != '*' || rp.N != 2 {
		return "", nil, fmt.Errorf("SCAN replied %q %d, not a cursor and keys", rp.Kind, rp.N)
	}
	if rp, err = read(c); err != nil {
		return "", nil, err
	}
	cursor := string(rp.Str)
	if rp, err = read(c); err != nil {
		return "", nil, err
	}
	keys := make([]string, rp.N)
	for i := range keys {
		if rp, err = read(c); err != nil {
			return "", nil, err
		}
		keys[i] = string(rp.Str)
	}
	return cursor, keys, nil
}

// masters returns the addresses of the masters that serve slots.
func masters(ctx context.Context, seed string) ([]string, error) {
	c, err := resp.Dial(ctx, resp.Config{}, seed, resp.Session{})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	txt, err := c.Simple(ctx, "CLUSTER", "NODES")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range topology.Parse(txt, "") {
		if n.IsMaster() && !n.Has("fail") && len(n.Owned) > 0 {
			out = append(out, n.Addr)
		}
	}
	return out, nil
}
