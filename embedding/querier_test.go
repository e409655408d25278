package embedding_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/embedding"
)

func TestQuerier(t *testing.T) {
	drivers(t, func(t *testing.T, s *backend.Store) {
		ctx := context.Background()
		addTurns(t, s, alice, 5)
		f := newFake("m1")
		q, err := embedding.NewQuerier(s, f)
		if err != nil {
			t.Fatal(err)
		}
		// An empty store: the Querier records its model.
		if _, err := q.EmbedQuery(ctx, "topic3"); err != nil {
			t.Fatal(err)
		}
		info, ok, _ := embedding.RecordedModel(ctx, s)
		if !ok || info != (embedding.ModelInfo{Model: "m1", Dims: dims}) {
			t.Errorf("recorded %+v, %v", info, ok)
		}
		x := newIndexer(t, s, f, embedding.Options{NoWorkers: true})
		if _, err := x.Backfill(ctx, alice, memory.LevelSession); err != nil {
			t.Fatal(err)
		}
		m, err := q.Search(ctx, alice, memory.Query{Level: memory.LevelSession}, "turn 3 about topic3", 2)
		if err != nil || len(m) != 2 || m[0].Record.Content != "turn 3 about topic3" {
			t.Fatalf("Search = %v, %v", m, err)
		}
		// Another user's scope sees nothing of alice's.
		if m, err := q.Search(ctx, bob, memory.Query{Level: memory.LevelSession}, "topic3", 2); err != nil || len(m) != 0 {
			t.Errorf("bob's search = %v, %v", m, err)
		}
		calls := len(f.sizes())
		if _, err := q.Search(ctx, memory.Identity{Tenant: "t1"}, memory.Query{Level: memory.LevelSession}, "topic3", 2); !errors.Is(err, memory.ErrIncompleteScope) {
			t.Errorf("incomplete scope: %v", err)
		}
		for _, c := range []struct {
			text string
			kind error
		}{{"", memory.ErrInvalidArgument}, {"\xff", memory.ErrInvalidArgument}, {strings.Repeat("x", memory.MaxContentBytes+1), memory.ErrTooLarge}} {
			if _, err := q.EmbedQuery(ctx, c.text); !errors.Is(err, c.kind) {
				t.Errorf("query of %d bytes: %v, want %v", len(c.text), err, c.kind)
			}
		}
		if len(f.sizes()) != calls {
			t.Errorf("refused queries reached the model")
		}
		// The query path of a QueryEmbedder is used.
		qq, _ := embedding.NewQuerier(s, queryFake{f})
		v, err := qq.EmbedQuery(ctx, "x")
		if err != nil || v[0] != queryVector("x")[0] {
			t.Errorf("EmbedQuery through the query path: %v, %v", head(v), err)
		}
		if _, err := embedding.NewQuerier(nil, f); !errors.Is(err, memory.ErrInvalidArgument) {
			t.Errorf("nil store: %v", err)
		}
	})
	// A store whose driver cannot record the model: a classified error,
	// not a panic, and no model call.
	st := backend.NewStore(noSwap{inmem.New(inmem.Options{})}, backend.StoreOptions{})
	f := newFake("m1")
	q, err := embedding.NewQuerier(st, f)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.EmbedQuery(context.Background(), "topic3"); !errors.Is(err, memory.ErrUnimplemented) {
		t.Errorf("EmbedQuery on a store without compare-and-swap: %v, want memory.ErrUnimplemented", err)
	}
	if n := len(f.sizes()); n != 0 {
		t.Errorf("the model was called %d times on a store that cannot record it", n)
	}
}

func queryVector(text string) []float32 {
	v, _ := queryFake{}.EmbedQuery(context.Background(), text)
	return v
}

// newQuerier returns a fake embedder of model and a Querier of s with it.
func newQuerier(t *testing.T, s *backend.Store, model string) (*fake, *embedding.Querier) {
	t.Helper()
	f := newFake(model)
	q, err := embedding.NewQuerier(s, f)
	if err != nil {
		t.Fatal(err)
	}
	return f, q
}

// TestQuerierChecksWhileEmbedding checks the order of a Querier's model
// check: before the embedder on its first query and after a failed check
// (a Querier of the wrong model calls no model), and while the embedder
// and the search run once a check passed, whose failure then wins over
// what the search found.
func TestQuerierChecksWhileEmbedding(t *testing.T) {
	drivers(t, func(t *testing.T, s *backend.Store) {
		ctx := context.Background()
		f, q := newQuerier(t, s, "m1")
		uses := 0
		use := func([]float32) error {
			uses++
			return nil
		}
		if err := q.EmbedQueryThen(ctx, "first", use); err != nil || uses != 1 {
			t.Fatalf("first query: %v, use called %d times", err, uses)
		}
		// A Querier of another model never calls its embedder.
		other, oq := newQuerier(t, s, "m2")
		for range 2 {
			if err := oq.EmbedQueryThen(ctx, "x", use); !errors.Is(err, memory.ErrConflict) {
				t.Errorf("a Querier of another model: %v, want memory.ErrConflict", err)
			}
		}
		if n := len(other.sizes()); n != 0 || uses != 1 {
			t.Errorf("a Querier of another model called it %d times and used %d vectors", n, uses-1)
		}
		// Another process starts re-embedding with m2: q's next query
		// runs its search, but answers with the conflict.
		newIndexer(t, s, other, embedding.Options{NoWorkers: true, Reembed: true})
		calls := len(f.sizes())
		errUse := errors.New("what the search found")
		if err := q.EmbedQueryThen(ctx, "second", func([]float32) error { uses++; return errUse }); !errors.Is(err, memory.ErrConflict) {
			t.Errorf("a query during a re-embedding: %v, want memory.ErrConflict", err)
		}
		if len(f.sizes()) != calls+1 || uses != 2 {
			t.Errorf("the query after a passed check: %d model calls, %d uses; want 1 and 1", len(f.sizes())-calls, uses-1)
		}
		// The failed check is remembered: the next query checks first.
		if _, err := q.EmbedQuery(ctx, "third"); !errors.Is(err, memory.ErrConflict) {
			t.Errorf("the query after a failed check: %v, want memory.ErrConflict", err)
		}
		if len(f.sizes()) != calls+1 {
			t.Errorf("the query after a failed check called the model")
		}
	})
}

// TestQuerierConcurrent runs queries of one Querier at once, their checks
// overlapping their embeddings (run with -race).
func TestQuerierConcurrent(t *testing.T) {
	drivers(t, func(t *testing.T, s *backend.Store) {
		ctx := context.Background()
		f, q := newQuerier(t, s, "m1")
		var wg sync.WaitGroup
		errs := make(chan error, 8*20)
		for g := range 8 {
			wg.Go(func() {
				for i := range 20 {
					text := fmt.Sprintf("query %d of %d", i, g)
					v, err := q.EmbedQuery(ctx, text)
					if err == nil && !slices.Equal(v, vec(text)) {
						err = fmt.Errorf("the vector of %q is another text's", text)
					}
					if err != nil {
						errs <- err
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if n := f.texts(); n != 8*20 {
			t.Errorf("the model embedded %d texts for %d queries", n, 8*20)
		}
	})
}
