package rediscmd

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/keyguard/keyguard/internal/rediscmd/internal/gencmd"
)

func args(a ...any) []any { return a }

// got renders the keys of a command as "pos:key/flags" for comparison.
func got(t *testing.T, a []any) (string, error) {
	t.Helper()
	cmd, ok := LookupArgs(a)
	if !ok {
		return "", fmt.Errorf("unknown")
	}
	var parts []string
	err := cmd.Keys(a, func(pos int, key string, f KeyFlags) bool {
		parts = append(parts, fmt.Sprintf("%d:%s/%s", pos, key, f))
		return true
	})
	return strings.Join(parts, " "), err
}

func TestKeysTricky(t *testing.T) {
	const (
		ro  = "RO access"
		ow  = "OW update"
		rwa = "RW access update"
		rmd = "RW access delete"
	)
	tests := []struct {
		name string
		args []any
		want string
		err  error
	}{
		{"get", args("get", "k"), "1:k/" + ro, nil},
		{"get upper case", args("GeT", "k"), "1:k/" + ro, nil},
		{"get bytes key", args("get", []byte("k\x00b")), "1:k\x00b/" + ro, nil},
		{"get int key", args("get", 42), "1:42/" + ro, nil},
		{"get arity", args("get"), "", ErrArity},
		{"get arity 2", args("get", "a", "b"), "", ErrArity},
		{"set ex", args("set", "k", "v", "ex", int64(10)), "1:k/" + ow, nil},
		{"set get", args("set", "k", "v", "GET"), "1:k/" + rwa, nil},
		{"set get C string", args("set", "k", "v", "get\x00junk"), "1:k/" + rwa, nil},
		{"set value get is not an option", args("set", "k", "get"), "1:k/" + ow, nil},
		{"mset", args("mset", "a", 1, "b", 2.5), "1:a/" + ow + " 3:b/" + ow, nil},
		{"mset odd", args("mset", "a", 1, "b"), "1:a/" + ow + " 3:b/" + ow, nil},
		{"del", args("del", "a", "b"), "1:a/RM delete 2:b/RM delete", nil},
		{"rename", args("rename", "a", "b"), "1:a/RW access delete 2:b/OW update", nil},
		{"bitop", args("bitop", "and", "d", "a", "b"), "2:d/OW update 3:a/" + ro + " 4:b/" + ro, nil},
		{"evalsha numkeys int", args("evalsha", "sha", 1, "k", "arg"), "3:k/" + rwa, nil},
		{"eval numkeys 0", args("eval", "return 1", 0), "", nil},
		{"eval numkeys 0 with args", args("eval", "return 1", "0", "a"), "", nil},
		{"eval numkeys too big", args("eval", "s", 3, "a", "b"), "", nil},
		{"eval numkeys atoi fallback", args("eval", "s", "1x", "a"), "3:a/" + rwa, nil},
		{"eval numkeys leading zero", args("eval", "s", "01", "a"), "3:a/" + rwa, nil},
		{"eval_ro", args("eval_ro", "s", int64(2), "a", "b"), "3:a/" + ro + " 4:b/" + ro, nil},
		{"fcall", args("fcall", "f", 1, "a"), "3:a/" + rwa, nil},
		{"zunionstore", args("zunionstore", "d", 2, "a", "b", "weights", 1, 2),
			"1:d/" + ow + " 3:a/" + ro + " 4:b/" + ro, nil},
		{"zunionstore numkeys 0", args("zunionstore", "d", 0, "a"), "", ErrNoKeys},
		{"zunion", args("zunion", 2, "a", "b", "withscores"), "2:a/" + ro + " 3:b/" + ro, nil},
		{"sintercard", args("sintercard", 2, "a", "b", "limit", 5), "2:a/" + ro + " 3:b/" + ro, nil},
		{"lmpop", args("lmpop", 2, "a", "b", "left"), "2:a/" + rmd + " 3:b/" + rmd, nil},
		{"blmpop", args("blmpop", 0.5, 1, "a", "left"), "3:a/" + rmd, nil},
		{"xread", args("xread", "count", 10, "block", time.Duration(0), "STREAMS", "s1", "s2", "0", "$"),
			"6:s1/" + ro + " 7:s2/" + ro, nil},
		{"xread odd count uses the spec", args("xread", "streams", "s1", "0", "x"), "2:s1/" + ro, nil},
		{"xread one key no id", args("xread", "count", 1, "streams", "s1"), "", ErrNoKeys},
		{"xread no streams", args("xread", "count", 1, "s", "0"), "", ErrNoKeys},
		{"xreadgroup", args("xreadgroup", "group", "g", "c", "streams", "s", ">"), "5:s/" + ro, nil},
		{"migrate one key", args("migrate", "h", 6379, "k", 0, 5000), "3:k/" + rmd, nil},
		{"migrate keys", args("migrate", "h", 6379, "", 0, 5000, "copy", "auth2", "u", "p", "keys", "a", "b"),
			"11:a/" + rmd + " 12:b/" + rmd, nil},
		{"migrate auth2 swallows keys", args("migrate", "h", 6379, "", 0, 5000, "auth2", "u", "keys", "a", "b"),
			"3:/" + rmd, nil},
		{"migrate key and keys", args("migrate", "h", 6379, "k", 0, 5000, "keys", "a"), "", ErrNoKeys},
		{"sort store", args("sort", "k", "by", "w_*", "limit", 0, 10, "get", "#", "store", "d"),
			"1:k/" + ro + " 10:d/" + ow, nil},
		{"sort last store wins", args("sort", "k", "store", "d1", "store", "d2"), "1:k/" + ro + " 5:d2/" + ow, nil},
		{"sort get store", args("sort", "k", "get", "store", "x"), "1:k/" + ro, nil},
		{"sort_ro", args("sort_ro", "k", "by", "nosort"), "1:k/" + ro, nil},
		{"georadius store both", args("georadius", "k", 0, 0, 1, "km", "store", "a", "storedist", "b"),
			"1:k/" + ro + " 7:a/" + ow + " 9:b/" + ow, nil},
		{"georadiusbymember storedist", args("georadiusbymember", "k", "m", 1, "km", "storedist", "d"),
			"1:k/" + ro + " 6:d/" + ow, nil},
		{"georadius_ro", args("georadius_ro", "k", 0, 0, 1, "km"), "1:k/" + ro, nil},
		{"bitfield get only", args("bitfield", "k", "get", "u8", 0), "1:k/" + ro, nil},
		{"bitfield set", args("bitfield", "k", "get", "u8", 0, "set", "u8", 0, 1), "1:k/" + rwa, nil},
		{"bitfield bad", args("bitfield", "k", "get", "u8"), "1:k/" + rwa, nil},
		{"object freq", args("object", "FREQ", "k"), "2:k/RO", nil},
		{"memory usage", args("MEMORY", "usage", "k", "samples", 5), "2:k/RO", nil},
		{"xinfo stream", args("xinfo", "stream", "s", "full"), "2:s/" + ro, nil},
		{"client setname has no keys", args("client", "setname", "x"), "", nil},
		{"spublish channel is not a key", args("spublish", "ch", "msg"), "", nil},
		{"ping", args("ping"), "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := got(t, tt.args)
			if !errors.Is(err, tt.err) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if s != tt.want {
				t.Errorf("keys = %q\nwant   %q", s, tt.want)
			}
		})
	}
}

func TestLookup(t *testing.T) {
	for i := range Commands() {
		c := &Commands()[i]
		for _, name := range []string{c.Name, strings.ToUpper(c.Name)} {
			got, ok := Lookup(name)
			if !ok || got != c {
				t.Errorf("Lookup(%q) = %v, %v", name, got, ok)
			}
		}
		var a []any
		for _, part := range strings.Split(strings.ToUpper(c.Name), "|") {
			a = append(a, part)
		}
		if got, ok := LookupArgs(a); !ok || got != c {
			t.Errorf("LookupArgs(%q) = %v, %v", a, got, ok)
		}
		if c.IsSubcommand() {
			p := c.Parent()
			if !strings.HasPrefix(c.Name, p.Name+"|") || len(c.Subcommands()) != 0 {
				t.Errorf("%s: parent %s", c.Name, p.Name)
			}
		}
		for _, s := range c.Subcommands() {
			if s.Parent() != c {
				t.Errorf("%s: subcommand %s has parent %v", c.Name, s.Name, s.Parent())
			}
		}
	}
	misses := [][]any{
		{}, {"nosuchcommand"}, {""}, {"client", "nosuch"}, {"client", ""}, {"client|setname", "x"},
		{"get|x"}, {42}, {struct{}{}}, {"config", 1},
	}
	for _, a := range misses {
		if c, ok := LookupArgs(a); ok {
			t.Errorf("LookupArgs(%q) = %s, want not found", a, c.Name)
		}
	}
	if c, ok := LookupArgs(args([]byte("CLIENT"))); !ok || c.Name != "client" {
		t.Errorf("LookupArgs(CLIENT) = %v, %v; want the container", c, ok)
	}
	if _, ok := Lookup("client|SETNAME"); !ok {
		t.Error("Lookup(client|SETNAME) not found")
	}
}

func TestTableShape(t *testing.T) {
	if maxSpans != gencmd.MaxKeySpecs {
		t.Fatalf("maxSpans %d != gencmd.MaxKeySpecs %d", maxSpans, gencmd.MaxKeySpecs)
	}
	classes := map[string]Class{
		"get": ClassRead, "set": ClassWrite, "eval": ClassWrite, "eval_ro": ClassRead,
		"ping": ClassNone, "flushall": ClassWrite, "publish": ClassNone, "spublish": ClassNone,
		"scan": ClassRead, "xreadgroup": ClassWrite,
	}
	for name, want := range classes {
		c, ok := Lookup(name)
		if !ok || c.Class != want {
			t.Errorf("%s: class %v, want %v", name, c.Class, want)
		}
	}
	get, _ := Lookup("get")
	if get.Flags.String() != "readonly fast" || get.ACL.String() != "@read @string @fast" || !get.HasKeys() {
		t.Errorf("get: flags %q, acl %q", get.Flags, get.ACL)
	}
	if ServerVersion == "" || len(Commands()) < 300 {
		t.Errorf("table: version %q, %d entries", ServerVersion, len(Commands()))
	}
}

func TestKeysStop(t *testing.T) {
	c, _ := Lookup("mset")
	n := 0
	err := c.Keys(args("mset", "a", 1, "b", 2, "c", 3), func(int, string, KeyFlags) bool {
		n++
		return n < 2
	})
	if err != nil || n != 2 {
		t.Fatalf("n = %d, err = %v", n, err)
	}
}

func TestAppendKeys(t *testing.T) {
	c, _ := Lookup("mget")
	dst := make([]Key, 0, 4)
	dst, err := c.AppendKeys(dst, args("mget", "a", []byte("b")))
	if err != nil || len(dst) != 2 || dst[0] != (Key{1, "a", KeyRO | KeyAccess}) || dst[1].Name != "b" {
		t.Fatalf("AppendKeys = %v, %v", dst, err)
	}
	if _, err := c.AppendKeys(nil, args("mget", struct{}{})); !errors.Is(err, ErrArgType) {
		t.Fatalf("struct key: err = %v, want ErrArgType", err)
	}
}

func TestAtoiString2ll(t *testing.T) {
	for _, tt := range []struct {
		in   string
		atoi int
		ll   int64
		llOK bool
	}{
		{"0", 0, 0, true}, {"12", 12, 12, true}, {"-3", -3, -3, true}, {"01", 1, 0, false},
		{"+1", 1, 0, false}, {" 7", 7, 0, false}, {"1x", 1, 0, false}, {"", 0, 0, false},
		{"-", 0, 0, false}, {"-0", 0, 0, false}, {"9223372036854775807", -1, 1<<63 - 1, true},
		{"9223372036854775808", -1, 0, false}, {"-9223372036854775808", 0, -1 << 63, true},
		{"4294967297", 1, 4294967297, true}, {"99999999999999999999999", -1, 0, false},
		{"\t\n-12abc", -12, 0, false}, {"1\x002", 1, 0, false},
	} {
		if got := atoi(tt.in); got != tt.atoi {
			t.Errorf("atoi(%q) = %d, want %d", tt.in, got, tt.atoi)
		}
		if got, ok := string2ll(tt.in); got != tt.ll || ok != tt.llOK {
			t.Errorf("string2ll(%q) = %d, %v, want %d, %v", tt.in, got, ok, tt.ll, tt.llOK)
		}
	}
}

func TestWireMatchesGoRedis(t *testing.T) {
	s := "p"
	i := 7
	ts := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	for _, tt := range []struct {
		in   any
		want string
	}{
		{"x", "x"}, {[]byte("y"), "y"}, {nil, ""}, {&s, "p"}, {(*string)(nil), ""},
		{7, "7"}, {&i, "7"}, {int8(-8), "-8"}, {uint64(1 << 63), "9223372036854775808"},
		{1.5, "1.5"}, {float32(0.25), "0.25"}, {1e21, "1000000000000000000000"}, {true, "1"}, {false, "0"},
		{1500 * time.Millisecond, "1500000000"}, {ts, "2026-01-02T03:04:05.000000006Z"},
	} {
		var buf [numBufSize]byte
		got, ok := wire(tt.in, &buf)
		if !ok || got != tt.want {
			t.Errorf("wire(%#v) = %q, %v, want %q", tt.in, got, ok, tt.want)
		}
	}
	var buf [numBufSize]byte
	if _, ok := wire(struct{}{}, &buf); ok {
		t.Error("wire(struct{}{}) ok, want false")
	}
}

// TestArgText: the exported formatter gives what go-redis writes, and a
// string or byte slice without copying it.
func TestArgText(t *testing.T) {
	s := "p"
	ts := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	for _, tt := range []struct {
		in   any
		want string
	}{
		{"x", "x"}, {[]byte("y"), "y"}, {nil, ""}, {&s, "p"}, {(*string)(nil), ""}, {net.IPv4(1, 2, 3, 4).To4(), "\x01\x02\x03\x04"},
		{-7, "-7"}, {uint32(7), "7"}, {0.5, "0.5"}, {true, "1"}, {time.Second, "1000000000"},
		{ts, "2026-01-02T03:04:05.000000006Z"}, {&ts, "2026-01-02T03:04:05.000000006Z"},
	} {
		if got, ok := ArgText(tt.in); !ok || got != tt.want {
			t.Errorf("ArgText(%#v) = %q, %v, want %q", tt.in, got, ok, tt.want)
		}
	}
	if _, ok := ArgText(struct{}{}); ok {
		t.Error("ArgText(struct{}{}) ok, want false")
	}
	b := []byte("field")
	if got, _ := ArgText(b); unsafe.StringData(got) != &b[0] {
		t.Error("ArgText copied a []byte")
	}
	var str any = "field"
	if n := testing.AllocsPerRun(100, func() { ArgText(str) }); n != 0 {
		t.Errorf("ArgText of a string: %v allocations, want 0", n)
	}
}
