package recall

import (
	"slices"

	"github.com/agentmem/memory/internal/lexical"
)

// named reports whether every term of speaker (a record's
// Metadata[memory.SpeakerKey]) is among the query's terms, so "Caroline"
// is named by "what did Caroline's sister say?". A question about someone
// is most often answered by what they said.
func named(queryTerms []string, speaker string) bool {
	terms := lexical.Terms(speaker)
	if len(terms) == 0 {
		return false
	}
	for _, t := range terms {
		if !slices.Contains(queryTerms, t) {
			return false
		}
	}
	return true
}
