package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/extract"
	"github.com/agentmem/memory/tiers/tiered"
)

// The model operations: their agentmem.model.operation and their spans'
// names.
var (
	modelSummarize  = operation{"summarize", "agentmem.summarize"}
	modelExtract    = operation{"extract", "agentmem.extract"}
	modelEmbed      = operation{"embed", "agentmem.embed"}
	modelEmbedQuery = operation{"embed_query", "agentmem.embed_query"}
)

// WrapSummarizer returns s recording each Summarize call as a span
// "agentmem.summarize" and in the model metrics, with the Usage it reports
// (see the package documentation). Results and errors are s's, unchanged.
// When t is nil or has no provider, it returns s itself.
func WrapSummarizer(s extract.Summarizer, t *Telemetry) extract.Summarizer {
	if t == nil || !t.enabled {
		return s
	}
	return &summarizer{s: s, t: t}
}

// WrapExtractor returns e recording each Extract call as a span
// "agentmem.extract" and in the model metrics, with the Usage it reports
// (see the package documentation). Results and errors are e's, unchanged.
// When t is nil or has no provider, it returns e itself.
func WrapExtractor(e extract.Extractor, t *Telemetry) extract.Extractor {
	if t == nil || !t.enabled {
		return e
	}
	return &extractor{e: e, t: t}
}

// WrapEmbedder returns e recording each Embed call as a span
// "agentmem.embed" and each EmbedQuery call as "agentmem.embed_query", in
// the model metrics as one model call whose tokens are unreported, and the
// texts embedded. The result is a memory.QueryEmbedder exactly when e is
// one, so searches embed queries as they would with e; its Model is e's.
// When t is nil or has no provider, it returns e itself.
func WrapEmbedder(e memory.Embedder, t *Telemetry) memory.Embedder {
	if t == nil || !t.enabled {
		return e
	}
	if q, ok := e.(memory.QueryEmbedder); ok {
		return &queryEmbedder{embedder: embedder{e: e, t: t}, q: q}
	}
	return &embedder{e: e, t: t}
}

// modelCall is one call of a wrapped model implementation in progress.
type modelCall struct {
	t     *Telemetry
	op    string
	start time.Time
	span  trace.Span
	rec   bool // the span records
}

func (t *Telemetry) beginModel(ctx context.Context, op operation) (context.Context, modelCall) {
	c := modelCall{t: t, op: op.name}
	ctx, c.span = t.tracer.Start(ctx, op.span)
	c.rec = c.span.IsRecording()
	if c.rec {
		c.span.SetAttributes(attribute.String(keyModelOperation, op.name))
	}
	c.start = time.Now()
	return ctx, c
}

// end records the call's duration, outcome and usage, and ends its span.
func (c modelCall) end(ctx context.Context, u extract.Usage, err error) {
	t := c.t
	d := seconds(c.start)
	class := ErrorClass(err)
	opt := t.measure(attrKey{kind: kindModel, a: c.op, c: class})
	t.modelDuration.Record(ctx, d, opt)
	if u.ModelCalls != 0 {
		t.modelCalls.Add(ctx, int64(u.ModelCalls), opt)
	}
	if u.PromptTokens != 0 {
		t.modelTokens.Add(ctx, int64(u.PromptTokens), t.measure(attrKey{kind: kindToken, a: c.op, b: "input"}))
	}
	if u.CompletionTokens != 0 {
		t.modelTokens.Add(ctx, int64(u.CompletionTokens), t.measure(attrKey{kind: kindToken, a: c.op, b: "output"}))
	}
	if u.UnreportedCalls != 0 {
		t.modelUnreported.Add(ctx, int64(u.UnreportedCalls), t.measure(attrKey{kind: kindModelOnly, a: c.op}))
	}
	if c.rec {
		c.span.SetAttributes(
			attribute.Int("agentmem.model.calls", u.ModelCalls),
			attribute.Int("agentmem.model.input_tokens", u.PromptTokens),
			attribute.Int("agentmem.model.output_tokens", u.CompletionTokens),
			attribute.Int("agentmem.model.unreported_calls", u.UnreportedCalls),
		)
	}
	endSpan(c.span, class)
}

type summarizer struct {
	s extract.Summarizer
	t *Telemetry
}

func (w *summarizer) Summarize(ctx context.Context, previous string, turns []memory.Record) (string, extract.Usage, error) {
	ctx, c := w.t.beginModel(ctx, modelSummarize)
	digest, u, err := w.s.Summarize(ctx, previous, turns)
	if c.rec {
		c.span.SetAttributes(attribute.Int("agentmem.turns", len(turns)))
	}
	c.end(ctx, u, err)
	return digest, u, err
}

type extractor struct {
	e extract.Extractor
	t *Telemetry
}

func (w *extractor) Extract(ctx context.Context, turns, known []memory.Record) ([]extract.Fact, extract.Usage, error) {
	ctx, c := w.t.beginModel(ctx, modelExtract)
	facts, u, err := w.e.Extract(ctx, turns, known)
	if c.rec {
		c.span.SetAttributes(attribute.Int("agentmem.turns", len(turns)),
			attribute.Int("agentmem.known_facts", len(known)), attribute.Int("agentmem.facts", len(facts)))
	}
	c.end(ctx, u, err)
	return facts, u, err
}

// embedderUsage is the Usage of one embedder request: the Embedder
// interface reports no tokens.
var embedderUsage = extract.Usage{ModelCalls: 1, UnreportedCalls: 1}

type embedder struct {
	e memory.Embedder
	t *Telemetry
}

func (w *embedder) Model() string { return w.e.Model() }

func (w *embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	ctx, c := w.t.beginModel(ctx, modelEmbed)
	w.t.embedTexts.Add(ctx, int64(len(texts)), w.t.measure(attrKey{kind: kindModelOnly, a: modelEmbed.name}))
	vecs, err := w.e.Embed(ctx, texts)
	if c.rec {
		c.span.SetAttributes(attribute.Int("agentmem.texts", len(texts)))
	}
	c.end(ctx, embedderUsage, err)
	return vecs, err
}

type queryEmbedder struct {
	embedder
	q memory.QueryEmbedder
}

func (w *queryEmbedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	ctx, c := w.t.beginModel(ctx, modelEmbedQuery)
	w.t.embedTexts.Add(ctx, 1, w.t.measure(attrKey{kind: kindModelOnly, a: modelEmbedQuery.name}))
	vec, err := w.q.EmbedQuery(ctx, text)
	if c.rec {
		c.span.SetAttributes(attribute.Int("agentmem.texts", 1))
	}
	c.end(ctx, embedderUsage, err)
	return vec, err
}

// OnFold records what a fold did, for tiered.Options.OnFold: one
// agentmem.folds sample with its outcome ("stored" when its digest version
// was stored, "lost" when another fold stored it or the session was erased
// meanwhile, "failed" with error.type when it failed and will be retried),
// and, for a stored fold, its turns and proposed facts. It does not record
// r.Usage, which the wrapped Summarizer and Extractor count (see the
// package documentation), and no identity. It returns at once; a nil or
// provider-less Telemetry records nothing.
func (t *Telemetry) OnFold(r tiered.FoldReport) {
	if t == nil || !t.enabled {
		return
	}
	ctx := context.Background()
	class := ErrorClass(r.Err)
	outcome := "lost"
	switch {
	case r.Err != nil:
		outcome = "failed"
	case r.Stored:
		outcome = "stored"
	}
	t.folds.Add(ctx, 1, t.measure(attrKey{kind: kindFold, a: outcome, flag: r.Flush, c: class}))
	if r.Stored && r.Err == nil {
		opt := t.measure(attrKey{kind: kindFoldFlush, flag: r.Flush})
		t.foldTurns.Add(ctx, int64(r.Turns), opt)
		t.foldFacts.Add(ctx, int64(r.Facts), opt)
	}
}
