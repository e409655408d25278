package textcache

import (
	"runtime"
	"sync"
	"testing"

	"github.com/agentmem/memory/backend/backendtest"
)

// bench100k is a cache of the 100,000 facts of backendtest's text data
// set in one scope, built once.
var bench100k = sync.OnceValue(func() *Cache {
	c := New()
	for i := range 100_000 {
		r := backendtest.BenchTextRecord(0, i)
		c.Put(r.Identity, RowOf(r), r.Content)
	}
	return c
})

// BenchmarkEncode100k measures encoding the snapshot of 100,000 facts.
func BenchmarkEncode100k(b *testing.B) {
	c := bench100k()
	var data []byte
	for b.Loop() {
		data = c.Encode(data[:0])
	}
	b.ReportMetric(float64(len(data)), "bytes")
}

// BenchmarkDecode100k measures decoding the snapshot of 100,000 facts.
func BenchmarkDecode100k(b *testing.B) {
	data := bench100k().Encode(nil)
	for b.Loop() {
		b.StopTimer()
		runtime.GC() // as a new process would, decode onto a heap without the last decoded cache
		b.StartTimer()
		if _, err := Decode(data); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(data)), "bytes")
}
