package live

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/internal/audit/inventory"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/redistest"
)

// commandCalls is INFO commandstats' calls of one command.
func commandCalls(t *testing.T, c *redis.Client, cmd string) int64 {
	t.Helper()
	s, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(s, "\n") {
		if rest, ok := strings.CutPrefix(line, "cmdstat_"+cmd+":calls="); ok {
			var n int64
			fmt.Sscan(strings.SplitN(rest, ",", 2)[0], &n)
			return n
		}
	}
	return 0
}

// familyTruth is what TYPE and MEMORY USAGE (SAMPLES 5) say of the keys
// of fam (key → family), summed by family.
func familyTruth(t *testing.T, c *redis.Client, fam map[string]string) (map[string]map[string]int64, map[string]int64) {
	t.Helper()
	ctx := context.Background()
	types := map[string]map[string]int64{}
	for k, f := range fam {
		if types[f] == nil {
			types[f] = map[string]int64{}
		}
		types[f][c.Type(ctx, k).Val()]++
	}
	return types, memoryByTemplate(t, c, fam)
}

// checkFamilies checks the report's groups against the families' truth:
// every family reported and no other, its types those TYPE says (types
// nil: not checked), its bytes within 1% of MEMORY USAGE.
func checkFamilies(t *testing.T, rep *report.Report, types map[string]map[string]int64, bytes map[string]int64) {
	t.Helper()
	seen := 0
	for _, g := range rep.Groups {
		want, ok := bytes[g.Name]
		if !ok {
			t.Errorf("group %s: not a family of the data", g.Name)
			continue
		}
		seen++
		if types != nil && !equalMaps(g.Types, types[g.Name]) {
			t.Errorf("group %s: types %v, TYPE says %v", g.Name, g.Types, types[g.Name])
		}
		if off := math.Abs(float64(g.Bytes-want)) / float64(want); off > 0.01 {
			t.Errorf("group %s: %d bytes, MEMORY USAGE says %d", g.Name, g.Bytes, want)
		}
	}
	if seen != len(bytes) {
		t.Errorf("%d families reported, %d in the data", seen, len(bytes))
	}
}

// auditFamilies audits s after a CONFIG RESETSTAT, in batches of 200 keys
// and with room for every family, and checks that it saw the keys of fam.
func auditFamilies(t *testing.T, s *redistest.Server, c *redis.Client, fam map[string]string) *report.Report {
	t.Helper()
	ctx := context.Background()
	if err := c.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	res, err := Run(ctx, testRegistry(t), standalone(s), Options{Count: 200, Inventory: inventory.Options{MaxGroups: 100000}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete || res.Report.Summary.Keys != int64(len(fam)) {
		t.Fatalf("complete %v keys %d, want %d", res.Complete, res.Report.Summary.Keys, len(fam))
	}
	return res.Report
}

// Unregistered families are probed with their type's first probe once
// their keys agree on a type, and keys of another type among them (a few
// hashes and lists in a family of strings, a string in a family of hashes)
// are still reported with their own type, element count and memory: the
// report's groups are what TYPE and MEMORY USAGE say of every key.
func TestGuessedFamilyTypes(t *testing.T) {
	n := 4000
	if testing.Short() {
		n = 2000
	}
	reg := testRegistry(t)
	s := redistest.Start(t)
	c := s.Client(t)
	ctx := context.Background()
	p := c.Pipeline()
	chk := reg.NewChecker()
	fam := map[string]string{} // key → family
	for i := range n {
		k := fmt.Sprintf("blob_%d_data", i)
		switch {
		case i%300 == 150:
			p.HSet(ctx, k, "a", i, "b", "x")
		case i%400 == 17:
			p.RPush(ctx, k, "p", "q", i)
		case i%3 == 0:
			p.Set(ctx, k, i*7919, 0) // an integer
		default:
			p.Set(ctx, k, strings.Repeat("v", i%90), 0) // embedded or raw
		}
		fam[k] = chk.Infer(k)
		k = fmt.Sprintf("bag_%d_info", i)
		if i%500 == 250 {
			p.Set(ctx, k, "not a hash", 0)
		} else {
			p.HSet(ctx, k, "name", fmt.Sprint("n", i), "size", i%7, "note", strings.Repeat("z", i%40))
		}
		fam[k] = chk.Infer(k)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	types, bytes := familyTruth(t, c, fam)
	if len(types) != 2 {
		t.Fatalf("families %v, want two", types)
	}

	if err := c.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	// Small batches: the first two go out before any TYPE has answered.
	res, err := Run(ctx, reg, standalone(s), Options{Count: 200})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete || res.Report.Summary.Keys != int64(len(fam)) {
		t.Fatalf("complete %v keys %d, want %d", res.Complete, res.Report.Summary.Keys, len(fam))
	}
	// Guessed: far fewer TYPE calls than keys. Wrong guesses were made and
	// checked: the full check sends XLEN, and no key is a stream.
	if typ := commandCalls(t, c, "type"); typ*6 > int64(len(fam)) {
		t.Errorf("TYPE sent %d times for %d keys: the families' types were not guessed", typ, len(fam))
	}
	if x := commandCalls(t, c, "xlen"); x == 0 {
		t.Errorf("no key went through the full type check: the odd keys were not met while guessing")
	}
	checkFamilies(t, res.Report, types, bytes)
}

// A family's guess follows what its keys showed: none before guessTrust
// keys agree, none once other types reach one in guessOdds, and the other
// type once the family turned to it.
func TestFamilyGuess(t *testing.T) {
	g := &famTypes{}
	for i := range guessTrust - 1 {
		g.learn("f", "string")
		if got := g.guess("f"); got != "" {
			t.Fatalf("after %d strings: guess %q", i+1, got)
		}
	}
	g.learn("f", "string")
	if got := g.guess("f"); got != "string" {
		t.Fatalf("after %d strings: guess %q, want string", guessTrust, got)
	}
	g.learn("f", "") // a vanished key says nothing
	// Later keys are hashes: the guess stops at one in guessOdds…
	n := 0
	for g.guess("f") == "string" {
		g.learn("f", "hash")
		n++
		if n > guessTrust {
			t.Fatalf("still guessing string after %d hashes", n)
		}
	}
	if n*guessOdds < guessTrust {
		t.Errorf("stopped after %d hashes among %d strings", n, guessTrust)
	}
	// …and once the strings are fewer than one in guessOdds, the family
	// is a hash family.
	for range guessOdds * guessTrust {
		g.learn("f", "hash")
	}
	if got := g.guess("f"); got != "hash" {
		t.Errorf("after many hashes: guess %q, want hash", got)
	}
	for range guessTrust {
		g.learn("json", "ReJSON-RL")
	}
	if got := g.guess("json"); got != "" {
		t.Errorf("a family of a module type: guess %q", got)
	}
	// The map is bounded: a family past maxFamilies has no guess of its
	// own, only the prior's.
	b := &famTypes{}
	for i := range maxFamilies {
		b.learn(fmt.Sprint("f", i), "set")
	}
	for range guessTrust {
		b.learn("late", "hash")
	}
	if got := b.guess("late"); got != "set" || len(b.by) != maxFamilies {
		t.Errorf("family past the bound: guess %q, want the prior's set; %d families kept", got, len(b.by))
	}
}

// Keys of families not known on their own (a legacy keyspace of
// thousands of small families) are guessed by the prior, what such keys
// showed, on the same terms: none before guessTrust keys agree, none once
// other types reach one in guessOdds, and never for a family whose own
// keys showed another type.
func TestFamilyGuessPrior(t *testing.T) {
	g := &famTypes{}
	for i := range guessTrust - 1 {
		g.learn(fmt.Sprint("s", i), "string")
	}
	if got := g.guess("new"); got != "" {
		t.Fatalf("after %d keys of small families: guess %q", guessTrust-1, got)
	}
	g.learn("s-last", "string")
	if got := g.guess("new"); got != "string" {
		t.Fatalf("an unseen family after %d strings of small families: guess %q, want string", guessTrust, got)
	}
	if got := g.guess("s3"); got != "string" {
		t.Errorf("a family of one string: guess %q, want string", got)
	}
	g.learn("h", "hash")
	if got := g.guess("h"); got != "" {
		t.Errorf("a family whose key was a hash: guess %q from the prior", got)
	}
	// Keys of other types among the small families: the prior stops at
	// one in guessOdds.
	n := 1 // "h"
	for g.guess("new") == "string" {
		g.learn(fmt.Sprint("h", n), "hash")
		n++
		if n > guessTrust {
			t.Fatalf("prior still string after %d hashes", n)
		}
	}
	if n*guessOdds < guessTrust {
		t.Errorf("prior stopped after %d hashes among %d strings", n, guessTrust)
	}
	// A family known on its own keeps its own guess, and its later keys
	// no longer count for the prior.
	for range guessTrust {
		g.learn("big", "zset")
	}
	before := g.prior
	for range 10 * guessTrust {
		g.learn("big", "zset")
	}
	if got := g.guess("big"); got != "zset" || g.prior != before {
		t.Errorf("a family known on its own: guess %q, prior %+v then %+v", got, before, g.prior)
	}
}

// Small families of several types (one in twenty of hashes, one key in
// 50 of the others a list: other types under one in guessOdds of the
// keys, as the prior wants them): the prior guesses string, the keys of the other
// types are checked with TYPE and every count, and a family that showed
// another type is not guessed again; every family's types and bytes are
// what TYPE and MEMORY USAGE say.
func TestSmallFamiliesOfSeveralTypes(t *testing.T) {
	fams, per := 600, 8
	if testing.Short() {
		fams = 300
	}
	reg := testRegistry(t)
	s := redistest.Start(t)
	c := s.Client(t)
	ctx := context.Background()
	chk := reg.NewChecker()
	p := c.Pipeline()
	fam := map[string]string{}
	for f := range fams {
		for j := range per {
			k := fmt.Sprintf("%s:item:%d", letters(f), j)
			fam[k] = chk.Infer(k)
			switch {
			case f%20 == 3:
				p.HSet(ctx, k, "a", j, "b", f)
			case (f*per+j)%50 == 7:
				p.RPush(ctx, k, "x", j)
			default:
				p.Set(ctx, k, fmt.Sprintf("v%d", f*per+j), 0)
			}
		}
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	types, bytes := familyTruth(t, c, fam)
	rep := auditFamilies(t, s, c, fam)
	if typ := commandCalls(t, c, "type"); typ*2 > int64(len(fam)) {
		t.Errorf("TYPE sent %d times for %d keys: the small families' type was not guessed", typ, len(fam))
	}
	checkFamilies(t, rep, types, bytes)
}
