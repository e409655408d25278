package tiered_test

import (
	"context"
	"testing"

	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/embedding"
	"github.com/agentmem/memory/embedding/embeddingtest"
	"github.com/agentmem/memory/recall"
	"github.com/agentmem/memory/tiers/tiered"
)

// TestRecallUsage checks that a recall reports its model calls: one
// embedder request for a hybrid recall's fact search, none for a
// lexical one, each recall its own however many run at once.
func TestRecallUsage(t *testing.T) {
	ctx := context.Background()
	d := inmem.New(inmem.Options{})
	defer d.Close()
	st := backend.NewStore(d, backend.StoreOptions{})
	e := &embeddingtest.Embedder{Dims: 8}
	x, err := embedding.NewIndexer(ctx, st, e, embedding.Options{NoWorkers: true}) // records the model
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	hybrid, err := tiered.New(st, tiered.Options{Recall: recall.Options{Embedder: e}, NoWorkers: true})
	if err != nil {
		t.Fatal(err)
	}
	defer hybrid.Close()
	lexical, err := tiered.New(st, tiered.Options{NoWorkers: true})
	if err != nil {
		t.Fatal(err)
	}
	defer lexical.Close()
	say(t, hybrid, alice, "I live in Lisbon with two cats.")
	done := make(chan tiered.Recollection, 8)
	for range 8 {
		go func() {
			rec, err := hybrid.Recall(ctx, alice, "Where does she live?", tiered.RecallOptions{})
			if err != nil {
				t.Error(err)
			}
			done <- rec
		}()
	}
	for range 8 {
		rec := <-done
		if rec.Degraded || rec.Usage.ModelCalls != 1 || rec.Usage.UnreportedCalls != 1 || rec.Usage.PromptTokens != 0 {
			t.Errorf("hybrid recall: degraded %+v, usage %+v, want one unreported call", rec.Errors, rec.Usage)
		}
	}
	rec, err := lexical.Recall(ctx, alice, "Where does she live?", tiered.RecallOptions{})
	if err != nil || rec.Usage.ModelCalls != 0 {
		t.Errorf("lexical recall: usage %+v, %v", rec.Usage, err)
	}
	rec, err = hybrid.Recall(ctx, alice, "", tiered.RecallOptions{})
	if err != nil || rec.Usage.ModelCalls != 0 || len(rec.Window) != 1 {
		t.Errorf("recall about nothing: usage %+v, window %d, %v", rec.Usage, len(rec.Window), err)
	}
}
