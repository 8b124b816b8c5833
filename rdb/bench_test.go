package rdb

import (
	"bytes"
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
// (bench/rdb-gen.sh writes a 1,000,000-key RDB from a real server).
func BenchmarkDecodeFile(b *testing.B) {
	path := os.Getenv("KEYGUARD_RDB_BENCH_FILE")
	if path == "" {
		b.Skip("set KEYGUARD_RDB_BENCH_FILE to an RDB file (bench/rdb-gen.sh)")
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	b.ReportAllocs()
	for b.Loop() {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		d := NewDecoder(f, Options{FieldSample: 32, WatchFields: []string{"__ns__"}, JSONKeys: 16})
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
}
