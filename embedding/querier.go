package embedding

import (
	"context"
	"sync/atomic"
	"unicode/utf8"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/driver"
)

// Querier embeds search queries for a store's vector search, checking
// that its embedder's model is the store's recorded one (see Indexer): a
// query vector of another model never yields a result. A store with no
// recorded model records the Querier's, as an Indexer would. It uses the
// embedder's EmbedQuery when it has one (memory.QueryEmbedder). It is
// safe for concurrent use, holds nothing to close, and reads the model
// record on every query, so it follows a re-embedding another process
// finishes.
//
// Its first query, and the first after a failed check, reads the model
// record before the embedder is called, so a Querier of the wrong model
// costs no model call. Once a check passed, each query reads the record
// while the embedder runs and its vector is used (EmbedQueryThen), since
// the read is a round trip to a database server: a model changed by
// another process meanwhile then costs one model call, and what the
// vector found is discarded.
type Querier struct {
	s     *backend.Store
	e     memory.Embedder
	model string
	// checked: the last check of the store's model passed.
	checked atomic.Bool
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

// EmbedQuery returns the vector of a search query, once the store's model
// is checked (see Querier): another model, or a re-embedding in progress,
// is memory.ErrConflict. An empty text, or one that is not valid UTF-8,
// is memory.ErrInvalidArgument, one over memory.MaxContentBytes
// memory.ErrTooLarge, and the embedder is not called; malformed output of
// the embedder is memory.ErrInvalidArgument; a vector whose dimension is
// not the store's is memory.ErrConflict.
func (q *Querier) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	var out []float32
	err := q.EmbedQueryThen(ctx, text, func(v []float32) error {
		out = v
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// EmbedQueryThen embeds a search query as EmbedQuery does and calls use
// with its vector, returning use's error, or the check's: once a check
// passed, use runs while the store's model is checked again (see
// Querier), and when that check fails its error is returned instead of
// use's, and what use found must be discarded. use must therefore only
// read (a search), and is not called when the text is refused or the
// embedder fails.
func (q *Querier) EmbedQueryThen(ctx context.Context, text string, use func(vec []float32) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	switch {
	case text == "":
		return memory.Errorf(memory.ErrInvalidArgument, "embedding: empty query text")
	case len(text) > memory.MaxContentBytes:
		return memory.Errorf(memory.ErrTooLarge, "embedding: query text is %d bytes, the limit is %d", len(text), memory.MaxContentBytes)
	case !utf8.ValidString(text):
		return memory.Errorf(memory.ErrInvalidArgument, "embedding: query text is not valid UTF-8")
	}
	if !q.checked.Load() {
		info, err := checkModel(ctx, q.s, q.model, roleQuery, 0)
		if err != nil {
			return err
		}
		v, err := q.embed(ctx, text)
		if err != nil {
			return err
		}
		if err := q.settle(ctx, info, nil, v); err != nil {
			return err
		}
		return use(v)
	}
	type checked struct {
		info ModelInfo
		err  error
	}
	check := make(chan checked, 1)
	go func() {
		info, err := checkModel(ctx, q.s, q.model, roleQuery, 0)
		check <- checked{info, err}
	}()
	v, err := q.embed(ctx, text)
	if err == nil {
		err = use(v)
	}
	c := <-check
	if err := q.settle(ctx, c.info, c.err, v); err != nil {
		return err
	}
	return err
}

// settle ends a query's check of the model: its result checkErr, and,
// when that passed and the query has its vector v, that v's dimension is
// the store's, recording it when none is recorded yet. The Querier is
// marked checked or not by the outcome.
func (q *Querier) settle(ctx context.Context, info ModelInfo, checkErr error, v []float32) error {
	err := checkErr
	if err == nil && v != nil && info.Dims != len(v) {
		_, err = checkModel(ctx, q.s, q.model, roleQuery, len(v))
	}
	q.checked.Store(err == nil)
	return err
}

// embed calls the embedder for text, through its query path when it has
// one, and checks its output.
func (q *Querier) embed(ctx context.Context, text string) ([]float32, error) {
	var (
		v   []float32
		err error
	)
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
