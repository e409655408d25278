package tiers

import "github.com/agentmem/memory/internal/lexical"

// hit is a scored entry.
type hit = lexical.Hit[*viewEntry]

// newerEntry orders entries of equal score: newer, then the greater name
// (names are unique, so the order is total and both ways of searching
// return the same list).
func newerEntry(a, b *viewEntry) bool {
	if a.created != b.created {
		return a.created > b.created
	}
	return a.name > b.name
}

// newTopK returns an empty ranking keeping the k best hits: higher score,
// then newerEntry.
func newTopK(k int) *lexical.TopK[*viewEntry] { return lexical.NewTopKByScore(k, newerEntry) }
