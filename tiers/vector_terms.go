package tiers

import (
	"unicode/utf8"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/internal/lexical"
)

// parseQuery checks a query and k against Search's limits and returns the
// query prepared for ranking (lexical.NewQuery). A query of stopwords
// only is accepted and has no terms: it matches nothing.
func parseQuery(query string, k int) (lexical.Query, error) {
	switch {
	case k < 1 || k > MaxSearchResults:
		return lexical.Query{}, memory.Errorf(memory.ErrInvalidArgument, "search k is %d; it must be between 1 and %d", k, MaxSearchResults)
	case len(query) > MaxSearchQueryBytes:
		return lexical.Query{}, memory.Errorf(memory.ErrTooLarge, "search query is %d bytes, the limit is %d", len(query), MaxSearchQueryBytes)
	case !utf8.ValidString(query):
		return lexical.Query{}, memory.Errorf(memory.ErrInvalidArgument, "search query is not valid UTF-8")
	}
	for range lexical.Words(query) {
		return lexical.NewQuery(query), nil
	}
	return lexical.Query{}, memory.Errorf(memory.ErrInvalidArgument, "search query %q has no words", query)
}
