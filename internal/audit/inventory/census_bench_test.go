package inventory

import "testing"

// BenchmarkCensusAdd is the census's cost per value: a hash of eight
// typical field names, counted under its set.
func BenchmarkCensusAdd(b *testing.B) {
	names := []string{"orderId", "userId", "amount", "status", "createdAt", "updatedAt", "discountValue", "__ns__"}
	var c census
	var sets FieldSets
	b.ReportAllocs()
	for b.Loop() {
		c.add(sets.Of(names), "order:order:1:base", 0, 100, 0)
	}
}

func BenchmarkFieldSetHash(b *testing.B) {
	names := []string{"orderId", "userId", "amount", "status", "createdAt", "updatedAt", "discountValue", "__ns__"}
	for b.Loop() {
		fieldSetHash(names)
	}
}
