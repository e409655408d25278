package hugepages_test

import (
	"fmt"

	"github.com/agentmem/memory/internal/hugepages"
)

// A loader allocates the array it is about to fill with Make, before
// writing any of it: an array of MinBytes or more is advised into huge
// pages, any other is a plain make.
func ExampleMake() {
	postings := hugepages.Make[uint64](0, 1<<20) // 8 MiB: advised
	for i := range cap(postings) {
		postings = append(postings, uint64(i))
	}
	fmt.Println(len(postings), postings[len(postings)-1])
	// Output: 1048576 1048575
}
