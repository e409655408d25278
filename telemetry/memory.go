package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/tiers/tiered"
)

// operation is one of Wrap's operations: its agentmem.operation and its
// span's name.
type operation struct{ name, span string }

var (
	opAppend     = operation{"append", "agentmem.append"}
	opWindow     = operation{"window", "agentmem.window"}
	opRecallWith = operation{"recall_with", "agentmem.recall_with"}
	opRecall     = operation{"recall", "agentmem.recall"}
	opRemember   = operation{"remember", "agentmem.remember"}
	opForget     = operation{"forget", "agentmem.forget"}
	opList       = operation{"list", "agentmem.list"}
)

// Wrap returns m recording every call as a span named after its
// operation ("agentmem.append", "agentmem.window", "agentmem.recall_with",
// "agentmem.recall", "agentmem.remember", "agentmem.forget",
// "agentmem.list") and in the
// operation metrics (see the package documentation); each call's context
// carries its span to m. Spans carry counts — turns and texts given,
// records returned, a recall's parts, tokens and embedder requests,
// what a Forget erased — and never what they hold. The wrapper adds
// nothing else: m's results and errors are returned unchanged. When t is
// nil or has no provider, Wrap returns m itself.
//
// The result answers tiered.Interface only; a *tiered.Memory's other
// calls (Close, Flush, Stats, Facts) are made on it directly. A call of
// tiered.Interface not named above goes to m unrecorded.
func Wrap(m tiered.Interface, t *Telemetry) tiered.Interface {
	if t == nil || !t.enabled {
		return m
	}
	return &memoryWrapper{Interface: m, m: m, t: t}
}

// memoryWrapper records the calls of tiered.Interface it knows; a call
// added to the interface later passes through unrecorded until it is
// added here.
type memoryWrapper struct {
	tiered.Interface
	m tiered.Interface
	t *Telemetry
}

// opCall is one call of a wrapped operation in progress.
type opCall struct {
	t     *Telemetry
	op    string
	level string
	start time.Time
	span  trace.Span
	// rec reports that the span records: attributes are made only then.
	rec bool
}

// begin starts the span of op, at level (a memory.Level or empty).
func (t *Telemetry) begin(ctx context.Context, op operation, level memory.Level) (context.Context, opCall) {
	c := opCall{t: t, op: op.name, level: levelValue(level)}
	ctx, c.span = t.tracer.Start(ctx, op.span)
	c.rec = c.span.IsRecording()
	if c.rec {
		c.span.SetAttributes(attribute.String(keyOperation, op.name))
		if c.level != "" {
			c.span.SetAttributes(attribute.String(keyLevel, c.level))
		}
	}
	c.start = time.Now()
	return ctx, c
}

// end records the call's duration and outcome and ends its span.
func (c opCall) end(ctx context.Context, err error) {
	d := seconds(c.start)
	class := ErrorClass(err)
	opt := c.t.measure(attrKey{kind: kindOp, a: c.op, b: c.level, c: class})
	c.t.opDuration.Record(ctx, d, opt)
	if class != "" {
		c.t.opErrors.Add(ctx, 1, opt)
	}
	endSpan(c.span, class)
}

func (w *memoryWrapper) Append(ctx context.Context, id memory.Identity, turns ...tiered.Turn) (tiered.Appended, error) {
	ctx, c := w.t.begin(ctx, opAppend, "")
	a, err := w.m.Append(ctx, id, turns...)
	if c.rec {
		c.span.SetAttributes(attribute.Int("agentmem.turns", len(turns)),
			attribute.Int("agentmem.append.stored", a.Turns), attribute.Bool("agentmem.append.folding", a.Folding))
	}
	c.end(ctx, err)
	return a, err
}

func (w *memoryWrapper) Window(ctx context.Context, id memory.Identity, budget int) ([]memory.Record, error) {
	ctx, c := w.t.begin(ctx, opWindow, "")
	recs, err := w.m.Window(ctx, id, budget)
	if c.rec {
		c.span.SetAttributes(attribute.Int("agentmem.budget", budget), attribute.Int("agentmem.records", len(recs)))
	}
	c.end(ctx, err)
	return recs, err
}

func (w *memoryWrapper) RecallWith(ctx context.Context, id memory.Identity, text string, opt tiered.RecallOptions) (tiered.Recollection, error) {
	ctx, c := w.t.begin(ctx, opRecallWith, opt.Level)
	r, err := w.m.RecallWith(ctx, id, text, opt)
	if c.rec {
		c.span.SetAttributes(attribute.Int("agentmem.recall.k", opt.K), attribute.Int("agentmem.budget", opt.Budget))
	}
	if err == nil {
		if c.rec {
			c.span.SetAttributes(
				attribute.Int("agentmem.recall.window", len(r.Window)),
				attribute.Bool("agentmem.recall.digest", r.Digest != nil),
				attribute.Int("agentmem.recall.facts", len(r.Facts)),
				attribute.Int("agentmem.recall.tokens", r.Tokens),
				attribute.Int("agentmem.recall.model_calls", r.Usage.ModelCalls),
				attribute.Bool("agentmem.recall.degraded", r.Degraded),
			)
		}
		if r.Degraded {
			w.t.recallDegraded.Add(ctx, 1, w.t.measure(attrKey{kind: kindDegraded, a: opRecallWith.name}))
			var tiers []string
			for _, te := range []struct {
				tier string
				err  error
			}{{"window", r.Errors.Window}, {"digest", r.Errors.Digest}, {"facts", r.Errors.Facts}} {
				if te.err != nil {
					tiers = append(tiers, te.tier)
					w.t.tierErrors.Add(ctx, 1, w.t.measure(attrKey{kind: kindTier, a: te.tier, c: ErrorClass(te.err)}))
				}
			}
			if c.rec {
				c.span.SetAttributes(attribute.StringSlice("agentmem.recall.degraded_tiers", tiers))
			}
		}
	}
	c.end(ctx, err)
	return r, err
}

func (w *memoryWrapper) Recall(ctx context.Context, id memory.Identity, about string) (memory.Recollection, error) {
	ctx, c := w.t.begin(ctx, opRecall, "")
	r, err := w.m.Recall(ctx, id, about)
	if err == nil {
		if c.rec {
			c.span.SetAttributes(
				attribute.Int("agentmem.records", len(r.Records)),
				attribute.Int("agentmem.recall.tokens", r.Tokens),
				attribute.Bool("agentmem.recall.degraded", r.Degraded != nil),
			)
		}
		if r.Degraded != nil {
			w.t.recallDegraded.Add(ctx, 1, w.t.measure(attrKey{kind: kindDegraded, a: opRecall.name}))
		}
	}
	c.end(ctx, err)
	return r, err
}

func (w *memoryWrapper) Remember(ctx context.Context, id memory.Identity, texts ...string) ([]memory.Record, error) {
	ctx, c := w.t.begin(ctx, opRemember, "")
	recs, err := w.m.Remember(ctx, id, texts...)
	if c.rec {
		c.span.SetAttributes(attribute.Int("agentmem.texts", len(texts)), attribute.Int("agentmem.records", len(recs)))
	}
	c.end(ctx, err)
	return recs, err
}

func (w *memoryWrapper) Forget(ctx context.Context, id memory.Identity, level memory.Level) (tiered.Erased, error) {
	ctx, c := w.t.begin(ctx, opForget, level)
	e, err := w.m.Forget(ctx, id, level)
	if c.rec {
		c.span.SetAttributes(
			attribute.Int64("agentmem.erased.turns", e.Turns),
			attribute.Int64("agentmem.erased.digests", e.Digests),
			attribute.Int64("agentmem.erased.facts", e.Facts),
			attribute.Int64("agentmem.erased.work", e.Work),
		)
	}
	c.end(ctx, err)
	return e, err
}

func (w *memoryWrapper) List(ctx context.Context, id memory.Identity, opt tiered.ListOptions) (tiered.Listing, error) {
	ctx, c := w.t.begin(ctx, opList, opt.Level)
	l, err := w.m.List(ctx, id, opt)
	if c.rec {
		c.span.SetAttributes(
			attribute.Int("agentmem.list.window", len(l.Window)),
			attribute.Bool("agentmem.list.digest", l.Digest != nil),
			attribute.Int("agentmem.list.facts", len(l.Facts)),
		)
	}
	c.end(ctx, err)
	return l, err
}
