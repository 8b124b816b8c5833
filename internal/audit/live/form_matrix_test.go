package live

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/audit/inventory"
	"github.com/keyguard/keyguard/internal/audit/report"
	"github.com/keyguard/keyguard/internal/redistest"
	"github.com/keyguard/keyguard/registry"
)

// formRegistry declares string templates of JSON objects (fields:), one
// per size and rate of foreign values; a template of the same values
// without fields; and a hash template with fields.
func formRegistry(t *testing.T, sizes []int) *registry.Registry {
	t.Helper()
	var b strings.Builder
	b.WriteString("version: 1\ndomains:\n  cache: {owner: cache-team}\nkeys:\n")
	for _, size := range sizes {
		for _, rate := range formRates {
			fmt.Fprintf(&b, "  - {key: \"cache:%s%d:{id:int}\", type: string, ttl: 1h, fields: [id, name, price]}\n", rate.name, size)
		}
	}
	b.WriteString("  - {key: \"cache:most:{id:int}\", type: string, ttl: 1h, fields: [id, name, price], fields_extra: allow}\n")
	b.WriteString("  - {key: \"cache:wide:{id:int}\", type: string, ttl: 1h, fields: [id], fields_extra: allow}\n")
	b.WriteString("  - {key: \"cache:open:{id:int}\", type: string, ttl: 1h}\n")
	b.WriteString("  - {key: \"cache:hash:{id:int}\", type: hash, ttl: 1h, fields: [id, name]}\n")
	reg, err := registry.Parse("forms.yaml", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// formRates are the shares of a template's values a second writer
// stores in its own format.
var formRates = []struct {
	name  string
	count func(size int) int
}{
	{"one", func(int) int { return 1 }},
	{"p1-", func(s int) int { return max(1, s/100) }},
	{"p5-", func(s int) int { return max(1, s*5/100) }},
	{"p30-", func(s int) int { return s * 30 / 100 }},
}

// foreignValue is the i-th foreign value: every form a second writer
// may store, short and long (a long repeated text is LZF-compressed in
// the RDB file).
func foreignValue(i int) string {
	switch i % 9 {
	case 0:
		return fmt.Sprintf("legacy-plain-%d", i)
	case 1:
		return fmt.Sprint(i * 7) // Redis holds it as an integer
	case 2:
		return "\xac\xed\x00\x05t\x00\x03abc"
	case 3:
		return "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
	case 4:
		return fmt.Sprintf("[%d,2,3]", i)
	case 5:
		return fmt.Sprintf("\"%d\"", i)
	case 6:
		return "\x80\x04\x95\x0b\x00\x00\x00\x00\x00\x00\x00"
	case 7:
		return "\x08\x96\x01\x12\x03abc"
	default:
		return strings.Repeat("discount-", 60) + fmt.Sprint(i)
	}
}

// objectValue is the i-th value of the template's own writer: JSON
// objects, one in 7 longer than the live audit's 4 KiB head, and now and
// then the empty and null marks a cache writes for "nothing here".
func objectValue(i int) string {
	switch {
	case i%97 == 3:
		return ""
	case i%89 == 5:
		return "null"
	case i%7 == 2:
		return fmt.Sprintf(`{"id":%d,"name":"%s","price":%d}`, i, strings.Repeat("n", 5000), i%1000)
	}
	return fmt.Sprintf(`{"id":%d,"name":"p%d","price":%d}`, i, i, i%1000)
}

// plantForms writes the templates' values and returns the keys whose
// values are foreign to their template.
func plantForms(t *testing.T, c redis.Cmdable, sizes []int) map[string]bool {
	t.Helper()
	ctx := context.Background()
	want := map[string]bool{}
	p := c.Pipeline()
	flush := func(force bool) {
		if p.Len() >= 2000 || force && p.Len() > 0 {
			if _, err := p.Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	set := func(k, v string, foreign bool) {
		p.Set(ctx, k, v, 0)
		if foreign {
			want[k] = true
		}
		flush(false)
	}
	for _, size := range sizes {
		for _, rate := range formRates {
			n := rate.count(size)
			step := size / n // spread over the template, the first one at the start
			for i := range size {
				foreign := i%step == 0 && i/step < n
				v := objectValue(i)
				if foreign {
					v = foreignValue(i / step)
				}
				set(fmt.Sprintf("cache:%s%d:%d", rate.name, size, i), v, foreign)
			}
		}
	}
	// A template whose values are mostly a second writer's: 1,800 of
	// 2,000 (values without field names do not stop the reads of a
	// template that declares them).
	for i := range 2000 {
		foreign := i%10 != 0
		v := objectValue(i)
		if foreign {
			v = foreignValue(i)
		}
		set(fmt.Sprintf("cache:most:%d", i), v, foreign)
	}
	// An open template whose objects hold 200 different field sets (more
	// than a census tells styles in), with a second writer's value in
	// one key of 10.
	for i := range 2000 {
		foreign := i%10 == 4
		v := fmt.Sprintf(`{"id":%d,"%c%c":1}`, i, 'a'+i%200/26, 'a'+i%26)
		if foreign {
			v = foreignValue(i)
		}
		set(fmt.Sprintf("cache:wide:%d", i), v, foreign)
	}
	// Without declared fields, any mix of forms is the template's own.
	for i := range 300 {
		v := objectValue(i)
		if i%2 == 0 {
			v = foreignValue(i)
		}
		set(fmt.Sprintf("cache:open:%d", i), v, false)
	}
	for i := range 100 {
		p.HSet(ctx, fmt.Sprintf("cache:hash:%d", i), "id", i, "name", "x")
		flush(false)
	}
	flush(true)
	return want
}

// checkForms holds a report's value-format findings to the foreign values
// planted: every one found, nothing else, each naming its form.
func checkForms(t *testing.T, name string, rep *report.Report, want map[string]bool) {
	t.Helper()
	if got := rep.Summary.ByRule["value-format"]; got != int64(len(want)) {
		t.Errorf("%s: %d value-format findings, want the %d foreign values planted", name, got, len(want))
	}
	seen := map[string]bool{}
	var wrong []string
	for _, f := range rep.Findings {
		if f.Rule != "value-format" {
			continue
		}
		seen[f.Key] = true
		switch {
		case !want[f.Key]:
			wrong = append(wrong, "false positive "+f.Key+": "+f.Message)
		case f.Severity != finding.Error || !strings.Contains(f.Message, "not the JSON object the template declares"):
			wrong = append(wrong, f.Key+": "+f.Severity.String()+" "+f.Message)
		}
	}
	var missed []string
	for k := range want {
		if !seen[k] {
			missed = append(missed, k)
		}
	}
	sort.Strings(missed)
	if len(missed) > 0 {
		t.Errorf("%s: %d foreign values not reported, e.g. %s", name, len(missed), missed[:min(5, len(missed))])
	}
	if len(wrong) > 0 {
		t.Errorf("%s: %d wrong findings, e.g. %s", name, len(wrong), wrong[:min(5, len(wrong))])
	}
	for _, f := range rep.Findings {
		if f.Rule == "value-format" && strings.HasPrefix(f.Key, "cache:one20:") && !strings.Contains(f.Message, "holds text") {
			t.Errorf("%s: %s: %s, want its form named (text)", name, f.Key, f.Message)
		}
	}
}

// TestForeignFormMatrix plants, in string templates that declare the
// fields of their JSON objects (20 to 20,000 values), a second writer's
// values of other forms (numbers, text, Java serialization, gzip,
// arrays, pickle, protobuf, long compressible text) in one key, 1%, 5%
// and 30% of the values, in 90% of one template and in 10% of one whose
// objects hold too many field sets to tell styles. Live and from an RDB
// file, every one is a value-format error and nothing else is: not the owner's objects (nor those longer
// than the live audit's 4 KiB head), not its empty and null marks, not a
// template without fields, not a hash.
func TestForeignFormMatrix(t *testing.T) {
	sizes := []int{20, 500, 5000, 20000}
	reg := formRegistry(t, sizes)
	s := redistest.Start(t)
	c := s.Client(t)
	want := plantForms(t, c, sizes)
	ctx := context.Background()
	inv := inventory.Options{MaxFindings: 1_000_000}
	live, err := Run(ctx, reg, standalone(s), Options{Inventory: inv})
	if err != nil {
		t.Fatal(err)
	}
	checkForms(t, "live", live.Report, want)
	checkForms(t, "rdb", dumpReport(t, s, reg, inv), want)

	// Without reading values (--fields=false) nothing is judged.
	off, err := Run(ctx, reg, standalone(s), Options{Inventory: inventory.Options{MaxFindings: 1_000_000, SkipFields: true}})
	if err != nil {
		t.Fatal(err)
	}
	if n := off.Report.Summary.ByRule["value-format"]; n != 0 {
		t.Errorf("--fields=false: %d value-format findings", n)
	}
}

// TestForeignFormCluster: the same on a 3-master Cluster, whose walk
// probes each master's keys.
func TestForeignFormCluster(t *testing.T) {
	sizes := []int{20, 500}
	reg := formRegistry(t, sizes)
	cl := redistest.StartCluster(t, 3)
	want := plantForms(t, cl.Client(t), sizes)
	res, err := Run(context.Background(), reg, clusterTarget(cl), Options{Inventory: inventory.Options{MaxFindings: 1_000_000}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Report.Complete {
		t.Fatalf("cluster audit not complete: %+v", res.Report.Coverage)
	}
	checkForms(t, "cluster", res.Report, want)
}
