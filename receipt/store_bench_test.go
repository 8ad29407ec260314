package receipt_test

import (
	"sync"
	"testing"
)

// BenchmarkRawMap is the baseline of BenchmarkMemStore: a map guarded by
// a mutex, "put" storing a copy of a 1 KiB value under a new key and
// "get" returning a copy of one, as MemStore copies what it keeps and
// returns. The ratio of the two is the cost of records, expiry and checks.
func BenchmarkRawMap(b *testing.B) {
	var (
		mu sync.Mutex
		m  = map[int][]byte{}
	)
	value := make([]byte, 1024)
	b.Run("put", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			mu.Lock()
			m[i] = append([]byte(nil), value...)
			mu.Unlock()
			i++
		}
	})
	b.Run("get", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			mu.Lock()
			v := append([]byte(nil), m[0]...)
			mu.Unlock()
			if len(v) != len(value) {
				b.Fatalf("got %d bytes, want %d", len(v), len(value))
			}
		}
	})
}
