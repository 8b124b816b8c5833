package scancode

import (
	"slices"
	"testing"
)

// Client method names and the command they send: node_redis 3's ts_add
// (ts_addAsync once promisified, the suffix cut before), Jedis's tsAdd,
// names that only look like a module's.
func TestCommandName(t *testing.T) {
	for _, c := range []struct{ method, want string }{
		{"hGetAll", "hgetall"},
		{"delete", "del"},
		{"ts_add", "ts.add"},
		{"TS.RANGE", "ts.range"},
		{"tsAdd", "ts.add"},
		{"tsCreateRule", "ts.createrule"},
		{"jsonArrAppend", "json.arrappend"},
		{"bfMAdd", "bf.madd"},
		{"cf_addnx", "cf.addnx"},
		{"ts_nosuch", "ts_nosuch"},
		{"tsNoSuch", "tsnosuch"},
		{"getSet", "getset"},
		{"zadd", "zadd"},
	} {
		if got := commandName(c.method); got != c.want {
			t.Errorf("commandName(%q) = %q, want %q", c.method, got, c.want)
		}
	}
}

// Which arguments are keys: by the server's table, with the literal
// tokens the source shows (numkeys, STORE), and by the module table.
func TestCommandKeys(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string // "" for an argument the source does not show
		want []int
	}{
		{"get", []string{""}, []int{0}},
		{"eval", []string{"", "2", "", "", ""}, []int{2, 3}},
		{"georadius", []string{"", "", "", "", "km", "STORE", ""}, []int{0, 6}},
		{"georadius", []string{"", "", "", "", "km", "storedist", ""}, []int{0, 6}},
		{"georadius", []string{"", "", "", "", "km", "WITHDIST"}, []int{0}},
		{"georadius", []string{"", "", "", "", "km", "", ""}, []int{0}},
		{"sort", []string{"", "STORE", ""}, []int{0, 2}},
		{"xread", []string{"COUNT", "", "STREAMS", "", "", "", ""}, []int{3, 4}},
		{"ts.add", []string{"", "", ""}, []int{0}},
		{"ts.madd", []string{"", "", "", "", "", ""}, []int{0, 3}},
		{"ts.madd", []string{""}, []int{0}},
		{"ts.createrule", []string{"", "", "AGGREGATION", "avg", ""}, []int{0, 1}},
		{"json.mget", []string{"", "", "", "$"}, []int{0, 1, 2}},
		{"json.mget", []string{"", "$"}, []int{0}},
		{"json.set", []string{"", "$", ""}, []int{0}},
		{"ts.mrange", []string{"", "", "FILTER", ""}, nil},
	} {
		got := commandKeys(c.name, len(c.args), func(i int) (string, bool) { return c.args[i], c.args[i] != "" })
		if !slices.Equal(got, c.want) {
			t.Errorf("commandKeys(%s %q) = %v, want %v", c.name, c.args, got, c.want)
		}
	}
}
