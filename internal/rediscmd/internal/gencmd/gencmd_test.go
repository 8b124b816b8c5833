package gencmd

import (
	"bytes"
	"strings"
	"testing"
)

// entry is a COMMAND INFO entry shaped like the server's RESP2 reply.
func entry(name string, flags []any, specs []any, subs []any) []any {
	return []any{name, int64(-2), flags, int64(1), int64(1), int64(1),
		[]any{"@read"}, []any{}, specs, subs}
}

func TestParseAndRender(t *testing.T) {
	spec := []any{ // RESP2 flat pairs
		"flags", []any{"RO", "access"},
		"begin_search", []any{"type", "index", "spec", []any{"index", int64(1)}},
		"find_keys", []any{"type", "range", "spec", []any{"lastkey", int64(0), "keystep", int64(1), "limit", int64(0)}},
	}
	spec3 := map[any]any{ // RESP3 map
		"flags":        []any{"OW", "update"},
		"begin_search": map[any]any{"type": "keyword", "spec": map[any]any{"keyword": "STORE", "startfrom": int64(2)}},
		"find_keys":    map[any]any{"type": "keynum", "spec": map[any]any{"keynumidx": int64(0), "firstkey": int64(1), "keystep": int64(1)}},
	}
	c, err := parseCmd(entry("GET", []any{"readonly"}, []any{spec, spec3}, []any{}), "")
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "get" || len(c.KeySpecs) != 2 || c.KeySpecs[1].Keyword != "STORE" || c.KeySpecs[1].FirstKey != 1 {
		t.Fatalf("parsed %+v", c)
	}
	src, err := Render(&Snapshot{Version: "7.0.0", Commands: []Cmd{c}})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(src, []byte(Header+"\n")) || !bytes.Contains(src, []byte(`const ServerVersion = "7.0.0"`)) {
		t.Fatalf("rendered:\n%s", src)
	}
	again, _ := Render(&Snapshot{Version: "7.0.0", Commands: []Cmd{c}})
	if !bytes.Equal(src, again) {
		t.Fatal("Render is not deterministic")
	}
}

func TestRenderRefusesUnknowns(t *testing.T) {
	for _, tt := range []struct {
		name string
		cmd  Cmd
		want string
	}{
		{"flag", Cmd{Name: "x", Flags: []string{"new_flag"}}, `unknown command flag "new_flag"`},
		{"category", Cmd{Name: "x", ACL: []string{"@new"}}, `unknown ACL category "@new"`},
		{"incomplete spec without extractor", Cmd{Name: "x", KeySpecs: []Spec{{Flags: []string{"RW", "incomplete"}, BeginType: "index", FindType: "range", KeyStep: 1}}}, "no extractor"},
		{"too many specs", Cmd{Name: "x", KeySpecs: make([]Spec, MaxKeySpecs+1)}, "key specs"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Render(&Snapshot{Version: "7", Commands: []Cmd{tt.cmd}})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, v := range []any{
		"not an array",
		[]any{"get"},
		entry("get", []any{"readonly"}, []any{[]any{"flags"}}, []any{}),
		entry("client", []any{}, []any{}, []any{entry("other|x", []any{}, []any{}, []any{})}),
	} {
		if _, err := parseCmd(v, ""); err == nil {
			t.Errorf("parseCmd(%v): no error", v)
		}
	}
}

func TestCheckWantsTheExtractorCommands(t *testing.T) {
	err := Check(&Snapshot{Commands: []Cmd{{Name: "get"}}})
	if err == nil || !strings.Contains(err.Error(), "sort") {
		t.Fatalf("Check = %v, want it to name the missing commands", err)
	}
}
