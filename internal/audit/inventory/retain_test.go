package inventory

import (
	"fmt"
	"reflect"
	"testing"
	"time"
	"unsafe"

	"github.com/keyguard/keyguard/registry"
)

// A walker may hand out keys, namespaces and field names that are slices
// of its own large buffers (keyguard rdb does, one buffer per batch of
// records): the Aggregator keeps copies only, so that it never pins a
// walker's buffer. Every string reachable from it after the records lies
// outside the buffer.
func TestAddKeepsNoReferenceToRecordStrings(t *testing.T) {
	reg, err := registry.Load("testdata/keyguard.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a := New(reg, Options{MaxFindings: 5, TopKeys: 5, HotKeys: 5})
	var buf []byte
	type span struct{ lo, hi int }
	var keys, nss, fields []span
	put := func(s string) span {
		lo := len(buf)
		buf = append(buf, s...)
		return span{lo, len(buf)}
	}
	for i := range 400 {
		keys = append(keys, put([]string{
			fmt.Sprintf("order:order:%d:base", i), fmt.Sprintf("order:order:1381234%04d:base", i),
			fmt.Sprintf("cache:product:detail:p %d", i), fmt.Sprintf("legacy_cart_%d_items", i),
			fmt.Sprintf("Legacy:Family%d:x", i%7), fmt.Sprintf("promo:order:%d:promo-info", i),
		}[i%6]))
		nss = append(nss, put(fmt.Sprintf("svc-%d", i%3)))
		fields = append(fields, put(fmt.Sprintf("field%d", i%5)))
	}
	str := func(s span) string { return unsafe.String(&buf[s.lo], s.hi-s.lo) }
	for i, k := range keys {
		r := &Record{
			Key: str(k), Node: "n", Type: []string{"string", "hash"}[i%2], Bytes: int64(100 + i%37),
			Elements: 3, TTL: []time.Duration{-1, time.Hour, 400 * 24 * time.Hour}[i%3], Freq: i % 200,
			NS: str(nss[i]), HasNS: true, NSProbed: true,
		}
		cl := a.Classify(r.Key)
		if cl.Fields {
			r.Fields = []string{str(fields[i]), str(fields[(i+1)%len(fields)])}
		}
		a.Add(r, cl)
	}
	lo, hi := uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&buf[0]))+uintptr(len(buf))
	seen := map[uintptr]bool{}
	var walk func(v reflect.Value, path string)
	walk = func(v reflect.Value, path string) {
		switch v.Kind() {
		case reflect.String:
			if v.Len() > 0 {
				if p := uintptr(unsafe.Pointer(unsafe.StringData(v.String()))); p >= lo && p < hi {
					t.Errorf("%s = %q points into the walker's buffer", path, v.String())
				}
			}
		case reflect.Pointer:
			if v.IsNil() || seen[v.Pointer()] {
				return
			}
			seen[v.Pointer()] = true
			walk(v.Elem(), path)
		case reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem(), path)
			}
		case reflect.Struct:
			for i := range v.NumField() {
				walk(v.Field(i), path+"."+v.Type().Field(i).Name)
			}
		case reflect.Slice, reflect.Array:
			for i := range v.Len() {
				walk(v.Index(i), path+"[]")
			}
		case reflect.Map:
			for it := v.MapRange(); it.Next(); {
				walk(it.Key(), path+"{key}")
				walk(it.Value(), path+"{}")
			}
		}
	}
	walk(reflect.ValueOf(a), "Aggregator")
	if len(seen) < 10 {
		t.Fatalf("walked only %d pointers", len(seen))
	}
}
