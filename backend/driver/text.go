package driver

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/agentmem/memory"
)

// MaxSearchTextBytes is the longest query text a text search takes: 64 KiB.
const MaxSearchTextBytes = 64 << 10

// TextSearcher is the optional capability of ranked text search over the
// content of stored records.
//
// Every driver ranks with the one lexical engine of the library
// (internal/lexical), so that the same records and query rank the same on
// every driver; the conformance suite checks each driver against the
// engine's reference ranking. The corpus statistics a score uses (how
// many records, their lengths, how many hold each word) are those of the
// records of the identities q's filter matches, and of no other record:
// another tenant's or user's text never moves a score. Kinds, key, ids
// and expiry then choose, inside the search, which of those records are
// candidates, so the k results are the best k among the records q
// matches, never a filtered subset of a wider top k.
type TextSearcher interface {
	// SearchText returns the k unexpired records matching q whose content
	// best matches text, highest score first, ties broken by List order
	// (Created descending, then ID descending). Records that share no
	// word with the text are not returned, so fewer than k may come back;
	// a text without words (only punctuation, or only stopwords) returns
	// nothing. q.Limit is ignored.
	SearchText(ctx context.Context, q Query, text string, k int) ([]Match, error)
}

// CheckSearchText validates the arguments of a SearchText: the query as
// List checks it, a text of at most MaxSearchTextBytes of valid UTF-8
// without NUL bytes, and 1 <= k <= MaxSearchK.
func CheckSearchText(q Query, text string, k int) error {
	if err := CheckQuery(q); err != nil {
		return err
	}
	switch {
	case len(text) > MaxSearchTextBytes:
		return memory.Errorf(memory.ErrTooLarge, "search text is %d bytes, the limit is %d", len(text), MaxSearchTextBytes)
	case !utf8.ValidString(text):
		return memory.Errorf(memory.ErrInvalidArgument, "search text is not valid UTF-8")
	case strings.IndexByte(text, 0) >= 0:
		return memory.Errorf(memory.ErrInvalidArgument, "search text contains a NUL byte")
	case k < 1 || k > MaxSearchK:
		return memory.Errorf(memory.ErrInvalidArgument, "k is %d; it must be between 1 and %d", k, MaxSearchK)
	}
	return nil
}
