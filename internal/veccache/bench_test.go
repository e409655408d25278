package veccache

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/internal/rowcodec"
)

// benchCache returns a cache of n records of dims dimensions, of one
// writer, each with a speaker, as a conversation's turns are.
func benchCache(n, dims int) *Cache {
	rnd := rand.New(rand.NewPCG(1, 2))
	c := &Cache{}
	w := memory.Identity{Tenant: "t", User: "u", Session: "s"}
	c.Reserve(w, dims, n)
	vec := make([]float32, dims)
	for i := range n {
		for j := range vec {
			vec[j] = rnd.Float32()*2 - 1
		}
		c.Put(w, Row{Fields: rowcodec.Fields{ID: fmt.Sprintf("rec-%08d", i), Kind: memory.KindFact, Speaker: "Caroline", Created: int64(i) * 1e9}}, vec)
	}
	return c
}

// BenchmarkDecode100k measures decoding the snapshot of 100,000 vectors,
// whole, as a new process's first search does.
func BenchmarkDecode100k(b *testing.B) {
	for _, dims := range []int{64, 384} {
		b.Run(fmt.Sprintf("dims=%d", dims), func(b *testing.B) {
			data := benchCache(100_000, dims).Encode(nil)
			b.SetBytes(int64(len(data)))
			b.ResetTimer()
			for range b.N {
				if _, err := Decode(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
