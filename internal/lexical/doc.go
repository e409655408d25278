// Package lexical matches text by its words: the one home of what every
// text search of the library shares. It splits text into words (runs of
// Unicode letters and digits, lower-cased), scores a text against a
// query's distinct words by term frequency — the sum, over the query's
// words, of how often each occurs in the text — and ranks scored
// references, keeping the best k under an order the caller gives.
//
// A caller that searches once scores its texts one by one with
// Query.Count; one that searches often keeps an Index, an inverted index
// of texts keyed by the caller's own references (an entry, a record id),
// which scores only the texts holding a query's words. Both score every
// text alike, so with the same order they rank the same.
package lexical
