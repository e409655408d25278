package tiered_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/embedding"
	"github.com/agentmem/memory/embedding/embeddingtest"
	"github.com/agentmem/memory/extract"
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
			rec, err := hybrid.RecallWith(ctx, alice, "Where does she live?", tiered.RecallOptions{})
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
	rec, err := lexical.RecallWith(ctx, alice, "Where does she live?", tiered.RecallOptions{})
	if err != nil || rec.Usage.ModelCalls != 0 {
		t.Errorf("lexical recall: usage %+v, %v", rec.Usage, err)
	}
	rec, err = hybrid.RecallWith(ctx, alice, "", tiered.RecallOptions{})
	if err != nil || rec.Usage.ModelCalls != 0 || len(rec.Window) != 1 {
		t.Errorf("recall about nothing: usage %+v, window %d, %v", rec.Usage, len(rec.Window), err)
	}
}

// TestRecaller checks Recall, the memory.Recaller shape: the records in
// the order the block shows them, and its tokens.
func TestRecaller(t *testing.T) {
	ctx := context.Background()
	d := inmem.New(inmem.Options{})
	defer d.Close()
	m, st := newWordMemory(t, d, tiered.Options{NoWorkers: true})
	say(t, m, alice, "I live in Lisbon with two cats.")
	if _, err := m.Facts().Add(ctx, alice, extract.Fact{Text: "She lives in Lisbon.", Sources: []string{"t1"}}); err != nil {
		t.Fatal(err)
	}
	var r memory.Recaller = m
	got, err := r.Recall(ctx, alice, "Where does she live?")
	if err != nil {
		t.Fatal(err)
	}
	n, _ := st.Tokens().CountTokens(ctx, got.Text)
	if len(got.Records) != 2 || got.Records[0].Kind != memory.KindFact || got.Records[1].Kind != memory.KindTurn || got.Tokens != n || got.Degraded != nil {
		t.Fatalf("Recall: %d records %v, tokens %d (text counts %d), degraded %v", len(got.Records), got.Records, got.Tokens, n, got.Degraded)
	}
}

// TestRecallLevel checks that Options.Level is the level Recall reads
// facts at: another session's fact is recalled at the agent level only.
func TestRecallLevel(t *testing.T) {
	ctx := context.Background()
	d := inmem.New(inmem.Options{})
	defer d.Close()
	earlier := alice
	earlier.Session = "s0"
	for _, level := range []memory.Level{memory.LevelSession, memory.LevelAgent} {
		m, _ := newWordMemory(t, d, tiered.Options{NoWorkers: true, Level: level})
		if _, err := m.Facts().Add(ctx, earlier, extract.Fact{Text: "She lives in Lisbon.", Sources: []string{"t1"}}); err != nil {
			t.Fatal(err)
		}
		got, err := m.Recall(ctx, alice, "Where does she live?")
		if err != nil {
			t.Fatal(err)
		}
		if recalled := len(got.Records) > 0; recalled != (level == memory.LevelAgent) {
			t.Errorf("Level %s: recalled %v", level, got.Records)
		}
	}
	if _, err := tiered.New(backend.NewStore(d, backend.StoreOptions{}), tiered.Options{Level: "team"}); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("Level team: %v", err)
	}
}
