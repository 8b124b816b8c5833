package rdb

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"
)

// benchRDB builds an RDB (version 10, as Redis 7.0 writes it) with n keys
// in the key mix of the audit benchmark: colon-separated keys, half
// strings, then listpack hashes, lists, sets and sorted sets, most with a
// TTL. Averages ~180 bytes per key.
func benchRDB(n int) []byte {
	rng := rand.New(rand.NewPCG(7, 11))
	w := newRDB(10)
	w.aux("redis-ver", "7.0.15")
	w.aux("redis-bits", "64")
	w.selectDB(0)
	w.resize(n, n*7/10)
	text := func(l int) string {
		b := make([]byte, l)
		for i := range b {
			b[i] = byte('a' + rng.IntN(26))
		}
		return string(b)
	}
	for i := range n {
		if rng.IntN(10) < 7 {
			w.expireMS(1800000000000 + int64(rng.IntN(1e9)))
		}
		switch r := rng.IntN(100); {
		case r < 15:
			w.key(tString, fmt.Sprintf("seq:order:%d:count", i))
			w.intStr(int64(rng.IntN(1 << 30)))
		case r < 40:
			w.key(tString, fmt.Sprintf("auth:session:u%d", i))
			w.str(text(20 + rng.IntN(60)))
		case r < 50:
			w.key(tString, fmt.Sprintf("product:hot:%d:detail", i))
			w.str(`{"sku":"` + text(12) + `","price":` + strconv.Itoa(rng.IntN(10000)) + `,"title":"` + text(120) + `"}`)
		case r < 75:
			w.key(tHashListpack, fmt.Sprintf("order:order:%d:base", i))
			var elems []any
			if rng.IntN(2) == 0 {
				elems = append(elems, "__ns__", "order-team")
			}
			for f := range 4 + rng.IntN(6) {
				elems = append(elems, "field"+strconv.Itoa(f), text(5+rng.IntN(20)))
			}
			w.bytesStr(lpBuild(elems...))
		case r < 85:
			w.key(tListQuicklist2, fmt.Sprintf("queue:order:%d:events", i))
			var elems []any
			for range 5 + rng.IntN(15) {
				elems = append(elems, text(8))
			}
			w.length(1)
			w.length(2)
			w.bytesStr(lpBuild(elems...))
		case r < 92:
			w.key(tSetIntset, fmt.Sprintf("promo:coupon:%d:users", i))
			vals := make([]int64, 3+rng.IntN(20))
			for j := range vals {
				vals[j] = int64(j * 1000)
			}
			w.bytesStr(intsetBuild(4, vals...))
		default:
			w.key(tZSetListpack, fmt.Sprintf("rank:shop:%d:sales", i))
			var elems []any
			for j := range 3 + rng.IntN(10) {
				elems = append(elems, text(10), int64(j*7))
			}
			w.bytesStr(lpBuild(elems...))
		}
	}
	return w.finish(true)
}

var benchData = sync.OnceValue(func() []byte { return benchRDB(200000) })

// auditRDB builds an RDB (version 10) with n keys in bench/auditgen's mix,
// the one `MIX=audit bench/rdb-gen.sh` loads into a real Redis 7.0, with
// the encodings that server saves them in (per 100 keys: 30 order hashes,
// 10 guarded promo hashes, 25 JSON strings, 10 session hashes, 5 lists,
// 5 intsets, 4 sorted sets, 1 stream, 10 keys breaking a rule). About 103
// bytes per key, like the real file; no LZF, which Redis found not worth
// it for these values either; keys in random order, as in the real file.
func auditRDB(n int) []byte {
	w := newRDB(10)
	w.aux("redis-ver", "7.0.15")
	w.aux("redis-bits", "64")
	w.aux("ctime", "1700000000")
	w.aux("used-mem", "123456789")
	w.aux("aof-base", "0")
	w.selectDB(0)
	w.resize(n, n*9/10)
	const now = 1700000000000
	// Redis saves keys in hash table order: the types come mixed, not in
	// runs (which would flatter branch prediction).
	for _, i := range rand.New(rand.NewPCG(3, 5)).Perm(n) {
		id := strconv.Itoa(i)
		ttl := func(sec int64) { w.expireMS(now + sec*1000) }
		switch m := i % 100; {
		case m < 30:
			ttl(86400)
			w.key(tHashListpack, "order:order:"+id+":base")
			w.bytesStr(lpBuild("orderId", int64(i), "userId", int64(i*7%100003), "amount", "129.90", "status", "PAID"))
		case m < 40:
			ttl(43200)
			w.key(tHashListpack, "promo:order:"+id+":promo-info")
			w.bytesStr(lpBuild("__ns__", "promo-team", "activityId", "A"+id, "discountValue", int64(10)))
		case m < 65:
			ttl(21600)
			w.key(tString, "cache:product:detail:p"+id)
			w.str(`{"productNo":"p` + id + `","title":"stainless steel water bottle 750ml","price":2590,"stock":120,"tags":["outdoor","kitchen"]}`)
		case m < 75:
			ttl(43200)
			w.key(tHashListpack, "auth:session:u"+id)
			w.bytesStr(lpBuild("token", "t0ken"+id, "loginAt", int64(1700000000)))
		case m < 80:
			ttl(172800)
			w.key(tListQuicklist2, "feed:user:"+id+":timeline")
			w.length(1)
			w.length(2) // packed node
			w.bytesStr(lpBuild("post:1", "post:2", "post:3", "post:4", "post:5"))
		case m < 85:
			ttl(172800)
			w.key(tSetIntset, "social:user:"+id+":followers")
			w.bytesStr(intsetBuild(2, 1, 2, 3, 4, 5))
		case m < 89:
			ttl(259200)
			w.key(tZSetListpack, "rank:board:"+id)
			w.bytesStr(lpBuild("a", int64(1), "b", int64(2), "c", int64(3)))
		case m < 90:
			ttl(172800)
			w.key(tStreamListpacks2, "event:order:"+id)
			ms := uint64(now + i)
			var node [16]byte
			binary.BigEndian.PutUint64(node[:], ms)
			w.length(1)
			w.bytesStr(node[:])
			// master entry (count, deleted, fields, 0), then one entry
			// with the master's fields (flags, ms, seq, values, lp-count)
			w.bytesStr(lpBuild(int64(1), int64(0), int64(2), "orderId", "event", int64(0),
				int64(2), int64(0), int64(0), int64(i), "created", int64(6)))
			w.length(1) // length
			w.length(ms)
			w.length(0) // last id
			w.length(ms)
			w.length(0) // first id
			w.length(0)
			w.length(0) // max deleted id
			w.length(1) // entries added
			w.length(0) // consumer groups
		case m < 94:
			w.key(tString, fmt.Sprintf("tmp_data_2024032115%04d_%d", i%10000, i))
			w.str("x")
		case m < 97:
			ttl(3600)
			w.key(tString, "user_"+id+"_token")
			w.str("tok")
		case m < 99:
			w.key(tHashListpack, "order:order:"+id+":base")
			w.bytesStr(lpBuild("orderId", int64(i), "status", "NEW"))
		default:
			ttl(43200)
			w.key(tHashListpack, "promo:order:"+id+":promo-info")
			w.bytesStr(lpBuild("__ns__", "order-team", "activityId", "A"+id))
		}
	}
	return w.finish(true)
}

var auditData = sync.OnceValue(func() []byte { return auditRDB(200000) })

// cmdOpts are the options `keyguard rdb` decodes with (cmd/keyguard/rdb.go).
var cmdOpts = Options{FieldSample: 33, WatchFields: []string{"__ns__"}, JSONKeys: 32}

// BenchmarkDecodeAuditMix decodes auditRDB's 200,000 keys with the options
// of `keyguard rdb`: the number to compare with BenchmarkDecodeFile on
// `MIX=audit bench/rdb-gen.sh`'s file, without building that file.
func BenchmarkDecodeAuditMix(b *testing.B) {
	data := auditData()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	keys := 0
	for b.Loop() {
		d := NewDecoder(bytes.NewReader(data), cmdOpts)
		keys = 0
		for {
			_, err := d.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			keys++
		}
	}
	b.ReportMetric(float64(len(data))/float64(keys), "B/key")
}

func BenchmarkDecode(b *testing.B) {
	data := benchData()
	for _, c := range []struct {
		name string
		opts Options
	}{
		{"plain", Options{}},
		{"audit", Options{FieldSample: 32, WatchFields: []string{"__ns__"}, JSONKeys: 16}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			keys := 0
			for b.Loop() {
				d := NewDecoder(bytes.NewReader(data), c.opts)
				keys = 0
				for {
					_, err := d.Next()
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					keys++
				}
			}
			b.ReportMetric(float64(len(data))/float64(keys), "B/key")
		})
	}
}

// BenchmarkDecodeFile decodes the file named by KEYGUARD_RDB_BENCH_FILE
// (bench/rdb-gen.sh writes a 1,000,000-key RDB from a real server) with
// the audit options of BenchmarkDecode (audit) and with those of
// `keyguard rdb` (keyguard).
func BenchmarkDecodeFile(b *testing.B) {
	path := os.Getenv("KEYGUARD_RDB_BENCH_FILE")
	if path == "" {
		b.Skip("set KEYGUARD_RDB_BENCH_FILE to an RDB file (bench/rdb-gen.sh)")
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		opts Options
	}{
		{"audit", Options{FieldSample: 32, WatchFields: []string{"__ns__"}, JSONKeys: 16}},
		{"keyguard", cmdOpts},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(st.Size())
			b.ReportAllocs()
			for b.Loop() {
				f, err := os.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				d := NewDecoder(f, c.opts)
				keys := 0
				for {
					_, err := d.Next()
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					keys++
				}
				f.Close()
				b.ReportMetric(float64(keys), "keys")
			}
		})
	}
}
