package report_test

import (
	"bytes"
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/keyguard/keyguard/finding"
	"github.com/keyguard/keyguard/internal/audit/report"
)

// encodedFinding is f as an element of the findings array, the way
// encoding/json writes it with WriteJSON's settings.
func encodedFinding(t testing.TB, f *report.Finding) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("    ", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(f); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func findingCases() []report.Finding {
	return []report.Finding{
		{Finding: finding.Finding{Rule: "no-ttl", Severity: finding.Warning, Message: "m"}},
		{Finding: finding.Finding{Rule: "pii", Severity: finding.Error, Key: "user:13800138000", Template: "user:{id}", Owner: "team-a",
			Message: "looks like a phone", Hint: "hash it", File: "keyguard.yaml", Line: 12, Column: 5}, KeyLen: 2048},
		{Finding: finding.Finding{Rule: "naming/charset", Severity: finding.Severity(7), Key: "k\xff\x00\x1f\"\\\b\f\n\r\t\u2028\u2029<&>é漢", Message: "\x7f\u2027",
			Line: -3}, KeyBase64: "a2V5", Bytes: -1, DB: new(int)},
		{Finding: finding.Finding{Rule: "", Severity: finding.Info, Key: "\xed\xa0\x80 \xf4\x90\x80\x80 \xc0\xaf", Message: ""}},
	}
}

func TestAppendFindingAsEncoded(t *testing.T) {
	for i, f := range findingCases() {
		want := encodedFinding(t, &f)
		if got := string(report.AppendFindingJSON(nil, &f)); got != want {
			t.Errorf("case %d:\n got %q\nwant %q", i, got, want)
		}
	}
}

// TestFindingEncoderCache: the encoder that keeps the last strings'
// encodings gives every finding of a sequence its own bytes, whether its
// strings repeat the last finding's, equal them in another copy, are
// empty or differ.
func TestFindingEncoderCache(t *testing.T) {
	cases := findingCases()
	var seq []report.Finding
	for _, i := range []int{0, 1, 1, 2, 1, 3, 0, 0, 2, 1} {
		seq = append(seq, cases[i])
	}
	copied := cases[1]
	copied.Message = strings.Clone(copied.Message)
	copied.Hint = strings.Clone(copied.Hint) + "!"
	seq = append(seq, copied, cases[1], copied)
	for i, got := range report.AppendFindingsJSON(seq) {
		if want := encodedFinding(t, &seq[i]); got != want {
			t.Errorf("finding %d:\n got %q\nwant %q", i, got, want)
		}
	}
}

func FuzzAppendFindingAsEncoded(f *testing.F) {
	for _, c := range findingCases() {
		f.Add(c.Rule, c.Key, c.Template, c.Message, c.Hint, c.File, c.Line, c.KeyLen, uint8(c.Severity))
	}
	f.Fuzz(func(t *testing.T, rule, key, tmpl, msg, hint, file string, line, keyLen int, sev uint8) {
		c := report.Finding{Finding: finding.Finding{Rule: rule, Severity: finding.Severity(sev), Key: key, Template: tmpl, Owner: hint,
			Message: msg, Hint: hint, File: file, Line: line, Column: keyLen / 3}, KeyBase64: tmpl, KeyLen: keyLen, Bytes: int64(line) * 7, Doc: file}
		if sev%3 == 1 {
			db := keyLen % 16
			c.DB = &db
		}
		if got, want := string(report.AppendFindingJSON(nil, &c)), encodedFinding(t, &c); got != want {
			t.Errorf("\n got %q\nwant %q", got, want)
		}
	})
}

// TestAppendTopKeyAsEncoded: the top keys' encoder writes what
// encoding/json writes, over keys of any bytes, every field present or
// absent, and runs of templates and nodes (its cache).
func TestAppendTopKeyAsEncoded(t *testing.T) {
	ttl, none, db := int64(3600_000), int64(-1), 3
	cases := []report.TopKey{
		{Key: "order:1", Type: "hash", Bytes: 1 << 40, Elements: 9, TTLMS: &ttl, Template: "order:{id:int}", Node: "127.0.0.1:6379"},
		{Key: "k\xff\x00\x1f\"\\\b\f\n\r\t\u2028\u2029<&>é漢", KeyBase64: "a/8=", KeyLen: 4096, Type: "zset", Bytes: -1, Elements: -1, TTLMS: &none, DB: &db},
		{Key: "", Type: "", Bytes: 0, Elements: 0},
		{Key: "order:2", Type: "hash", Bytes: 7, Elements: 1, Template: "order:{id:int}", Node: "127.0.0.1:6379"},
		{Key: "x", Type: "string", Template: strings.Clone("order:{id:int}"), Node: "n\"2"},
	}
	var seq []report.TopKey
	for _, i := range []int{0, 3, 3, 1, 0, 4, 2, 0} {
		seq = append(seq, cases[i])
	}
	for i, got := range report.AppendTopKeysJSON(seq) {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetIndent("    ", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(&seq[i]); err != nil {
			t.Fatal(err)
		}
		if want := strings.TrimSuffix(b.String(), "\n"); got != want {
			t.Errorf("case %d:\n got %q\nwant %q", i, got, want)
		}
	}
}

// The findings array of a large report, encoded in chunks side by side,
// is the array encoding/json writes element by element, in order.
func TestFindingsArrayAsEncoded(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4)) // chunks on several goroutines, whatever the machine
	r := bigReport()
	cases := findingCases()
	for i := range r.Findings {
		if i%97 == 0 { // escapes, empty fields and database numbers here and there
			r.Findings[i] = cases[i%len(cases)]
		}
	}
	var want strings.Builder
	want.WriteString(`"findings": [`)
	for i := range r.Findings {
		if i > 0 {
			want.WriteByte(',')
		}
		want.WriteString("\n    " + encodedFinding(t, &r.Findings[i]))
	}
	want.WriteString("\n  ]")
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), want.String()) {
		got := b.String()[strings.Index(b.String(), `"findings": [`):]
		w := want.String()
		for i := range min(len(got), len(w)) {
			if got[i] != w[i] {
				t.Fatalf("the findings array differs from encoding/json's at byte %d:\n got %.200q\nwant %.200q", i, got[max(i-100, 0):], w[max(i-100, 0):])
			}
		}
		t.Fatal("the findings array differs from encoding/json's in length")
	}
}

// encodedStateHot is h as an element of the state's hot array, the way
// encoding/json writes it with WriteJSON's settings.
func encodedStateHot(t testing.TB, h *report.StateHot) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("      ", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(h); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// awkward are strings a key may be: any bytes, invalid UTF-8, HTML
// characters (which Str escapes and the rest of the report does not),
// control bytes, JSON's own characters, U+2028 and U+2029.
var awkward = []string{
	"", "order:1", "k\xff\x00\x1f\"\\\b\f\n\r\t\u2028\u2029<&>é漢", "<a href=\"x\">&amp;</a>", "\xed\xa0\x80 \xf4\x90\x80\x80 \xc0\xaf",
	"\x7f\u2027", strings.Repeat("<&>", 40), "tail\xe6\xbc", strings.Repeat("x", 1024) + "&",
}

func stateHotCases() []report.StateHot {
	var out []report.StateHot
	for i, k := range awkward {
		out = append(out, report.StateHot{Key: report.Str(k), KeyLen: i * 500 % 1500, Freq: 255 - i, Bytes: int64(i) * 7919,
			Template: report.Str(awkward[(i+2)%len(awkward)]), Owner: awkward[(i+3)%len(awkward)], Kind: awkward[(i+1)%len(awkward)],
			Protected: i%2 == 1, Node: awkward[(i+5)%len(awkward)], DB: i % 3})
	}
	return out
}

func TestAppendStateHotAsEncoded(t *testing.T) {
	for i, h := range stateHotCases() {
		if got, want := string(report.AppendStateHotJSON(nil, &h)), encodedStateHot(t, &h); got != want {
			t.Errorf("case %d:\n got %q\nwant %q", i, got, want)
		}
	}
}

func FuzzAppendStateHotAsEncoded(f *testing.F) {
	for _, h := range stateHotCases() {
		f.Add(string(h.Key), string(h.Template), h.Owner, h.Kind, h.Node, h.KeyLen, h.Freq, h.Bytes, h.DB, h.Protected)
	}
	f.Fuzz(func(t *testing.T, key, tmpl, owner, kind, node string, keyLen, freq int, bytes int64, db int, protected bool) {
		h := report.StateHot{Key: report.Str(key), KeyLen: keyLen, Freq: freq, Bytes: bytes, Template: report.Str(tmpl), Owner: owner,
			Kind: kind, Protected: protected, Node: node, DB: db}
		if got, want := string(report.AppendStateHotJSON(nil, &h)), encodedStateHot(t, &h); got != want {
			t.Errorf("\n got %q\nwant %q", got, want)
		}
	})
}

// TestWriteJSONAsEncoded: the whole report, written field by field with
// its own encoders for the long lists, is what encoding/json writes for
// it, with a state whose every field is present (or absent) and whose
// hot-key candidates, top keys and findings hold awkward keys.
func TestWriteJSONAsEncoded(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, full := range []bool{true, false} {
		r := bigReport()
		ttl, db := int64(-1), 3
		for i, k := range awkward {
			r.TopKeys = append(r.TopKeys, report.TopKey{Key: k, KeyBase64: report.KeyBase64(k), Type: "hash", Bytes: int64(i), TTLMS: &ttl, DB: &db})
		}
		st := &report.State{Version: report.StateVersion, Options: report.StateOptions{TopKeys: 50, HotKeys: 100000, HotFreqFloor: 32}}
		if full {
			st.TTLHistogram = [][2]int64{{1, 2}, {3, 4}}
			for _, k := range awkward {
				st.Groups = append(st.Groups, report.StateGroup{Kind: report.KindPrefix, Name: report.Str(k), Types: []int64{1, 0}, Example: report.Str(k),
					TTL: report.StateTTL{N: 2, Buckets: [][2]int64{{1, 2}}}})
				st.Fields = append(st.Fields, report.StateFields{Kind: report.KindTemplate, Name: report.Str(k), Sets: []report.StateSet{{Names: []string{k}, Count: 1,
					Keys: []report.StateSample{{Key: report.Str(k), Bytes: 3}}}}})
				st.PII = append(st.PII, report.StatePII{Kind: report.KindTemplate, Name: report.Str(k), Slots: []report.StatePIISlot{{Name: k,
					Keys: []report.StatePIIKey{{Key: report.Str(k), Masked: k, Group: report.Str(k)}}}}})
			}
			for range 3000 { // more than one of the writer's chunks
				st.Hot = append(st.Hot, stateHotCases()...)
			}
			st.PIILost, st.RunIDs = 7, map[string]string{"<a>": "\xff", "b": "c"}
		}
		r.State = st
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := r.WriteJSON(&got); err != nil {
			t.Fatal(err)
		}
		if g, w := got.String(), want.String(); g != w {
			for i := range min(len(g), len(w)) {
				if g[i] != w[i] {
					t.Fatalf("full %v: differs from encoding/json's at byte %d:\n got %.300q\nwant %.300q", full, i, g[max(i-100, 0):], w[max(i-100, 0):])
				}
			}
			t.Fatalf("full %v: differs from encoding/json's in length: %d against %d", full, len(g), len(w))
		}
	}
}
