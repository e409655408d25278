package tiers

import (
	"unicode/utf8"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/internal/lexical"
)

// queryTerms checks a query and k against Search's limits and returns the
// query's distinct words (lexical.Terms).
func queryTerms(query string, k int) ([]string, error) {
	switch {
	case k < 1 || k > MaxSearchResults:
		return nil, memory.Errorf(memory.ErrInvalidArgument, "search k is %d; it must be between 1 and %d", k, MaxSearchResults)
	case len(query) > MaxSearchQueryBytes:
		return nil, memory.Errorf(memory.ErrTooLarge, "search query is %d bytes, the limit is %d", len(query), MaxSearchQueryBytes)
	case !utf8.ValidString(query):
		return nil, memory.Errorf(memory.ErrInvalidArgument, "search query is not valid UTF-8")
	}
	terms := lexical.Terms(query)
	if len(terms) == 0 {
		return nil, memory.Errorf(memory.ErrInvalidArgument, "search query %q has no words", query)
	}
	return terms, nil
}
