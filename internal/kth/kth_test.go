package kth_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/agentmem/memory/internal/kth"
)

// TestPush checks, over random streams with many repeats, that the heap
// holds exactly the k greatest values offered and that its root is the
// k-th greatest, after every offer.
func TestPush(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for round := range 300 {
		k := 1 + rnd.IntN(20)
		var h []float64
		var all []float64
		for range rnd.IntN(200) {
			v := float64(rnd.IntN(30))
			h = kth.Push(h, k, v)
			all = append(all, v)
			want := slices.Clone(all)
			slices.Sort(want)
			slices.Reverse(want)
			want = want[:min(k, len(want))]
			got := slices.Clone(h)
			slices.Sort(got)
			slices.Reverse(got)
			if !slices.Equal(got, want) {
				t.Fatalf("round %d, k %d: heap holds %v, want the greatest %v", round, k, got, want)
			}
			if len(h) == k && h[0] != want[k-1] {
				t.Fatalf("round %d, k %d: root %v, want the k-th greatest %v", round, k, h[0], want[k-1])
			}
		}
	}
}

func ExamplePush() {
	var best []int
	for _, v := range []int{5, 1, 9, 3, 7, 9} {
		best = kth.Push(best, 3, v)
	}
	fmt.Println("the third greatest:", best[0])
	// Output: the third greatest: 7
}
