package tiered_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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

// TestFoldReports checks that every fold reports what it folded and
// spent: the reports' turns add up to the turns folded, each stored, one
// per digest version, with the usage the models reported.
func TestFoldReports(t *testing.T) {
	ctx := context.Background()
	d := inmem.New(inmem.Options{})
	defer d.Close()
	var mu sync.Mutex
	var reports []tiered.FoldReport
	model := &usageModel{}
	m, _ := newWordMemory(t, d, tiered.Options{Budget: 100, Trigger: 20, Target: 10, IdleFlush: -1, Settle: time.Millisecond,
		Summarizer: model, Extractor: model, OnFold: func(r tiered.FoldReport) {
			mu.Lock()
			reports = append(reports, r)
			mu.Unlock()
		}})
	for i := range 12 {
		say(t, m, alice, fmt.Sprintf("I packed item %d today.", i))
	}
	// Done when no fold is due (the window within the trigger; the budget
	// is larger, so the window is all of it) and every fold reported.
	waitFor(t, "the folds", func() bool {
		ds, _ := m.Digests(ctx, alice)
		w, _ := m.Window(ctx, alice, 0)
		n := 0
		for _, r := range w {
			n += r.Tokens
		}
		mu.Lock()
		defer mu.Unlock()
		return len(ds) > 0 && len(reports) == len(ds) && n <= 20
	})
	ds, _ := m.Digests(ctx, alice)
	mu.Lock()
	defer mu.Unlock()
	turns := 0
	for i, r := range reports {
		if !r.Stored || r.Err != nil || r.Identity != alice || r.Version != int64(i+1) || r.Usage.ModelCalls != 2 || r.Usage.PromptTokens != 2*7 {
			t.Errorf("report %d: %+v", i, r)
		}
		turns += r.Turns
	}
	if s := m.Stats(); int64(turns) != s.FoldedTurns || len(reports) != len(ds) {
		t.Errorf("reports fold %d turns in %d folds; Stats %+v, %d versions", turns, len(reports), s, len(ds))
	}
}

// usageModel is extract.Rules reporting one model call of 7 prompt
// tokens for each Summarize and Extract.
type usageModel struct{ extract.Rules }

func (u *usageModel) Summarize(ctx context.Context, previous string, turns []memory.Record) (string, extract.Usage, error) {
	s, _, err := u.Rules.Summarize(ctx, previous, turns)
	return s, extract.Usage{ModelCalls: 1, PromptTokens: 7}, err
}

func (u *usageModel) Extract(ctx context.Context, turns, known []memory.Record) ([]extract.Fact, extract.Usage, error) {
	fs, _, err := u.Rules.Extract(ctx, turns, known)
	return fs, extract.Usage{ModelCalls: 1, PromptTokens: 7}, err
}

// queryEmbedder is embeddingtest's Embedder with an EmbedQuery of its
// own, counting the queries it embeds.
type queryEmbedder struct {
	*embeddingtest.Embedder
	queries atomic.Int64
}

func (q *queryEmbedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	q.queries.Add(1)
	vs, err := q.Embed(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	return vs[0], nil
}

// TestRecallUsageQueryEmbedder checks that a recall's fact search still
// embeds its query with the embedder's EmbedQuery through the counting,
// and counts it once.
func TestRecallUsageQueryEmbedder(t *testing.T) {
	ctx := context.Background()
	d := inmem.New(inmem.Options{})
	defer d.Close()
	st := backend.NewStore(d, backend.StoreOptions{})
	e := &queryEmbedder{Embedder: &embeddingtest.Embedder{Dims: 8}}
	x, err := embedding.NewIndexer(ctx, st, e, embedding.Options{NoWorkers: true})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	m, err := tiered.New(st, tiered.Options{Recall: recall.Options{Embedder: e}, NoWorkers: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	say(t, m, alice, "I live in Lisbon with two cats.")
	rec, err := m.RecallWith(ctx, alice, "Where does she live?", tiered.RecallOptions{})
	if err != nil || rec.Degraded || rec.Usage.ModelCalls != 1 || e.queries.Load() != 1 {
		t.Errorf("recall: %v, degraded %+v, usage %+v, %d queries embedded with EmbedQuery", err, rec.Errors, rec.Usage, e.queries.Load())
	}
}
