package inventory_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/keyguard/keyguard/internal/audit/inventory"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/naming"
	"github.com/keyguard/keyguard/registry"
)

// Suggested entries load, never overlap a registered template and keep
// personal data behind :hash.
func TestSuggestedEntriesAreSafe(t *testing.T) {
	reg, err := registry.Parse("r.yaml", []byte(`version: 1
domains:
  legacy: {owner: legacy-team}
  rate: {owner: auth-team}
keys:
  - {key: "legacy:item:42", type: string, persistent: true}
`))
	if err != nil {
		t.Fatal(err)
	}
	agg := inventory.New(reg, inventory.Options{})
	for _, k := range []string{"legacy:item:1", "legacy:item:2", "legacy:item:3", "rate:login:13812345678", "rate:login:13912345678"} {
		add(agg, rec(k, typ("string"), ttl(-1)))
	}
	rep := agg.Report(meta())
	got := map[string]string{}
	for _, g := range rep.Groups {
		if g.Suggested != "" {
			got[g.Name] = g.Suggested
		}
	}
	legacy := got["legacy:item:{id:int}"]
	if !strings.Contains(legacy, `- key: "legacy:item:`) || strings.Contains(legacy, `- key: "legacy:item:{id:int}"`) || !strings.Contains(legacy, "would overlap legacy:item:42") {
		t.Errorf("the legacy family's entry overlaps the registered key or does not say why it was narrowed:\n%s", legacy)
	}
	rate := got["rate:login:{phone:hash}"]
	if !strings.Contains(rate, `- key: "rate:login:{phone:hash}"`) || !strings.Contains(rate, "hold a phone number in clear") || strings.Contains(rate, "13812345678") {
		t.Errorf("the phone family's entry does not hash the phone number:\n%s", rate)
	}
	for name, s := range got {
		snippet := "version: 1\ndomains:\n  legacy: {owner: legacy-team}\n  rate: {owner: auth-team}\nkeys:\n  - {key: \"legacy:item:42\", type: string, persistent: true}\n" + s
		r2, err := registry.Parse("s.yaml", []byte(snippet))
		if err != nil {
			t.Errorf("%s: the suggested entry does not load: %v\n%s", name, err, s)
			continue
		}
		if len(r2.Overlaps()) > 0 {
			t.Errorf("%s: the suggested entry overlaps: %+v", name, r2.Overlaps())
		}
	}
}

// The same key name in two databases is two keys: counted, grouped and
// reported once per database, with the database named.
func TestSameKeyInTwoDatabases(t *testing.T) {
	reg := loadReg(t)
	agg := inventory.New(reg, inventory.Options{})
	for _, db := range []int{0, 3} {
		r := rec("order:order:1:base", ttl(-1), size(100, 2))
		r.DB = db
		add(agg, r)
		u := rec("legacy_token_1", typ("string"), ttl(-1))
		u.DB = db
		add(agg, u)
	}
	rep := agg.Report(meta())
	if rep.Summary.Keys != 4 || len(rep.Databases) != 2 {
		t.Fatalf("%d keys, databases %v", rep.Summary.Keys, rep.Databases)
	}
	dbs := map[string][]int{}
	for _, f := range rep.Findings {
		if f.DB == nil {
			t.Fatalf("finding without db in a multi-database report: %+v", f)
		}
		dbs[f.Rule+" "+f.Key] = append(dbs[f.Rule+" "+f.Key], *f.DB)
	}
	if got := dbs["no-ttl order:order:1:base"]; len(got) != 2 || got[0] == got[1] {
		t.Errorf("no-ttl of order:order:1:base in databases %v, want 0 and 3", got)
	}
	groups := map[string]int{}
	for _, g := range rep.Groups {
		if g.DB == nil {
			t.Fatalf("group without db: %+v", g)
		}
		groups[g.Name]++
	}
	if groups["order:order:{orderId:int}:base"] != 2 {
		t.Errorf("groups %v: want the template once per database", groups)
	}
	if len(rep.TopKeys) != 4 || rep.TopKeys[0].DB == nil {
		t.Errorf("top keys %+v", rep.TopKeys)
	}
	// One database, not 0: still named.
	one := inventory.New(reg, inventory.Options{})
	r := rec("order:order:1:base")
	r.DB = 5
	add(one, r)
	if rep := one.Report(meta()); len(rep.Groups) != 1 || rep.Groups[0].DB == nil || *rep.Groups[0].DB != 5 {
		t.Errorf("a report of database 5 alone does not name it: %+v", rep.Groups)
	}
}

// A family's suggested entry names the fields its values hold.
func TestSuggestedEntryHasFields(t *testing.T) {
	reg := loadReg(t)
	agg := inventory.New(reg, inventory.Options{})
	for i := range 50 {
		add(agg, rec("legacy_cart_"+strings.Repeat("x", i%3)+"_items", typ("hash"), fields("items", "total", "u1001")))
	}
	rep := agg.Report(meta())
	for _, g := range rep.Groups {
		if strings.HasPrefix(g.Name, "legacy_cart") && g.Suggested != "" {
			if !strings.Contains(g.Suggested, `fields: ["items", "total"]`) || !strings.Contains(g.Suggested, "fields_extra: allow") {
				t.Errorf("suggested entry without the fields seen:\n%s", g.Suggested)
			}
			if _, err := registry.Parse("s.yaml", []byte("version: 1\nkeys:\n"+g.Suggested)); err != nil && !strings.Contains(err.Error(), "FILL-IN") {
				t.Errorf("the entry does not load: %v", err)
			}
			return
		}
	}
	t.Errorf("no suggested entry for the family: %+v", rep.Groups)
}

// Families generalize e-mail addresses, phone numbers and numbers glued
// to words: one family each, no personal datum in any name, example or
// suggestion, and the suggestions pasted together lint clean.
func TestFamiliesGeneralize(t *testing.T) {
	reg, err := registry.Parse("r.yaml", []byte("version: 1\ndomains:\n  sess: {owner: auth-team}\nkeys: []\n"))
	if err != nil {
		t.Fatal(err)
	}
	agg := inventory.New(reg, inventory.Options{})
	var keys []string
	for i := range 50 {
		keys = append(keys, fmt.Sprintf("sess:user:user%d@example.com", i), fmt.Sprintf("sess:tel:1391234%04d", i*37),
			fmt.Sprintf("sess:tok:%x", i*7919+1_000_000_000))
	}
	for i := range 100 {
		keys = append(keys, fmt.Sprintf("zadd%d", i))
	}
	keys = append(keys, "zadd{n}", "sess:tok:12345", "sess:tok:67890") // {id:int} beside {token}: overlapping families
	for _, k := range keys {
		add(agg, rec(k, typ("string"), ttl(-1)))
	}
	rep := agg.Report(meta())
	names := map[string]bool{}
	var all strings.Builder
	all.WriteString("version: 1\ndomains:\n  sess: {owner: auth-team}\nkeys:\n")
	for _, g := range rep.Groups {
		names[g.Name] = true
		all.WriteString(g.Suggested)
		for _, s := range []string{g.Name, g.Example, g.Suggested} {
			if what, pii := naming.FindPII(s); pii {
				t.Errorf("group %s keeps a %s: %q", g.Name, what, s)
			}
		}
	}
	for _, want := range []string{"sess:user:{email:hash}", "sess:tel:{phone:hash}", "zadd{n:int}", "sess:tok:{id:int}"} {
		if !names[want] {
			t.Errorf("no family %s among %v", want, names)
		}
	}
	for _, g := range rep.Groups {
		if g.Name == "sess:tok:{id:int}" && g.Suggested != "" {
			t.Errorf("sess:tok:{id:int} suggested beside sess:tok:{token}, which covers its keys")
		}
	}
	if len(rep.Groups) > 6 {
		t.Errorf("%d groups, want at most 6: %v", len(rep.Groups), names)
	}
	// Findings name their keys; the groups of the state merge and resume
	// carry keep no example holding a datum.
	for _, g := range rep.State.Groups {
		if what, pii := naming.FindPII(string(g.Example)); pii {
			t.Errorf("the state's group %s keeps a %s in its example", g.Name, what)
		}
	}
	r2, err := registry.Parse("all.yaml", []byte(all.String()))
	if err != nil {
		t.Fatalf("the suggestions together do not load: %v\n%s", err, all.String())
	}
	if len(r2.Entries) < 4 {
		t.Errorf("%d suggested entries, want one per family:\n%s", len(r2.Entries), all.String())
	}
	if ov := r2.Overlaps(); len(ov) > 0 {
		t.Errorf("the suggestions overlap: %+v\n%s", ov, all.String())
	}
}

// A family whose keys all start with one value that inference turned
// into a placeholder (shop3:order:N gives shop{n:int}:order:{id:int}) is
// suggested with that value as its domain: a template starting with a
// placeholder fails lint's domain rule, and keyguard init wrote such
// entries. Keys of two such values (shop3, shop4) keep the placeholder.
// The first segment survives two aggregators' merge and a report's
// state (merge, resume).
func TestSuggestedEntryKeepsConstantDomain(t *testing.T) {
	reg, err := registry.Parse("r.yaml", []byte("version: 1\nkeys: []\n"))
	if err != nil {
		t.Fatal(err)
	}
	entry := func(rep *report.Report, family string) string {
		for _, g := range rep.Groups {
			if g.Name == family {
				return g.Suggested
			}
		}
		t.Fatalf("no group %s in %v", family, rep.Groups)
		return ""
	}
	one, two := inventory.New(reg, inventory.Options{}), inventory.New(reg, inventory.Options{})
	for i := range 40 {
		add([]*inventory.Aggregator{one, two}[i%2], rec(fmt.Sprintf("shop3:order:%d", i), typ("string"), ttl(-1)))
		add([]*inventory.Aggregator{one, two}[i%2], rec(fmt.Sprintf("app%d:user:%d", 3+i%2, i), typ("string"), ttl(-1)))
		add(one, rec(fmt.Sprintf("shop%d:cart:%d", 5+i/39, i), typ("string"), ttl(-1))) // shop6 once, at the end
		add(one, rec(fmt.Sprintf("zone1:x:%d", i), typ("string"), ttl(-1)))             // one first segment here,
		add(two, rec(fmt.Sprintf("zone%d:x:%d", 1+i%2, i), typ("string"), ttl(-1)))     // two in the aggregator merged in
	}
	one.Merge(two)
	rep := one.Report(meta())
	shop := entry(rep, "shop{n:int}:order:{id:int}")
	if !strings.Contains(shop, `- key: "shop3:order:{id:int}"`) || !strings.Contains(shop, `every key starts with "shop3"`) {
		t.Errorf("shop3's entry does not keep its domain:\n%s", shop)
	}
	for _, family := range []string{"app{n:int}:user:{id:int}", "shop{n:int}:cart:{id:int}", "zone{n:int}:x:{id:int}"} {
		if s := entry(rep, family); strings.Contains(s, "every key starts with") || !strings.Contains(s, `- key: "`+family+`"`) ||
			!strings.Contains(s, "start with more than one value") {
			t.Errorf("%s: two first segments, entry narrowed or not saying why lint will refuse it:\n%s", family, s)
		}
	}
	// Filled in, the shop3 entry lints clean and matches every key.
	filled := strings.NewReplacer("owner: FILL-IN", "owner: shop-team", "FILL-IN: ", "").Replace(shop)
	r2, err := registry.Parse("s.yaml", []byte("version: 1\ndomains: {shop3: {owner: shop-team}}\nkeys:\n"+filled))
	if err != nil {
		t.Fatalf("the entry does not load: %v\n%s", err, filled)
	}
	for _, f := range r2.Lint() {
		if f.Rule == "domain" {
			t.Errorf("lint: %+v", f)
		}
	}
	if e := r2.Lookup("shop3:order:17"); e == nil {
		t.Error("shop3:order:17 matches no entry")
	}
	// Through the report's state, as merge and --resume read it.
	back, err := inventory.FromReport(reg, rep)
	if err != nil {
		t.Fatal(err)
	}
	again := back.Report(meta())
	if s := entry(again, "shop{n:int}:order:{id:int}"); s != shop {
		t.Errorf("after the state: %s\nwant %s", s, shop)
	}
	for _, family := range []string{"app{n:int}:user:{id:int}", "zone{n:int}:x:{id:int}"} {
		if s := entry(again, family); strings.Contains(s, "every key starts with") {
			t.Errorf("after the state, %s narrowed:\n%s", family, s)
		}
	}
}
