package embedding

import (
	"context"
	"unicode/utf8"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/driver"
)

// Querier embeds search queries for a store's vector search, checking
// first that its embedder's model is the store's recorded one (see
// Indexer): a query vector of another model is never compared with the
// store's vectors. A store with no recorded model records the Querier's,
// as an Indexer would. It uses the embedder's EmbedQuery when it has one
// (memory.QueryEmbedder). It is safe for concurrent use, holds nothing
// to close, and reads the model record on every query, so it follows a
// re-embedding another process finishes.
type Querier struct {
	s     *backend.Store
	e     memory.Embedder
	model string
}

// NewQuerier returns a Querier of s with embedder e; wrap e in a Cache
// to cache query vectors. A nil store or embedder or a bad model name is
// memory.ErrInvalidArgument.
func NewQuerier(s *backend.Store, e memory.Embedder) (*Querier, error) {
	if s == nil || e == nil {
		return nil, memory.Errorf(memory.ErrInvalidArgument, "embedding: nil store or embedder")
	}
	if err := checkModelName(e.Model()); err != nil {
		return nil, err
	}
	return &Querier{s: s, e: e, model: e.Model()}, nil
}

// EmbedQuery returns the vector of a search query. The store's model is
// checked before the embedder is called: another model, or a
// re-embedding in progress, is memory.ErrConflict. An empty text, or one
// that is not valid UTF-8, is memory.ErrInvalidArgument, one over
// memory.MaxContentBytes memory.ErrTooLarge; malformed output of the
// embedder is memory.ErrInvalidArgument; a vector whose dimension is not
// the store's is memory.ErrConflict.
func (q *Querier) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	switch {
	case text == "":
		return nil, memory.Errorf(memory.ErrInvalidArgument, "embedding: empty query text")
	case len(text) > memory.MaxContentBytes:
		return nil, memory.Errorf(memory.ErrTooLarge, "embedding: query text is %d bytes, the limit is %d", len(text), memory.MaxContentBytes)
	case !utf8.ValidString(text):
		return nil, memory.Errorf(memory.ErrInvalidArgument, "embedding: query text is not valid UTF-8")
	}
	info, err := checkModel(ctx, q.s, q.model, roleQuery, 0)
	if err != nil {
		return nil, err
	}
	var v []float32
	if qe, ok := q.e.(memory.QueryEmbedder); ok {
		v, err = qe.EmbedQuery(ctx, text)
	} else {
		var vs [][]float32
		if vs, err = q.e.Embed(ctx, []string{text}); err == nil {
			if err = memory.CheckEmbeddings(1, vs); err == nil {
				v = vs[0]
			}
		}
	}
	if err != nil {
		return nil, err
	}
	if err := memory.CheckEmbeddings(1, [][]float32{v}); err != nil {
		return nil, err
	}
	if info.Dims != len(v) {
		if _, err := checkModel(ctx, q.s, q.model, roleQuery, len(v)); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// Search returns the k records visible to id under query whose vectors are
// nearest to text's, as backend.Store.Search finds them. The scope is
// derived before the embedder is called, so a caller with an incomplete
// identity costs no model call.
func (q *Querier) Search(ctx context.Context, id memory.Identity, query memory.Query, text string, k int) ([]driver.Match, error) {
	query.Limit = 0
	if _, err := q.s.Query(id, query); err != nil {
		return nil, err
	}
	v, err := q.EmbedQuery(ctx, text)
	if err != nil {
		return nil, err
	}
	return q.s.Search(ctx, id, query, v, k)
}
