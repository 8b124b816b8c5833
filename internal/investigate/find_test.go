package investigate

import "testing"

func TestHasSegment(t *testing.T) {
	for _, tt := range []struct {
		key  string
		want bool
	}{
		{"promo:sku:1001", true},
		{"1001:x", true},
		{"{order:1001}:items", true},
		{"order:order:1001:base", true},
		{"promo:sku:10012", false},
		{"promo:sku:21001", false},
		{"promo:sku:u1001", false},
		{"x:21001:1001", true},
	} {
		if got := hasSegment(tt.key, "1001", ':'); got != tt.want {
			t.Errorf("hasSegment(%q) = %v, want %v", tt.key, got, tt.want)
		}
	}
}
