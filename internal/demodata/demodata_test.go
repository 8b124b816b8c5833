package demodata_test

import (
	"testing"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/hotkey"
	"github.com/keyguard/keyguard/internal/demodata"
	"github.com/keyguard/keyguard/registry"
)

// TestHotKeyEntries: the demo registry declares what the hot-key SDK
// writes (the load lock of the hot product template, the report records,
// the invalidation channel and its domain), so the demo's hot-key scene
// runs on the file as it is, and its only lint error is the overlap the
// demo's story is about.
func TestHotKeyEntries(t *testing.T) {
	reg, err := registry.Parse(demodata.File, demodata.Registry)
	if err != nil {
		t.Fatal(err)
	}
	hot := reg.Lookup("cache:product:detail:P1001")
	if hot == nil || hot.Hot == nil {
		t.Fatal("cache:product:detail:P1001 is no hot key of the demo registry")
	}
	if e := reg.EntryByKey(hotkey.LockPrefix + hot.Key); e == nil || e.Owner != hot.Owner || e.TTL == 0 {
		t.Errorf("load lock %s: %+v, want an entry of %s with a TTL", hotkey.LockPrefix+hot.Key, e, hot.Owner)
	}
	for _, key := range []string{hotkey.RecordIndexKey, hotkey.ReportKey("0123456789abcdef"), hotkey.DefaultChannel} {
		if reg.Lookup(key) == nil {
			t.Errorf("%s matches no template of the demo registry", key)
		}
	}
	for _, f := range reg.Lint() {
		if f.Severity == finding.Error && f.Rule != finding.Overlap {
			t.Errorf("line %d: %s %s", f.Line, f.Rule, f.Message)
		}
	}
}
