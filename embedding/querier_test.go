package embedding_test

import (
	"context"
	"errors"
	"strings"
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
