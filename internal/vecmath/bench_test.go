package vecmath

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

func BenchmarkDot(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, k := range kernels(b) {
		for _, d := range []int{384, 1536} {
			x, y := randVec(r, d, 1), randVec(r, d, 1)
			b.Run(k.name+"/"+strconv.Itoa(d), func(b *testing.B) {
				b.SetBytes(int64(8 * d))
				var s float32
				for b.Loop() {
					s += k.dot(x, y)
				}
				sink = s
			})
		}
	}
}

func BenchmarkDotBatch(b *testing.B) {
	r := rand.New(rand.NewPCG(2, 2))
	const d, rows = 384, 128
	q, m := randVec(r, d, 1), randVec(r, d*rows, 1)
	dst := make([]float32, rows)
	for _, k := range kernels(b) {
		b.Run(k.name, func(b *testing.B) {
			b.SetBytes(4 * d * rows)
			for b.Loop() {
				k.batch(dst, q, m)
			}
		})
	}
}

var sink float32
