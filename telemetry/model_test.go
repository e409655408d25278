package telemetry_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/extract"
	"github.com/agentmem/memory/telemetry"
	"github.com/agentmem/memory/tiers/tiered"
)

// paidModel is a Summarizer and Extractor that does what extract.Rules
// does and reports usage as a model would: one call, 100 input tokens per
// turn and 7 output tokens.
type paidModel struct {
	err error
}

func (p paidModel) usage(turns []memory.Record) extract.Usage {
	if len(turns) == 0 {
		return extract.Usage{}
	}
	return extract.Usage{ModelCalls: 1, PromptTokens: 100 * len(turns), CompletionTokens: 7}
}

func (p paidModel) Summarize(ctx context.Context, previous string, turns []memory.Record) (string, extract.Usage, error) {
	if p.err != nil {
		return "", extract.Usage{ModelCalls: 1, UnreportedCalls: 1}, p.err
	}
	d, _, err := extract.Rules{}.Summarize(ctx, previous, turns)
	return d, p.usage(turns), err
}

func (p paidModel) Extract(ctx context.Context, turns, known []memory.Record) ([]extract.Fact, extract.Usage, error) {
	if p.err != nil {
		return nil, extract.Usage{ModelCalls: 1, UnreportedCalls: 1}, p.err
	}
	f, _, err := extract.Rules{}.Extract(ctx, turns, known)
	return f, p.usage(turns), err
}

type plainEmbedder struct{ err error }

func (plainEmbedder) Model() string { return "plain-v1" }

func (e plainEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if e.err != nil {
		return nil, e.err
	}
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = []float32{1, 0}
	}
	return out, nil
}

type queryEmbedder struct{ plainEmbedder }

func (queryEmbedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	return []float32{0, 1}, nil
}

func turnsOf(texts ...string) []memory.Record {
	var out []memory.Record
	for i, s := range texts {
		out = append(out, memory.Record{ID: "turn-" + string(rune('a'+i)), Kind: memory.KindTurn, Label: string(memory.RoleUser), Content: s})
	}
	return out
}

func TestModelWrappersCountCallsAndTokens(t *testing.T) {
	r := newRig(t, telemetry.Options{})
	ctx := context.Background()
	turns := turnsOf("I live in Lisbon.", "I have two cats.")
	sum := telemetry.WrapSummarizer(paidModel{}, r.t)
	ext := telemetry.WrapExtractor(paidModel{}, r.t)
	if _, u, err := sum.Summarize(ctx, "", turns); err != nil || u != (extract.Usage{ModelCalls: 1, PromptTokens: 200, CompletionTokens: 7}) {
		t.Fatalf("Summarize: %v, %+v", err, u)
	}
	facts, _, err := ext.Extract(ctx, turns, nil)
	if err != nil || len(facts) != 2 {
		t.Fatalf("Extract: %v, %v", err, facts)
	}
	bad := telemetry.WrapExtractor(paidModel{err: extract.Malformed("not JSON")}, r.t)
	if _, _, err := bad.Extract(ctx, turns, nil); !strings.Contains(err.Error(), "not JSON") {
		t.Fatalf("Extract's error is %v, not the wrapped one's", err)
	}

	plain := telemetry.WrapEmbedder(plainEmbedder{}, r.t)
	if _, ok := plain.(memory.QueryEmbedder); ok {
		t.Error("a plain embedder wrapped is a QueryEmbedder")
	}
	if plain.Model() != "plain-v1" {
		t.Errorf("Model() = %q", plain.Model())
	}
	plain.Embed(ctx, []string{"a", "b", "c"})
	telemetry.WrapEmbedder(plainEmbedder{err: memory.ErrUnavailable}, r.t).Embed(ctx, []string{"a"})
	q, ok := telemetry.WrapEmbedder(queryEmbedder{}, r.t).(memory.QueryEmbedder)
	if !ok {
		t.Fatal("a QueryEmbedder wrapped is not one")
	}
	if v, err := q.EmbedQuery(ctx, "q"); err != nil || v[1] != 1 {
		t.Errorf("EmbedQuery: %v, %v", v, err)
	}

	all := r.metrics(t)
	checkPoints(t, all, "agentmem.model.duration", "s",
		point{attrs{"agentmem.model.operation": "summarize"}, 1},
		point{attrs{"agentmem.model.operation": "extract"}, 1},
		point{attrs{"agentmem.model.operation": "extract", "error.type": "malformed_output"}, 1},
		point{attrs{"agentmem.model.operation": "embed"}, 1},
		point{attrs{"agentmem.model.operation": "embed", "error.type": "unavailable"}, 1},
		point{attrs{"agentmem.model.operation": "embed_query"}, 1},
	)
	checkPoints(t, all, "agentmem.model.calls", "{call}",
		point{attrs{"agentmem.model.operation": "summarize"}, 1},
		point{attrs{"agentmem.model.operation": "extract"}, 1},
		point{attrs{"agentmem.model.operation": "extract", "error.type": "malformed_output"}, 1},
		point{attrs{"agentmem.model.operation": "embed"}, 1},
		point{attrs{"agentmem.model.operation": "embed", "error.type": "unavailable"}, 1},
		point{attrs{"agentmem.model.operation": "embed_query"}, 1},
	)
	checkPoints(t, all, "agentmem.model.tokens", "{token}",
		point{attrs{"agentmem.model.operation": "summarize", "agentmem.token.type": "input"}, 200},
		point{attrs{"agentmem.model.operation": "summarize", "agentmem.token.type": "output"}, 7},
		point{attrs{"agentmem.model.operation": "extract", "agentmem.token.type": "input"}, 200},
		point{attrs{"agentmem.model.operation": "extract", "agentmem.token.type": "output"}, 7},
	)
	checkPoints(t, all, "agentmem.model.unreported_calls", "{call}",
		point{attrs{"agentmem.model.operation": "extract"}, 1},
		point{attrs{"agentmem.model.operation": "embed"}, 2},
		point{attrs{"agentmem.model.operation": "embed_query"}, 1},
	)
	checkPoints(t, all, "agentmem.embed.texts", "{text}",
		point{attrs{"agentmem.model.operation": "embed"}, 4},
		point{attrs{"agentmem.model.operation": "embed_query"}, 1},
	)

	spans := r.spans.Ended()
	if len(spans) != 6 {
		t.Fatalf("%d spans, want 6", len(spans))
	}
	checkAttrs(t, spans[0].Name(), spanAttrs(spans[0]), attrs{
		"agentmem.model.operation": "summarize", "agentmem.turns": "2", "agentmem.model.calls": "1",
		"agentmem.model.input_tokens": "200", "agentmem.model.output_tokens": "7", "agentmem.model.unreported_calls": "0",
	})
	checkAttrs(t, spans[2].Name(), spanAttrs(spans[2]), attrs{
		"agentmem.model.operation": "extract", "agentmem.turns": "2", "agentmem.known_facts": "0", "agentmem.facts": "0",
		"agentmem.model.calls": "1", "agentmem.model.input_tokens": "0", "agentmem.model.output_tokens": "0",
		"agentmem.model.unreported_calls": "1", "error.type": "malformed_output",
	})
	if st := spans[2].Status(); st.Code != codes.Error || st.Description != "malformed_output" {
		t.Errorf("failed extract's status %+v", st)
	}
	for i, want := range []string{"agentmem.summarize", "agentmem.extract", "agentmem.extract", "agentmem.embed", "agentmem.embed", "agentmem.embed_query"} {
		if spans[i].Name() != want {
			t.Errorf("span %d is %s, want %s", i, spans[i].Name(), want)
		}
		for _, text := range spanStrings(spans[i]) {
			if strings.Contains(text, "Lisbon") || strings.Contains(text, "turn-a") || strings.Contains(text, "not JSON") {
				t.Errorf("span %s holds user data: %q", spans[i].Name(), text)
			}
		}
	}
}

// OnFold counts folds by outcome, and the turns and facts of stored ones,
// but no tokens: the wrapped models count those.
func TestOnFoldCountsFoldsNotUsage(t *testing.T) {
	r := newRig(t, telemetry.Options{})
	paid := extract.Usage{ModelCalls: 2, PromptTokens: 500, CompletionTokens: 50}
	for _, rep := range []tiered.FoldReport{
		{Identity: alice, Turns: 4, Facts: 2, Usage: paid, Stored: true},
		{Identity: alice, Turns: 3, Facts: 1, Usage: paid, Stored: true},
		{Identity: alice, Turns: 5, Facts: 0, Usage: paid, Stored: true, Flush: true},
		{Identity: alice, Turns: 6, Facts: 3, Usage: paid},
		{Identity: alice, Turns: 2, Facts: 1, Usage: paid, Flush: true},
		{Identity: alice, Turns: 6, Facts: 3, Usage: paid, Err: memory.ErrUnavailable},
	} {
		r.t.OnFold(rep)
	}
	all := r.metrics(t)
	checkPoints(t, all, "agentmem.folds", "{fold}",
		point{attrs{"agentmem.fold.outcome": "stored", "agentmem.fold.flush": "false"}, 2},
		point{attrs{"agentmem.fold.outcome": "stored", "agentmem.fold.flush": "true"}, 1},
		point{attrs{"agentmem.fold.outcome": "lost", "agentmem.fold.flush": "false"}, 1},
		point{attrs{"agentmem.fold.outcome": "lost", "agentmem.fold.flush": "true"}, 1},
		point{attrs{"agentmem.fold.outcome": "failed", "agentmem.fold.flush": "false", "error.type": "unavailable"}, 1},
	)
	checkPoints(t, all, "agentmem.fold.turns", "{turn}",
		point{attrs{"agentmem.fold.flush": "false"}, 7},
		point{attrs{"agentmem.fold.flush": "true"}, 5},
	)
	checkPoints(t, all, "agentmem.fold.facts", "{fact}",
		point{attrs{"agentmem.fold.flush": "false"}, 3},
		point{attrs{"agentmem.fold.flush": "true"}, 0},
	)
	for _, name := range []string{"agentmem.model.tokens", "agentmem.model.calls"} {
		if _, ok := all[name]; ok {
			t.Errorf("OnFold recorded %s: a fold's usage would be counted twice", name)
		}
	}
}

// On a real tiered memory with the wrapped models and OnFold in place,
// the tokens recorded are exactly what the folds reported and Stats adds
// up: counted once.
func TestFoldUsageCountedOnce(t *testing.T) {
	r := newRig(t, telemetry.Options{})
	var mu sync.Mutex
	var reports []tiered.FoldReport
	folded := make(chan struct{}, 16)
	st := backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{})
	defer st.Close()
	mem, err := tiered.New(st, tiered.Options{
		Budget: 200, Trigger: 40, Target: 25, Settle: time.Millisecond, IdleFlush: -1,
		Summarizer: telemetry.WrapSummarizer(paidModel{}, r.t),
		Extractor:  telemetry.WrapExtractor(paidModel{}, r.t),
		OnFold: func(rep tiered.FoldReport) {
			r.t.OnFold(rep)
			mu.Lock()
			reports = append(reports, rep)
			mu.Unlock()
			folded <- struct{}{}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	m := telemetry.Wrap(mem, r.t)
	ctx := context.Background()
	var turns []tiered.Turn
	for _, s := range []string{"I live in Lisbon with two cats.", "My favourite food is grilled sardines.",
		"I work as a ferry engineer on the Tagus.", "Could you find me a quiet hotel in Porto?", "Near the river."} {
		turns = append(turns, tiered.Turn{Role: memory.RoleUser, Content: s})
	}
	a, err := m.Append(ctx, alice, turns...)
	if err != nil || !a.Folding {
		t.Fatalf("Append: %+v, %v", a, err)
	}
	select {
	case <-folded:
	case <-time.After(10 * time.Second):
		t.Fatal("no fold")
	}
	if err := mem.Close(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	var usage extract.Usage
	var stored int64
	for _, rep := range reports {
		usage = usage.Add(rep.Usage)
		if rep.Stored {
			stored++
		}
	}
	mu.Unlock()
	if usage.PromptTokens == 0 || usage != mem.Stats().Usage {
		t.Fatalf("folds reported %+v, Stats %+v", usage, mem.Stats().Usage)
	}
	all := r.metrics(t)
	var input, output, calls int64
	for _, p := range points(t, all["agentmem.model.tokens"], "{token}") {
		switch p.attrs["agentmem.token.type"] {
		case "input":
			input += p.value
		case "output":
			output += p.value
		}
	}
	for _, p := range points(t, all["agentmem.model.calls"], "{call}") {
		calls += p.value
	}
	if input != int64(usage.PromptTokens) || output != int64(usage.CompletionTokens) || calls != int64(usage.ModelCalls) {
		t.Errorf("recorded %d input, %d output tokens, %d calls; the folds spent %+v", input, output, calls, usage)
	}
	var folds int64
	for _, p := range points(t, all["agentmem.folds"], "{fold}") {
		if p.attrs["agentmem.fold.outcome"] == "stored" {
			folds += p.value
		}
	}
	if folds != stored || folds != mem.Stats().Folds {
		t.Errorf("recorded %d stored folds; reports say %d, Stats %d", folds, stored, mem.Stats().Folds)
	}
	if _, ok := all["agentmem.operation.duration"].Data.(metricdata.Histogram[float64]); !ok {
		t.Error("no operation duration recorded")
	}
}
