package driver

import (
	"context"

	"github.com/agentmem/memory"
)

// Match is a record found by a search.
type Match struct {
	// Record is the stored record, its Vector included.
	Record memory.Record
	// Score is how well the record matches; higher is better. A vector
	// search scores the cosine similarity between the record's vector and
	// the query vector, from -1 to 1; a text search the record's BM25
	// score for the query text (see TextSearcher), above 0.
	Score float64
	// WriterScore, set by a text search and zero from a vector search, is
	// the BM25 score for the query text of everything the record's writer
	// (its exact identity: for a conversation turn, its session) stored in
	// the search's corpus, taken together as one document, among the
	// writers q's filter matches as the collection: how well the session as
	// a whole matches (see lexical.SearchGroups and Hit.Group in the
	// library's lexical engine). It is 0 when the writer's records hold
	// none of the words.
	WriterScore float64
}

// MaxSearchK is the largest k a vector or text search may ask for.
const MaxSearchK = 1000

// VectorSearcher is the optional capability of k-nearest-neighbour search
// over the vectors stored with records (memory.Record.Vector).
//
// A driver holds vectors of one dimension: the first vector it stores
// fixes the dimension, unless the driver's configuration fixes it when
// it is opened (a Qdrant collection's vector size is set when it is
// created), and a record or query vector of another dimension is
// memory.ErrInvalidArgument. Search applies q in full inside the search
// — identity filter, kinds, key, ids and expiry — so the k results are the
// k nearest among the records q matches, never a filtered subset of a
// store-wide top k.
type VectorSearcher interface {
	// Search returns the k unexpired records matching q that carry a
	// vector and are nearest to vec by cosine similarity, highest score
	// first, ties broken by List order (Created descending, then ID
	// descending). Fewer than k are returned when fewer match. q.Limit is
	// ignored. An empty store returns nothing for a vector of any valid
	// dimension, or of its configured dimension when it has one.
	Search(ctx context.Context, q Query, vec []float32, k int) ([]Match, error)
}

// VectorRanker is the optional capability of a vector search that answers
// from the driver's vector index alone, as TextRanker is of a text search:
// a caller that fuses hundreds of candidates to keep ten (package recall)
// then reads only the ten.
type VectorRanker interface {
	VectorSearcher
	// RankVector is Search with each match's Ref in place of its record:
	// the same matches, scores and order.
	RankVector(ctx context.Context, q Query, vec []float32, k int) ([]RefMatch, error)
}

// CheckSearch validates the arguments of a Search: the query as List
// checks it, the vector with memory.CheckVector, and 1 <= k <= MaxSearchK.
func CheckSearch(q Query, vec []float32, k int) error {
	if err := CheckQuery(q); err != nil {
		return err
	}
	if err := memory.CheckVector(vec); err != nil {
		return err
	}
	if k < 1 || k > MaxSearchK {
		return memory.Errorf(memory.ErrInvalidArgument, "k is %d; it must be between 1 and %d", k, MaxSearchK)
	}
	return nil
}

// DimensionMismatch returns the error for a vector of got dimensions in a
// store that holds vectors of want dimensions.
func DimensionMismatch(got, want int) error {
	return memory.Errorf(memory.ErrInvalidArgument, "vector has %d dimensions; this store holds vectors of %d", got, want)
}

// BatchDims checks that the vectors of recs all have one dimension, and
// that it is dims when dims is not zero (a store's dimension, fixed by its
// first vector). It returns the dimension the store has after the batch:
// dims, or the batch's when dims is zero and the batch has vectors.
func BatchDims(recs []memory.Record, dims int) (int, error) {
	for _, r := range recs {
		if r.Vector == nil {
			continue
		}
		if dims == 0 {
			dims = len(r.Vector)
		} else if len(r.Vector) != dims {
			return 0, memory.Errorf(memory.ErrInvalidArgument, "record %s: vector has %d dimensions; this store holds vectors of %d", r.ID, len(r.Vector), dims)
		}
	}
	return dims, nil
}
