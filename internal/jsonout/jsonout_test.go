package jsonout

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestWrite(t *testing.T) {
	var b strings.Builder
	v := map[string]any{"key": "<a&b>", "n": []int{1, 2}}
	if err := Write(&b, v); err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"key\": \"<a&b>\",\n  \"n\": [\n    1,\n    2\n  ]\n}\n"
	if b.String() != want {
		t.Fatalf("got %q, want %q", b.String(), want)
	}
	var back map[string]any
	if err := json.Unmarshal([]byte(b.String()), &back); err != nil || back["key"] != "<a&b>" {
		t.Fatalf("round trip: %v %v", back, err)
	}
}
