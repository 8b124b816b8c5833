package rediscmd

import (
	"testing"
	"time"
)

// BenchmarkKeys measures what a go-redis hook does per command: find the
// command, then walk its keys. Args are shaped as go-redis builds them.
func BenchmarkKeys(b *testing.B) {
	mset := []any{"mset"}
	for i := range 10 {
		mset = append(mset, "order:order:"+string(rune('0'+i))+":base", i)
	}
	cases := []struct {
		name string
		args []any
		keys int
	}{
		{"GET", []any{"get", "order:order:1024:base"}, 1},
		{"SET_EX", []any{"set", "order:order:1024:base", "v", "ex", int64(3600)}, 1},
		{"MSET_10", mset, 10},
		{"EVALSHA_1", []any{"evalsha", "e0e1f9fabfc9d4800c877a703b823ac0578ff831", 1, "promo:order:1:promo-info", "f", "v"}, 1},
		{"XREAD_STREAMS_2", []any{"xread", "count", int64(10), "block", int64(1000), "streams", "s:a", "s:b", "0", "0"}, 2},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			count := func(int, string, KeyFlags) bool { n++; return true }
			for b.Loop() {
				cmd, ok := LookupArgs(c.args)
				if !ok {
					b.Fatal("not found")
				}
				if err := cmd.Keys(c.args, count); err != nil {
					b.Fatal(err)
				}
			}
			if n%c.keys != 0 || n == 0 {
				b.Fatalf("%d keys seen", n)
			}
		})
	}
}

// BenchmarkLookupArgs isolates the name lookup (subcommand included).
func BenchmarkLookupArgs(b *testing.B) {
	for _, a := range [][]any{{"GET", "k"}, {"object", "freq", "k"}} {
		b.Run(a[0].(string), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := LookupArgs(a); !ok {
					b.Fatal("not found")
				}
			}
		})
	}
}

func TestKeysDoesNotAllocate(t *testing.T) {
	a := []any{"set", "k", []byte("v"), "ex", time.Duration(10), "get"}
	dst := make([]Key, 0, 4)
	allocs := testing.AllocsPerRun(100, func() {
		cmd, _ := LookupArgs(a)
		var err error
		dst, err = cmd.AppendKeys(dst[:0], a)
		if err != nil || len(dst) != 1 {
			t.Fatal(err, dst)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per LookupArgs+AppendKeys", allocs)
	}
}
