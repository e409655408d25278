// Package varinttest feeds varint streams for tests.
package varinttest

import (
	"math/rand/v2"

	"github.com/agentmem/memory/internal/varint"
)

// Feed returns a stream of length n that a goroutine of its own fills
// with data, in pieces of random sizes below maxPiece (empty pieces
// too), and then ends: a stream whose data is shorter than n ends short.
// Every other piece is written in place (Stream.Fill), the rest through
// Stream.Write.
func Feed(rnd *rand.Rand, data []byte, n, maxPiece int) *varint.Stream {
	s := varint.NewStream(make([]byte, n))
	var cuts []int
	for i := 0; i < len(data); {
		k := min(len(data)-i, rnd.IntN(maxPiece))
		cuts = append(cuts, k)
		i += k
	}
	go func() {
		defer s.End()
		for i, k := range cuts {
			var err error
			if i%2 == 0 {
				_, err = s.Write(data[:k])
			} else {
				err = s.Fill(k, func(dst []byte) error {
					copy(dst, data)
					return nil
				})
			}
			if err != nil {
				panic(err)
			}
			data = data[k:]
		}
	}()
	return s
}
