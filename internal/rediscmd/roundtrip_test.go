package rediscmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/rediscmd/internal/gencmd"
	"github.com/keyguard/keyguard/internal/redistest"
)

// client starts a redis-server and returns a RESP2 client: COMMAND replies
// then come as flat arrays in server order.
func client(t *testing.T) *redis.Client {
	t.Helper()
	srv := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, Protocol: 2})
	t.Cleanup(func() { c.Close() })
	return c
}

// sameCommands returns the names of the table's commands (and
// subcommands) that the local server describes as the table does: the
// same arity, legacy key range and key specs. On the server the table was
// generated from that is all of them (a difference fails the test). On
// another version the behaviour tests run on the commands that did not
// change, which must be most of them; the others are listed.
func sameCommands(t *testing.T, c *redis.Client) (same map[string]bool, version string) {
	t.Helper()
	snap, err := gencmd.Fetch(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	onServer := map[string]gencmd.Cmd{}
	for _, cmd := range snap.Commands {
		onServer[cmd.Name] = cmd
		for _, sub := range cmd.Subcommands {
			onServer[sub.Name] = sub
		}
	}
	same = map[string]bool{}
	var differ []string
	for i := range Commands() {
		cmd := &Commands()[i]
		sc, ok := onServer[cmd.Name]
		switch {
		case !ok:
			differ = append(differ, cmd.Name+" (not on the server)")
		case !describedAlike(cmd, sc):
			differ = append(differ, cmd.Name+" (arity or key specs changed)")
		default:
			same[cmd.Name] = true
		}
	}
	if snap.Version == ServerVersion {
		if len(differ) > 0 {
			t.Fatalf("redis-server %s differs from the table generated from it: %s", snap.Version, strings.Join(differ, ", "))
		}
		return same, snap.Version
	}
	t.Logf("redis-server %s, table from %s: comparing the %d of %d commands described alike; differing: %s",
		snap.Version, ServerVersion, len(same), len(Commands()), strings.Join(differ, ", "))
	if len(same) < len(Commands())*8/10 {
		t.Fatalf("redis-server %s describes only %d of the table's %d commands as %s does: regenerate the table for it (go generate ./internal/rediscmd)",
			snap.Version, len(same), len(Commands()), ServerVersion)
	}
	return same, snap.Version
}

// describedAlike compares what decides a command's keys.
func describedAlike(cmd *Command, sc gencmd.Cmd) bool {
	if cmd.Arity != sc.Arity || cmd.FirstKey != sc.FirstKey || cmd.LastKey != sc.LastKey || cmd.Step != sc.Step || len(cmd.KeySpecs) != len(sc.KeySpecs) {
		return false
	}
	begin := map[BeginKind]string{BeginUnknown: "unknown", BeginIndex: "index", BeginKeyword: "keyword"}
	find := map[FindKind]string{FindUnknown: "unknown", FindRange: "range", FindKeynum: "keynum"}
	for i, k := range cmd.KeySpecs {
		s := sc.KeySpecs[i]
		if begin[k.Begin.Kind] != s.BeginType || k.Begin.Index != s.Index || k.Begin.Keyword != s.Keyword || k.Begin.StartFrom != s.StartFrom ||
			find[k.Find.Kind] != s.FindType || k.Find.LastKey != s.LastKey || k.Find.KeyStep != s.KeyStep || k.Find.Limit != s.Limit ||
			k.Find.KeyNumIdx != s.KeyNumIdx || k.Find.FirstKey != s.FirstKey {
			return false
		}
	}
	return true
}

// TestGeneratedTableIsCurrent regenerates zz_commands.go from the local
// server and compares it with the committed file. On another version the
// file cannot be the same: the table must then describe most commands as
// that server does (sameCommands).
func TestGeneratedTableIsCurrent(t *testing.T) {
	c := client(t)
	snap, err := gencmd.Fetch(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Version != ServerVersion {
		_, _ = sameCommands(t, c)
		return
	}
	if err := gencmd.Check(snap); err != nil {
		t.Fatal(err)
	}
	want, err := gencmd.Render(snap)
	if err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile("zz_commands.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, want) {
		t.Fatal("zz_commands.go differs from what the generator produces: run go generate ./rediscmd")
	}
}

// TestHasKeysMatchesServer asks COMMAND GETKEYS about every entry with no
// arguments: the server checks "has keys" before arity.
func TestHasKeysMatchesServer(t *testing.T) {
	c := client(t)
	same, _ := sameCommands(t, c)
	ctx := context.Background()
	for i := range Commands() {
		cmd := &Commands()[i]
		if !same[cmd.Name] {
			continue
		}
		if len(cmd.Subcommands()) > 0 {
			// GETKEYS cannot name a bare container; containers have no key specs.
			if cmd.HasKeys() {
				t.Errorf("container %s: HasKeys true", cmd.Name)
			}
			continue
		}
		a := []any{"command", "getkeys"}
		for _, p := range strings.Split(cmd.Name, "|") {
			a = append(a, p)
		}
		a = append(a, "x") // GETKEYS itself needs an argument after the name
		err := c.Do(ctx, a...).Err()
		noKeys := err != nil && strings.Contains(err.Error(), "no key arguments")
		if noKeys == cmd.HasKeys() {
			t.Errorf("%s: HasKeys %v, server says %v", cmd.Name, cmd.HasKeys(), err)
		}
	}
}

// TestRoundTripGetKeys compares Keys with COMMAND GETKEYSANDFLAGS on a
// corpus: argument lists built from COMMAND DOCS for every key-bearing
// command, hand-written tricky lines, and the argument vectors go-redis
// itself builds.
func TestRoundTripGetKeys(t *testing.T) {
	c := client(t)
	same, version := sameCommands(t, c)
	ctx := context.Background()

	docs, err := fetchDocs(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	corpus := docCorpus(t, docs)
	fromDocs := len(corpus)
	corpus = append(corpus, trickyLines()...)
	corpus = append(corpus, goRedisLines(t)...)
	corpus = slices.DeleteFunc(corpus, func(line []any) bool {
		cmd, ok := LookupArgs(line)
		if !ok {
			// A command newer than the table; on the table's own
			// server, a line the table does not know is a failure.
			return version != ServerVersion
		}
		return !same[cmd.Name]
	})

	keyBearing := map[string]bool{}
	for i := range Commands() {
		if cmd := &Commands()[i]; cmd.HasKeys() && same[cmd.Name] {
			keyBearing[cmd.Name] = true
		}
	}
	matched := map[string]int{}  // command -> lines where the server found keys and we agree
	rejected := map[string]int{} // command -> lines GETKEYS rejected (we must reject too)
	for _, line := range corpus {
		name, hasKeys, ok := roundTrip(t, ctx, c, line)
		switch {
		case !ok:
		case hasKeys:
			matched[name]++
		default:
			rejected[name]++
		}
	}

	var missing []string
	for name := range keyBearing {
		if matched[name] == 0 {
			missing = append(missing, fmt.Sprintf("%s(rejected %d)", name, rejected[name]))
		}
	}
	sort.Strings(missing)
	covered := len(keyBearing) - len(missing)
	t.Logf("corpus: %d lines (%d from COMMAND DOCS); key-bearing commands: %d, round-tripped with keys: %d (%.1f%%); GETKEYS rejected %d lines",
		len(corpus), fromDocs, len(keyBearing), covered, 100*float64(covered)/float64(len(keyBearing)), sum(rejected))
	if len(missing) > 0 {
		t.Logf("key-bearing commands without a round-tripped line: %s", strings.Join(missing, " "))
	}
	if len(corpus) < 150 {
		t.Errorf("corpus has %d lines, want >= 150", len(corpus))
	}
	if float64(covered) < 0.9*float64(len(keyBearing)) {
		t.Errorf("only %d of %d key-bearing commands round-tripped", covered, len(keyBearing))
	}
}

// roundTrip compares Keys with COMMAND GETKEYSANDFLAGS for one line. ok is
// false on a mismatch (reported); hasKeys says the server found keys.
func roundTrip(t *testing.T, ctx context.Context, c *redis.Client, line []any) (name string, hasKeys, ok bool) {
	t.Helper()
	cmd, found := LookupArgs(line)
	if !found {
		t.Errorf("%s: not in the table", show(line))
		return "", false, false
	}
	want, werr := serverKeys(ctx, c, line)
	have, herr := cmd.AppendKeys(nil, line)
	switch {
	case werr != nil && strings.Contains(werr.Error(), "no key arguments"):
		if cmd.HasKeys() {
			t.Errorf("%s: server says no key arguments, HasKeys is true", show(line))
			return cmd.Name, false, false
		}
		return cmd.Name, false, true
	case werr != nil:
		if testing.Verbose() {
			t.Logf("GETKEYS rejects %s: %v", show(line), werr)
		}
		wantErr := ErrNoKeys
		if strings.Contains(werr.Error(), "number of arguments") {
			wantErr = ErrArity
		}
		if !errors.Is(herr, wantErr) {
			t.Errorf("%s: server: %v; Keys: %v %v, want %v", show(line), werr, have, herr, wantErr)
			return cmd.Name, false, false
		}
		return cmd.Name, false, true
	}
	if herr != nil {
		t.Errorf("%s: server keys %v; Keys error %v", show(line), want, herr)
		return cmd.Name, false, false
	}
	if diff := compareKeys(have, want); diff != "" {
		t.Errorf("%s: %s", show(line), diff)
		return cmd.Name, false, false
	}
	return cmd.Name, len(want) > 0, true
}

// TestRandomLinesMatchServer throws random option soup at the commands
// with their own extractors or keyword specs and compares with the server.
func TestRandomLinesMatchServer(t *testing.T) {
	c := client(t)
	same, _ := sameCommands(t, c)
	ctx := context.Background()
	names := []string{
		"sort", "sort_ro", "migrate", "georadius", "georadiusbymember", "xread", "xreadgroup",
		"set", "bitfield", "eval", "fcall_ro", "zunionstore", "zdiffstore", "zunion", "lmpop", "blmpop",
		"bzmpop", "sintercard", "zintercard",
	}
	vocab := []any{
		"store", "STORE", "storedist", "keys", "KEYS", "streams", "STREAMS", "get", "GET", "set",
		"incrby", "overflow", "limit", "by", "count", "block", "group", "noack", "auth", "auth2",
		"copy", "replace", "0", "1", "2", "3", "-1", "01", "1x", " 2", "", "k", "a", "b",
		"get\x00x", "Streams\x00", 1, int64(2), 0, 1.0, []byte("store"), true,
	}
	names = slices.DeleteFunc(names, func(n string) bool { return !same[n] })
	if len(names) < 10 {
		t.Fatalf("only %d of the commands with their own extractors are described alike: %q", len(names), names)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		line := []any{names[r.IntN(len(names))]}
		for range r.IntN(11) {
			line = append(line, vocab[r.IntN(len(vocab))])
		}
		roundTrip(t, ctx, c, line)
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// serverKey is one entry of COMMAND GETKEYSANDFLAGS.
type serverKey struct {
	name  string
	flags []string
}

func serverKeys(ctx context.Context, c *redis.Client, line []any) ([]serverKey, error) {
	a := append([]any{"command", "getkeysandflags"}, line...)
	res, err := c.Do(ctx, a...).Slice()
	if err != nil {
		return nil, err
	}
	out := make([]serverKey, 0, len(res))
	for _, r := range res {
		pair, ok := r.([]any)
		if !ok || len(pair) != 2 {
			return nil, fmt.Errorf("GETKEYSANDFLAGS entry %#v", r)
		}
		name, _ := pair[0].(string)
		var flags []string
		fs, _ := pair[1].([]any)
		for _, f := range fs {
			s, _ := f.(string)
			flags = append(flags, s)
		}
		out = append(out, serverKey{name, flags})
	}
	return out, nil
}

// compareKeys wants the same keys in the same order, and the same flags
// where the server reports any (its generic extractors report none).
func compareKeys(have []Key, want []serverKey) string {
	if len(have) != len(want) {
		return fmt.Sprintf("Keys %v, server %v", have, want)
	}
	for i := range have {
		if have[i].Name != want[i].name {
			return fmt.Sprintf("key %d: Keys %q, server %q", i, have[i].Name, want[i].name)
		}
		if len(want[i].flags) == 0 {
			continue
		}
		hf := strings.Fields(have[i].Flags.String())
		wf := slices.Clone(want[i].flags)
		sort.Strings(hf)
		sort.Strings(wf)
		if !slices.Equal(hf, wf) {
			return fmt.Sprintf("key %d %q: flags %v, server %v", i, have[i].Name, hf, wf)
		}
	}
	return ""
}

func show(line []any) string {
	var b strings.Builder
	for i, a := range line {
		if i > 0 {
			b.WriteByte(' ')
		}
		var buf [numBufSize]byte
		s, _ := wire(a, &buf)
		b.WriteString(strconv.Quote(s))
		if _, isStr := a.(string); !isStr {
			fmt.Fprintf(&b, "(%T)", a)
		}
	}
	return b.String()
}

// trickyLines are hand-written lines around the special extractors and the
// server's parsing quirks.
func trickyLines() [][]any {
	return [][]any{
		{"SET", "k", "v", "GET"}, {"set", "k", "v", "get\x00x"}, {"set", "k", "v", "EX", 10, "NX"},
		{"set", "k", "get"}, {"set", "k", "v", "ge"},
		{"bitfield", "k", "get", "u8", 0}, {"bitfield", "k", "get", "u8", 0, "incrby", "u8", 0, 1},
		{"bitfield", "k", "overflow", "sat"}, {"bitfield", "k", "get", "u8"}, {"bitfield", "k"},
		{"sort", "k"}, {"sort", "k", "by", "w_*", "limit", 0, 10, "get", "#", "get", "o_*", "store", "d"},
		{"sort", "k", "store", "d1", "store", "d2"}, {"sort", "k", "get", "store", "x"},
		{"sort", "k", "limit", "store", "x", "y"}, {"sort", "k", "store"}, {"SORT", "k", "STORE", "limit", 1, 2},
		{"sort_ro", "k", "by", "x"},
		{"migrate", "h", 6379, "k", 0, 5000}, {"migrate", "h", 6379, "", 0, 5000, "keys", "a", "b"},
		{"migrate", "h", 6379, "k", 0, 5000, "keys", "a"}, {"migrate", "h", 6379, "", 0, 5000, "keys"},
		{"migrate", "h", 6379, "", 0, 5000, "auth", "keys", "keys", "a"},
		{"migrate", "h", 6379, "", 0, 5000, "auth2", "u", "keys", "a", "b"},
		{"migrate", "keys", 6379, "k", 0, 5000}, {"migrate", "h", 6379, "", 0, 5000, "copy", "replace", "keys", "a"},
		{"georadius", "k", 0, 0, 1, "km", "store", "a", "storedist", "b"},
		{"georadius", "k", 0, 0, 1, "km", "storedist", "b", "store", "a"},
		{"georadius", "k", 0, 0, 1, "km", "store"}, {"georadius", "k", 0, 0, 1, "store", "x"},
		{"georadiusbymember", "k", "m", 1, "km", "STORE", "d"},
		{"xread", "streams", "s1", "0"}, {"xread", "count", 2, "streams", "a", "b", 0, 0},
		{"xread", "streams", "s1", "0", "x"}, {"xread", "count", "streams", "streams", "a", "b"},
		{"xread", "count", 1, "streams", "s1"}, {"xread", "block", 0, "noack", "streams", "a", "0"},
		{"xreadgroup", "group", "g", "c", "streams", "s", ">"},
		{"xreadgroup", "group", "streams", "c", "streams", "s", ">"},
		{"xreadgroup", "group", "g", "c", "count", 1, "noack", "streams", "s", "t", ">", ">"},
		{"eval", "s", 0}, {"eval", "s", 1, "k"}, {"eval", "s", "1x", "k"}, {"eval", "s", "01", "k"},
		{"eval", "s", " 1", "k"}, {"eval", "s", "-1", "k"}, {"eval", "s", 2, "k"}, {"eval", "s", "abc", "k"},
		{"eval", "s", "4294967297", "k"}, {"eval", "s", "99999999999999999999", "k"},
		{"eval", "s", 1.0, "k"}, {"eval", "s", true, "k"}, {"evalsha", "x", 2, "a", "b", "c"},
		{"fcall", "f", 1, "k", "a"}, {"fcall_ro", "f", 0, "a"},
		{"zunionstore", "d", 0, "a"}, {"zunionstore", "d", "2", "a"}, {"zunionstore", "d", "1x", "a", "b"},
		{"zinterstore", "d", 2, "a", "b", "weights", 1, 2, "aggregate", "max"},
		{"zunion", 0, "a"}, {"zunion", "1", "a", "withscores"}, {"zdiff", 2, "a", "b"},
		{"sintercard", 2, "a", "b", "limit", 1}, {"zintercard", 1, "a"},
		{"lmpop", 2, "a", "b", "left", "count", 2}, {"lmpop", 0, "a", "left"},
		{"blmpop", 0, 1, "a", "right"}, {"bzmpop", 1.5, 2, "a", "b", "min"}, {"zmpop", 1, "a", "max"},
		{"mset", "a", 1, "b", 2}, {"mset", "a", 1, "b"}, {"msetnx", "a", 1},
		{"del", []byte("bin\x00key"), "k\r\n"}, {"get", int64(42)}, {"get", 1.5}, {"get", ""},
		{"OBJECT", "freq", "k"}, {"object", "ENCODING", "k"}, {"memory", "usage", "k", "samples", 0},
		{"xinfo", "stream", "s", "full", "count", 1}, {"xgroup", "create", "s", "g", "$", "mkstream"},
		{"bitop", "not", "d", "a"}, {"lcs", "a", "b", "len"}, {"copy", "a", "b", "db", 1, "replace"},
		{"smove", "a", "b", "m"}, {"lmove", "a", "b", "left", "right"}, {"rpoplpush", "a", "b"},
		{"blpop", "a", "b", 0}, {"blmove", "a", "b", "left", "left", 0}, {"pfcount", "a", "b"},
		{"pfmerge", "d", "a", "b"}, {"touch", "a", "b"}, {"unlink", "a"}, {"watch", "a", "b"},
		{"exists", "a", "a"}, {"geosearchstore", "d", "s", "frommember", "m", "byradius", 1, "km"},
		{"restore", "k", 0, "payload"}, {"dump", "k"}, {"renamenx", "a", "b"},
		// arity errors
		{"get"}, {"get", "a", "b"}, {"object", "freq"}, {"set", "k"}, {"eval", "s"}, {"xread", "streams", "a"},
	}
}

// goRedisLines records the argument vectors go-redis builds for the
// commands its API offers, without sending them.
func goRedisLines(t *testing.T) [][]any {
	t.Helper()
	var lines [][]any
	rec := recorder{out: &lines}
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	defer c.Close()
	c.AddHook(rec)
	ctx := context.Background()
	c.Get(ctx, "k")
	c.Set(ctx, "k", "v", 10*time.Second)
	c.Set(ctx, "k", []byte("v"), redis.KeepTTL)
	c.SetArgs(ctx, "k", 1, redis.SetArgs{Mode: "NX", TTL: time.Minute, Get: true})
	c.SetNX(ctx, "k", 1.5, time.Second)
	c.SetEx(ctx, "k", true, time.Hour)
	c.GetEx(ctx, "k", time.Second)
	c.GetDel(ctx, "k")
	c.MSet(ctx, "a", 1, "b", 2)
	c.MSetNX(ctx, map[string]any{"a": 1})
	c.MGet(ctx, "a", "b", "c")
	c.Del(ctx, "a", "b")
	c.Expire(ctx, "k", time.Minute)
	c.ExpireNX(ctx, "k", time.Minute)
	c.PExpireAt(ctx, "k", time.Unix(1700000000, 0))
	c.Incr(ctx, "k")
	c.IncrByFloat(ctx, "k", 0.5)
	c.HSet(ctx, "h", "f", "v", "g", 2)
	c.HGetAll(ctx, "h")
	c.HIncrBy(ctx, "h", "f", 1)
	c.LPush(ctx, "l", 1, 2)
	c.BLPop(ctx, time.Second, "l1", "l2")
	c.LMPop(ctx, "left", 2, "l1", "l2")
	c.BLMPop(ctx, time.Second, "left", 2, "l1", "l2")
	c.LMove(ctx, "a", "b", "left", "right")
	c.SAdd(ctx, "s", "m")
	c.SInterStore(ctx, "d", "a", "b")
	c.SInterCard(ctx, 3, "a", "b")
	c.ZAdd(ctx, "z", redis.Z{Score: 1, Member: "m"})
	c.ZUnionStore(ctx, "d", &redis.ZStore{Keys: []string{"a", "b"}, Weights: []float64{1, 2}})
	c.ZInterStore(ctx, "d", &redis.ZStore{Keys: []string{"a", "b"}})
	c.ZDiffStore(ctx, "d", "a", "b")
	c.ZUnion(ctx, redis.ZStore{Keys: []string{"a", "b"}})
	c.ZInterCard(ctx, 0, "a", "b")
	c.ZMPop(ctx, "min", 1, "a", "b")
	c.BZMPop(ctx, time.Second, "min", 1, "a")
	c.ZRangeStore(ctx, "d", redis.ZRangeArgs{Key: "src", Start: 0, Stop: -1})
	c.XAdd(ctx, &redis.XAddArgs{Stream: "s", Values: []any{"f", "v"}})
	c.XRead(ctx, &redis.XReadArgs{Streams: []string{"s1", "s2", "0", "0"}, Count: 10, Block: time.Second})
	c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c", Streams: []string{"s", ">"}, NoAck: true})
	c.XGroupCreateMkStream(ctx, "s", "g", "$")
	c.XInfoStreamFull(ctx, "s", 5)
	c.Eval(ctx, "return 1", []string{"k1", "k2"}, "a")
	c.EvalSha(ctx, "abc", []string{"k1"}, 1)
	c.EvalRO(ctx, "return 1", nil)
	c.EvalShaRO(ctx, "abc", []string{"k"})
	c.FCall(ctx, "f", []string{"k"}, 1)
	c.FCallRo(ctx, "f", nil)
	c.Sort(ctx, "k", &redis.Sort{By: "w_*", Get: []string{"#"}, Offset: 0, Count: 10})
	c.SortStore(ctx, "k", "d", &redis.Sort{Order: "DESC"})
	c.SortRO(ctx, "k", &redis.Sort{By: "nosort"})
	c.GeoAdd(ctx, "g", &redis.GeoLocation{Name: "m", Longitude: 1, Latitude: 2})
	c.GeoRadiusStore(ctx, "g", 1, 2, &redis.GeoRadiusQuery{Radius: 1, Unit: "km", Store: "d"})
	c.GeoRadiusByMemberStore(ctx, "g", "m", &redis.GeoRadiusQuery{Radius: 1, Unit: "km", StoreDist: "d"})
	c.GeoSearchStore(ctx, "g", "d", &redis.GeoSearchStoreQuery{GeoSearchQuery: redis.GeoSearchQuery{Member: "m", Radius: 1, RadiusUnit: "km"}})
	c.Migrate(ctx, "127.0.0.1", "6380", "k", 0, time.Second)
	c.BitField(ctx, "b", "get", "u8", 0)
	c.BitField(ctx, "b", "incrby", "u8", 0, 1)
	c.BitOpAnd(ctx, "d", "a", "b")
	c.BitCount(ctx, "b", &redis.BitCount{Start: 0, End: -1})
	c.PFMerge(ctx, "d", "a", "b")
	c.Rename(ctx, "a", "b")
	c.Copy(ctx, "a", "b", 0, true)
	c.ObjectFreq(ctx, "k")
	c.MemoryUsage(ctx, "k")
	c.Touch(ctx, "a")
	c.Type(ctx, "k")
	c.TTL(ctx, "k")
	c.Dump(ctx, "k")
	c.LCS(ctx, &redis.LCSQuery{Key1: "a", Key2: "b", Len: true})
	c.SPublish(ctx, "ch", "m")
	if len(lines) < 70 {
		t.Fatalf("recorded only %d go-redis commands", len(lines))
	}
	return lines
}

// recorder captures cmd.Args() and stops the command before it is sent.
type recorder struct{ out *[][]any }

func (r recorder) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r recorder) ProcessHook(redis.ProcessHook) redis.ProcessHook {
	return func(_ context.Context, cmd redis.Cmder) error {
		*r.out = append(*r.out, slices.Clone(cmd.Args()))
		return nil
	}
}

func (r recorder) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
