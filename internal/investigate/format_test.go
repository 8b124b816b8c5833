package investigate

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/keyguard/keyguard/internal/redistest"
	"github.com/keyguard/keyguard/registry"
)

// TestValueFormat: a string that is not the JSON object its template
// declares the fields of is a value-format finding, told once in the
// conclusion, as the audits report it; the template's objects, its
// "nothing here" marks and a template without fields are not.
func TestValueFormat(t *testing.T) {
	reg, err := registry.Parse("keyguard.yaml", []byte(`version: 1
domains:
  cache: {owner: cache-team}
keys:
  - {key: "cache:rule:{id:int}", type: string, ttl: 1h, fields: [threshold, discount]}
  - {key: "cache:open:{id:int}", type: string, ttl: 1h}
`))
	if err != nil {
		t.Fatal(err)
	}
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	for k, v := range map[string]string{
		"cache:rule:7": "\xac\xed\x00\x05t\x00\x01x", "cache:rule:8": `{"threshold":100,"discount":20}`, "cache:rule:9": "null",
		"cache:open:7": "legacy-7",
	} {
		c.Set(ctx, k, v, time.Hour)
	}
	rep, err := Run(ctx, reg, c, Options{Target: Target{Match: "cache:*"}, Watch: 600 * time.Millisecond, WatchEvery: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range rep.Findings {
		if f.Rule == "value-format" {
			got = append(got, f.Key+": "+f.Message)
		}
	}
	if len(got) != 1 || !strings.HasPrefix(got[0], "cache:rule:7: the value of `cache:rule:7` is Java serialized data, not the JSON object `cache:rule:{id:int}` declares (fields threshold, discount)") {
		t.Errorf("value-format findings %q", got)
	}
	told := 0
	for _, line := range rep.Conclusion {
		if strings.Contains(line, "is Java serialized data") {
			told++
		}
	}
	if told != 1 {
		t.Errorf("conclusion tells it %d times: %q", told, rep.Conclusion)
	}
}
