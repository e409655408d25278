package driver

import (
	"context"
	"strings"
	"time"
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
// engine's reference ranking. A driver whose store cannot rank exactly
// (the Qdrant driver normalises lengths by a fixed average, since a
// point's weights are fixed when it is written) declares its search
// approximate to the suite, which then checks its recall of the
// reference ranking instead of equal scores; everything else below
// holds for it too, but for the average length. The corpus statistics a score uses (how many
// records, their lengths, how many hold each word) are those of the
// records with content (not "") of the identities q's filter matches,
// and of no other record:
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

// Ref is what a driver's text index holds of a record besides its text:
// enough for a caller to score the record as package recall does, and to
// find the turns said around it, without reading the record.
type Ref struct {
	ID       string
	Kind     memory.Kind
	Identity memory.Identity
	Created  time.Time
	// Speaker is the record's Metadata[memory.SpeakerKey].
	Speaker string
	// Asks is Asks(the record's Content).
	Asks bool
}

// CompareRefs orders Refs as List orders their records (see Newer):
// negative when a comes first, Created descending, then ID descending.
func CompareRefs(a, b Ref) int {
	if c := b.Created.Compare(a.Created); c != 0 {
		return c
	}
	return strings.Compare(b.ID, a.ID)
}

// RefOf returns the Ref of rec.
func RefOf(rec memory.Record) Ref {
	return Ref{ID: rec.ID, Kind: rec.Kind, Identity: rec.Identity, Created: rec.Created,
		Speaker: rec.Metadata[memory.SpeakerKey], Asks: Asks(rec.Content)}
}

// Asks reports whether text asks a question: it ends with a question mark
// (ASCII or fullwidth), closing quotes, brackets and spaces aside.
func Asks(text string) bool {
	for text != "" {
		r, size := utf8.DecodeLastRuneInString(text)
		switch r {
		case '?', '？':
			return true
		case ' ', '\t', '\r', '\n', '"', '\'', '”', '’', ')', ']':
			text = text[:len(text)-size]
		default:
			return false
		}
	}
	return false
}

// RefMatch is a match by reference: a Match whose record is its Ref, as
// RankText and RankVector return them. WriterScore is zero from a vector
// search.
type RefMatch struct {
	Ref                Ref
	Score, WriterScore float64
}

// TextRanker is the optional capability of a text search that answers
// from the driver's text index alone. A caller that scores hundreds of
// candidates to keep ten (package recall) reads only the ten, with List
// and their ids, instead of every candidate: where records live in a
// database and the index in memory, reading them is most of a search's
// time.
type TextRanker interface {
	TextSearcher
	// RankText is SearchText with each match's Ref in place of its
	// record: the same matches, scores and order.
	RankText(ctx context.Context, q Query, text string, k int) ([]RefMatch, error)
	// WriterRefs returns, for each of writers in turn, the Refs of the
	// unexpired records with content (not "") that writer stored
	// under exactly that identity and q matches, newest first as List
	// orders them. A writer that q's filter does not match has none.
	// At most memory.MaxBatch writers; q.Limit is ignored.
	WriterRefs(ctx context.Context, q Query, writers []memory.Identity) ([][]Ref, error)
}

// CheckWriterRefs validates the arguments of a WriterRefs: the query as
// List checks it and at most memory.MaxBatch writers.
func CheckWriterRefs(q Query, writers []memory.Identity) error {
	if err := CheckQuery(q); err != nil {
		return err
	}
	if len(writers) > memory.MaxBatch {
		return memory.Errorf(memory.ErrTooLarge, "%d writers, the limit is %d", len(writers), memory.MaxBatch)
	}
	return nil
}
