// Command hotkeysbare measures the ways of reading every key's LFU
// counter that "keyguard hotkeys" could take, beside its own walk (one
// connection SCANs, another pipelines OBJECT FREQ), on one server:
//
//   - scan: SCAN COUNT n alone, no counter read: what listing the keys
//     costs the server.
//   - lua: one read-only script per batch runs SCAN and OBJECT FREQ on
//     each key inside the server and returns the next cursor and the keys
//     at or above the floor: no key crosses the wire.
//   - argv: SCAN from the client, then one read-only script per batch
//     with the batch's keys as arguments, returning the keys at or above
//     the floor.
//
// It prints the mode, the keys read, the keys at or above the floor and
// the wall time. bench/hotkeys-lfu.sh runs it in turns with keyguard and
// redis-cli --hotkeys.
//
//	go run ./bench/hotkeysbare -addr 127.0.0.1:6379 -mode lua
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/keyguard/keyguard/internal/resp"
)

// scanScript walks one SCAN batch inside the server.
const scanScript = `#!lua flags=no-writes,allow-cross-slot-keys
local r = redis.call('SCAN', ARGV[1], 'COUNT', ARGV[2])
local floor = tonumber(ARGV[3])
local out = {r[1], #r[2]}
for _, k in ipairs(r[2]) do
  local f = redis.call('OBJECT', 'FREQ', k)
  if f and f >= floor then out[#out+1] = k; out[#out+1] = f end
end
return out`

// argvScript reads the counters of the keys it is given.
const argvScript = `#!lua flags=no-writes,allow-cross-slot-keys
local floor = tonumber(ARGV[1])
local out = {}
for i = 2, #ARGV do
  local f = redis.call('OBJECT', 'FREQ', ARGV[i])
  if f and f >= floor then out[#out+1] = ARGV[i]; out[#out+1] = f end
end
return out`

func main() {
	addr := flag.String("addr", "127.0.0.1:6379", "server address")
	mode := flag.String("mode", "lua", "scan, lua or argv")
	count := flag.Int("count", 1000, "SCAN COUNT")
	floor := flag.Int("floor", 10, "lowest counter returned")
	flag.Parse()
	start := time.Now()
	keys, hot, err := walk(context.Background(), *addr, *mode, strconv.Itoa(*count), strconv.Itoa(*floor))
	if err != nil {
		fmt.Fprintln(os.Stderr, "hotkeysbare:", err)
		os.Exit(1)
	}
	fmt.Printf("%s: %d keys, %d at or above %d, %v\n", *mode, keys, hot, *floor, time.Since(start).Round(time.Millisecond))
}

func walk(ctx context.Context, addr, mode, count, floor string) (keys, hot int, err error) {
	c, err := resp.Dial(ctx, resp.Config{}, addr, resp.Session{Name: "hotkeysbare"})
	if err != nil {
		return 0, 0, err
	}
	defer c.Close()
	cursor := "0"
	var batch []string
	for {
		if err := c.Begin(ctx); err != nil {
			return keys, hot, err
		}
		if mode == "lua" {
			c.Cmd("EVAL_RO", scanScript, "0", cursor, count, floor)
		} else {
			c.Cmd("SCAN", cursor, "COUNT", count)
		}
		c.Take()
		if err := c.Flush(); err != nil {
			return keys, hot, err
		}
		rp, err := c.Read()
		if err != nil {
			return keys, hot, err
		}
		if rp.Kind != '*' {
			return keys, hot, fmt.Errorf("reply %c %s", rp.Kind, rp.Str)
		}
		cur, err := c.Read()
		if err != nil {
			return keys, hot, err
		}
		cursor = string(cur.Str)
		if mode == "lua" {
			n, err := c.Read()
			if err != nil {
				return keys, hot, err
			}
			keys += int(n.N)
			hot += int(rp.N-2) / 2
			for range rp.N - 2 {
				if _, err := c.Read(); err != nil {
					return keys, hot, err
				}
			}
		} else {
			arr, err := c.Read()
			if err != nil {
				return keys, hot, err
			}
			batch = batch[:0]
			for range arr.N {
				k, err := c.Read()
				if err != nil {
					return keys, hot, err
				}
				batch = append(batch, string(k.Str))
			}
			keys += len(batch)
			if mode == "argv" && len(batch) > 0 {
				if hot, err = readArgv(c, batch, floor, hot); err != nil {
					return keys, hot, err
				}
			}
		}
		if cursor == "0" {
			return keys, hot, nil
		}
	}
}

func readArgv(c *resp.Conn, batch []string, floor string, hot int) (int, error) {
	c.Cmd(append([]string{"EVAL_RO", argvScript, "0", floor}, batch...)...)
	c.Take()
	if err := c.Flush(); err != nil {
		return hot, err
	}
	rp, err := c.Read()
	if err != nil {
		return hot, err
	}
	if rp.Kind != '*' {
		return hot, errors.New(string(rp.Str))
	}
	for range rp.N {
		if _, err := c.Read(); err != nil {
			return hot, err
		}
	}
	return hot + int(rp.N)/2, nil
}
