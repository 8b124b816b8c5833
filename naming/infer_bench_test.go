package naming

import "testing"

// BenchmarkInfer infers the kind of keys an audit finds unregistered.
func BenchmarkInfer(b *testing.B) {
	keys := []string{
		"legacy:cart:1024:items", "tmp_data_20240321150322", "order_info_20240321_8899123:status:new",
		"session:abc123xyz", "rate:login:18812345678", "x:123e4567-e89b-12d3-a456-426614174000",
		"a:1:2:3", "cache:v2:md5", "sess:user:user17@example.com", "zadd17",
	}
	b.ReportAllocs()
	buf := make([]byte, 0, 128)
	for i := 0; b.Loop(); i++ {
		buf = AppendInfer(buf[:0], keys[i%len(keys)], ':')
	}
}
