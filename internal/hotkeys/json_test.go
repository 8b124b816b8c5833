package hotkeys

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/jsonout"
)

// encoded is the report as encoding/json writes it whole: what WriteJSON
// must write.
func encoded(t testing.TB, r *Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := jsonout.Write(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func streamed(t testing.TB, r *Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestWriteJSONAsEncoded(t *testing.T) {
	db := func(n int) *int { return &n }
	keys := []KeyHeat{
		{Key: "promo:sku:1001", Template: "promo:sku:{id}", Owner: "promo", Rate: 1234.5, Freq: -1},
		{Key: "bad\xff<&>\u2028\"\\\n\t\x01key", DB: db(3), Template: "unregistered", Family: "bad{x}", Freq: 255, Node: "127.0.0.1:7000", IsHot: true},
		{Key: "k", Template: "t", Region: "eu", Hot: &HotPolicy{}, Rate: 1e-7, MonitorRate: 3e21, Freq: 0},
		{Key: "k2", Template: "t", Hot: &HotPolicy{Replicas: 2}, Rate: 0.1, Instances: 3, Services: []string{"checkout", "cart<2>"}},
		{Key: "k3", Template: "t", Hot: &HotPolicy{LocalTTL: "5s"}, Rate: 1e21, MonitorRate: 123456789.125, Services: []string{}},
		{Key: "k4", DB: db(0), Template: "t", Owner: "team \"a\"", Hot: &HotPolicy{Replicas: 1, LocalTTL: "1m"}, Rate: 2.5e-9, MonitorRate: 999999999999999999999, Freq: 100, Node: "n", IsHot: true},
		{Key: "", Template: ""},
	}
	for i := range 300 { // runs of one family and node, then a change
		k := KeyHeat{Key: "cache:p:" + strings.Repeat("x", i%17), Template: "unregistered", Family: "cache:p:{s}", Freq: i % 256, Node: "a", Rate: float64(i) / 7}
		if i%50 == 0 {
			k.Family, k.Node = "other", "b"
		}
		keys = append(keys, k)
	}
	full := &Report{
		Target: "redis://10.0.0.1:6379", GeneratedAt: time.Date(2026, 12, 4, 13, 0, 0, 123, time.UTC), Window: "10m0s",
		MinRate: 1000, MinFreq: 100, SDK: SDKSource{Instances: 2, Services: []string{"a", "b"}},
		LFU:  &LFUResult{Floor: 10, Notes: []string{"a note"}},
		Keys: keys, Templates: []TemplateHeat{{Template: "t", Keys: 3, Regions: []RegionHeat{{Region: "eu", Keys: 1}}}},
		Findings: []finding.Finding{
			{Rule: "hot-key", Severity: finding.Warning, Key: "k<1>", Message: "hot", Hint: "add hot:"},
			{Rule: "hot-key", Severity: finding.Info, Key: "k2"},
			{Rule: "hot-key", Severity: finding.Warning, Key: "bad\xff\"key\u2028", Template: "t:{id}", Owner: "team <a>", Message: "hot key (db 3): LFU counter 200", Hint: "add hot: to t:{id}"},
			{Rule: "hot-key", Severity: finding.Warning, Key: "k3", Template: "t:{id}", Owner: "team <a>", Message: "hot key (db 3): LFU counter 200", Hint: "add hot: to t:{id}"},
		},
		NoRegistry: true,
	}
	for name, r := range map[string]*Report{
		"full":  full,
		"empty": {Target: "t", Keys: []KeyHeat{}, Templates: []TemplateHeat{}, Findings: []finding.Finding{}},
		"nil":   {Target: "t"},
		"one":   {Target: "t", Keys: keys[:1], Monitor: &MonitorResult{}},
	} {
		if got, want := streamed(t, r), encoded(t, r); got != want {
			t.Errorf("%s: WriteJSON differs from encoding/json:\n%s", name, firstDiff(got, want))
		}
	}
}

// firstDiff shows where two documents part.
func firstDiff(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	from := max(0, i-120)
	return "got:  ..." + got[from:min(len(got), i+80)] + "\nwant: ..." + want[from:min(len(want), i+80)]
}

func FuzzKeyHeatAsEncoded(f *testing.F) {
	f.Add("promo:sku:1", "t", "fam", "own", "eu", 1.5, 2.5, 3, 1, "5s", "svc", true, int64(-1))
	f.Add("\xff\x00<>&\u2029", "", "", "", "", 1e-300, 1e300, -1, 0, "", "", false, int64(7))
	f.Fuzz(func(t *testing.T, key, tmpl, fam, owner, region string, rate, mon float64, freq, replicas int, ttl, svc string, hot bool, db int64) {
		if math.IsNaN(rate) || math.IsInf(rate, 0) || math.IsNaN(mon) || math.IsInf(mon, 0) {
			t.Skip("encoding/json refuses these")
		}
		k := KeyHeat{Key: key, Template: tmpl, Family: fam, Owner: owner, Region: region, Rate: rate, MonitorRate: mon, Freq: freq, Node: svc, IsHot: hot}
		if db >= 0 {
			d := int(db)
			k.DB = &d
		}
		if replicas != 0 || ttl != "" {
			k.Hot = &HotPolicy{Replicas: replicas, LocalTTL: ttl}
		}
		if svc != "" {
			k.Services = []string{svc, ttl}
		}
		r := &Report{Keys: []KeyHeat{k, k}}
		if got, want := streamed(t, r), encoded(t, r); got != want {
			t.Fatalf("WriteJSON differs from encoding/json:\n%s", firstDiff(got, want))
		}
	})
}
