package recall

import (
	"slices"

	"github.com/agentmem/memory/internal/lexical"
)

// SpeakerKey is the metadata key that names who said a turn (or wrote a
// record): a display name such as "Caroline". A record whose speaker the
// query names gains Options.SpeakerBoost: a question about someone is
// most often answered by what they said.
const SpeakerKey = "speaker"

// named reports whether every term of speaker is among the query's terms,
// so "Caroline" is named by "what did Caroline's sister say?".
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
