// Command auditgen writes the key mix of bench/audit.sh as Redis protocol
// for "redis-cli --pipe": hashes, strings, lists, sets, sorted sets and
// streams following internal/audit/live/testdata/keyguard.yaml, plus about 10% keys that
// break its rules (unregistered, no TTL, foreign namespace).
//
//	go run ./bench/auditgen -n 1000000 > keys.resp
//	redis-cli -p 6379 --pipe < keys.resp
//
// For a Cluster, -slots names one slot range per master and the keys are
// split into one file per range (-out prefix, files prefix.0, prefix.1, …),
// each loaded into its master with its own redis-cli --pipe.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

func main() {
	n := flag.Int("n", 1000000, "number of keys")
	slots := flag.String("slots", "", "cluster slot ranges, one per master: 0-5460,5461-10922,10923-16383")
	out := flag.String("out", "", "with -slots: output file prefix (prefix.0, prefix.1, …)")
	flag.Parse()
	if err := run(*n, *slots, *out); err != nil {
		fmt.Fprintln(os.Stderr, "auditgen:", err)
		os.Exit(1)
	}
}

type slotRange struct{ lo, hi int }

func run(n int, slots, out string) error {
	if slots == "" {
		w := bufio.NewWriterSize(os.Stdout, 1<<20)
		g := &gen{}
		for i := 0; i < n; i++ {
			g.key(i, func(string) io.Writer { return w })
		}
		return w.Flush()
	}
	if out == "" {
		return fmt.Errorf("-slots needs -out PREFIX")
	}
	var ranges []slotRange
	for _, part := range strings.Split(slots, ",") {
		lo, hi, ok := strings.Cut(part, "-")
		a, err1 := strconv.Atoi(lo)
		b, err2 := strconv.Atoi(hi)
		if !ok || err1 != nil || err2 != nil || a > b {
			return fmt.Errorf("-slots: bad range %q, want LO-HI", part)
		}
		ranges = append(ranges, slotRange{a, b})
	}
	ws := make([]*bufio.Writer, len(ranges))
	for i := range ranges {
		f, err := os.Create(fmt.Sprintf("%s.%d", out, i))
		if err != nil {
			return err
		}
		defer f.Close()
		ws[i] = bufio.NewWriterSize(f, 1<<20)
	}
	route := func(key string) io.Writer {
		s := slot(key)
		for i, r := range ranges {
			if s >= r.lo && s <= r.hi {
				return ws[i]
			}
		}
		return io.Discard
	}
	g := &gen{}
	for i := 0; i < n; i++ {
		g.key(i, route)
	}
	for _, w := range ws {
		if err := w.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// gen writes commands; buf is reused between commands.
type gen struct{ buf []byte }

func (g *gen) cmd(w io.Writer, args ...string) {
	b := g.buf[:0]
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(args)), 10)
	b = append(b, '\r', '\n')
	for _, a := range args {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, '\r', '\n')
		b = append(b, a...)
		b = append(b, '\r', '\n')
	}
	g.buf = b
	w.Write(b)
}

// key writes the commands that create key number i of the mix (per 100:
// 30 order hashes, 10 guarded promo hashes, 25 cache strings, 10 sessions,
// 5 lists, 5 sets, 4 sorted sets, 1 stream, 10 that break a rule).
func (g *gen) key(i int, route func(string) io.Writer) {
	id := strconv.Itoa(i)
	var k string
	switch m := i % 100; {
	case m < 30:
		k = "order:order:" + id + ":base"
		w := route(k)
		g.cmd(w, "HSET", k, "orderId", id, "userId", strconv.Itoa(i*7%100003), "amount", "129.90", "status", "PAID")
		g.cmd(w, "EXPIRE", k, "86400")
	case m < 40:
		k = "promo:order:" + id + ":promo-info"
		w := route(k)
		g.cmd(w, "HSET", k, "__ns__", "promo-team", "activityId", "A"+id, "discountValue", "10")
		g.cmd(w, "EXPIRE", k, "43200")
	case m < 65:
		k = "cache:product:detail:p" + id
		w := route(k)
		g.cmd(w, "SET", k, `{"productNo":"p`+id+`","title":"stainless steel water bottle 750ml","price":2590,"stock":120,"tags":["outdoor","kitchen"]}`, "EX", "21600")
	case m < 75:
		k = "auth:session:u" + id
		w := route(k)
		g.cmd(w, "HSET", k, "token", "t0ken"+id, "loginAt", "1700000000")
		g.cmd(w, "EXPIRE", k, "43200")
	case m < 80:
		k = "feed:user:" + id + ":timeline"
		w := route(k)
		g.cmd(w, "RPUSH", k, "post:1", "post:2", "post:3", "post:4", "post:5")
		g.cmd(w, "EXPIRE", k, "172800")
	case m < 85:
		k = "social:user:" + id + ":followers"
		w := route(k)
		g.cmd(w, "SADD", k, "1", "2", "3", "4", "5")
		g.cmd(w, "EXPIRE", k, "172800")
	case m < 89:
		k = "rank:board:" + id
		w := route(k)
		g.cmd(w, "ZADD", k, "1", "a", "2", "b", "3", "c")
		g.cmd(w, "EXPIRE", k, "259200")
	case m < 90:
		k = "event:order:" + id
		w := route(k)
		g.cmd(w, "XADD", k, "*", "orderId", id, "event", "created")
		g.cmd(w, "EXPIRE", k, "172800")
	case m < 94:
		k = "tmp_data_2024032115" + fmt.Sprintf("%04d", i%10000) + "_" + id
		g.cmd(route(k), "SET", k, "x")
	case m < 97:
		k = "user_" + id + "_token"
		g.cmd(route(k), "SET", k, "tok", "EX", "3600")
	case m < 99:
		k = "order:order:" + id + ":base"
		g.cmd(route(k), "HSET", k, "orderId", id, "status", "NEW") // no TTL
	default:
		k = "promo:order:" + id + ":promo-info"
		w := route(k)
		g.cmd(w, "HSET", k, "__ns__", "order-team", "activityId", "A"+id)
		g.cmd(w, "EXPIRE", k, "43200")
	}
}

// slot is the Redis Cluster hash slot of key (CRC16/XMODEM of the hash tag).
func slot(key string) int {
	if s := strings.IndexByte(key, '{'); s >= 0 {
		if e := strings.IndexByte(key[s+1:], '}'); e > 0 {
			key = key[s+1 : s+1+e]
		}
	}
	var crc uint16
	for i := 0; i < len(key); i++ {
		crc ^= uint16(key[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc) % 16384
}
