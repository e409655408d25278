package vecindex_test

import (
	"cmp"
	"fmt"

	"github.com/agentmem/memory/internal/vecindex"
)

func ExampleSearch() {
	// One Set per group; Refs point at the caller's records.
	alice := vecindex.NewSet(3)
	alice.Add(1, []float32{1, 0, 0})
	alice.Add(2, []float32{0, 1, 0})
	alice.Add(3, []float32{2, 2, 0}) // stored normalised
	bob := vecindex.NewSet(3)
	bob.Add(4, []float32{1, 0, 0})

	// Search Alice's Set only, leaving out Ref 2, with equal scores
	// ordered by Ref descending.
	accept := func(ref vecindex.Ref) bool { return ref != 2 }
	tie := func(a, b vecindex.Ref) int { return cmp.Compare(b, a) }
	hits, err := vecindex.Search([]*vecindex.Set{alice}, []float32{1, 1, 0}, 2, accept, tie)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, h := range hits {
		fmt.Printf("%d %.3f\n", h.Ref, h.Score)
	}

	// Both Sets: Refs 1 and 4 hold the same direction and tie.
	hits, _ = vecindex.Search([]*vecindex.Set{alice, bob}, []float32{5, 0, 0}, 2, nil, tie)
	fmt.Println(hits[0].Ref, hits[1].Ref, hits[0].Score == hits[1].Score)

	// A query of the wrong dimension is an error.
	_, err = vecindex.Search([]*vecindex.Set{alice}, []float32{1, 0}, 1, nil, nil)
	fmt.Println(err)
	// Output:
	// 3 1.000
	// 1 0.707
	// 4 1 true
	// vecindex: query has 2 dimensions; the set searched holds vectors of 3
}
