package telemetry

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/extract"
)

// ScopeName is the instrumentation scope of the meter and tracer a
// Telemetry takes from its providers.
const ScopeName = "github.com/agentmem/memory/telemetry"

// Attribute keys. Values are fixed words, levels and counts; never user data.
const (
	keyOperation      = "agentmem.operation"
	keyLevel          = "agentmem.level"
	keyErrorType      = "error.type"
	keyTier           = "agentmem.tier"
	keyModelOperation = "agentmem.model.operation"
	keyTokenType      = "agentmem.token.type"
	keyFoldOutcome    = "agentmem.fold.outcome"
	keyFoldFlush      = "agentmem.fold.flush"
	keyMethod         = "http.request.method"
	keyRoute          = "http.route"
	keyStatusCode     = "http.response.status_code"
	keyStatusClass    = "agentmem.http.status_class"
)

// other is the value of an attribute whose input is none of the known
// values, as OpenTelemetry's conventions spell it.
const other = "_OTHER"

// durationBounds are the bucket boundaries of the duration histograms, in
// seconds: from a tenth of a millisecond (an in-process read) to a minute
// (a slow model call).
var durationBounds = []float64{
	0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
	0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
}

// Options say where a Telemetry records. The zero value records nothing.
type Options struct {
	// MeterProvider makes the instruments; nil means a no-op provider.
	// The global provider is used only when passed here
	// (otel.GetMeterProvider()).
	MeterProvider metric.MeterProvider
	// TracerProvider starts the spans; nil means a no-op provider.
	// The global provider is used only when passed here
	// (otel.GetTracerProvider()).
	TracerProvider trace.TracerProvider
	// Propagator, when not nil, is how Handler reads a caller's trace
	// context from a request's headers (propagation.TraceContext{}, for
	// one); nil means every request starts a trace of its own.
	Propagator propagation.TextMapPropagator
}

// Telemetry records the memory's operations with the providers it was
// made with. It is safe for concurrent use. A nil *Telemetry records
// nothing: the wrappers return what they are given.
type Telemetry struct {
	// enabled reports that a provider was given: without one, the
	// wrappers return what they are given.
	enabled    bool
	tracer     trace.Tracer
	propagator propagation.TextMapPropagator

	opDuration     metric.Float64Histogram
	opErrors       metric.Int64Counter
	recallDegraded metric.Int64Counter
	tierErrors     metric.Int64Counter

	modelDuration   metric.Float64Histogram
	modelCalls      metric.Int64Counter
	modelTokens     metric.Int64Counter
	modelUnreported metric.Int64Counter
	embedTexts      metric.Int64Counter

	folds     metric.Int64Counter
	foldTurns metric.Int64Counter
	foldFacts metric.Int64Counter

	httpDuration metric.Float64Histogram

	// attrs caches the measurement options of attribute sets by their
	// values: their number is bounded by the fixed words they hold.
	mu    sync.RWMutex
	attrs map[attrKey]metric.MeasurementOption
}

// New returns a Telemetry recording with opt's providers. It fails only
// when a provider refuses to make an instrument.
func New(opt Options) (*Telemetry, error) {
	t := &Telemetry{
		enabled:    opt.MeterProvider != nil || opt.TracerProvider != nil,
		propagator: opt.Propagator,
		attrs:      map[attrKey]metric.MeasurementOption{},
	}
	mp, tp := opt.MeterProvider, opt.TracerProvider
	if mp == nil {
		mp = metricnoop.NewMeterProvider()
	}
	if tp == nil {
		tp = tracenoop.NewTracerProvider()
	}
	t.tracer = tp.Tracer(ScopeName)
	m := mp.Meter(ScopeName)

	var errs []error
	hist := func(name, desc string) metric.Float64Histogram {
		h, err := m.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc),
			metric.WithExplicitBucketBoundaries(durationBounds...))
		errs = append(errs, err)
		return h
	}
	counter := func(name, unit, desc string) metric.Int64Counter {
		c, err := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	t.opDuration = hist("agentmem.operation.duration", "Duration of tiered memory operations.")
	t.opErrors = counter("agentmem.operation.errors", "{error}", "Tiered memory operations that failed.")
	t.recallDegraded = counter("agentmem.recall.degraded", "{recall}", "Recalls that could not read a tier.")
	t.tierErrors = counter("agentmem.recall.tier.errors", "{error}", "Tiers a recall could not read.")
	t.modelDuration = hist("agentmem.model.duration", "Duration of summarizer, extractor and embedder calls.")
	t.modelCalls = counter("agentmem.model.calls", "{call}", "Requests made to models.")
	t.modelTokens = counter("agentmem.model.tokens", "{token}", "Tokens models read (input) and wrote (output), as their providers reported them.")
	t.modelUnreported = counter("agentmem.model.unreported_calls", "{call}", "Model requests whose tokens were not reported.")
	t.embedTexts = counter("agentmem.embed.texts", "{text}", "Texts sent to the embedder.")
	t.folds = counter("agentmem.folds", "{fold}", "Folds of session turns into the digest and facts, by outcome.")
	t.foldTurns = counter("agentmem.fold.turns", "{turn}", "Turns folded by folds that stored their digest.")
	t.foldFacts = counter("agentmem.fold.facts", "{fact}", "Facts proposed by folds that stored their digest.")
	t.httpDuration = hist("agentmem.http.request.duration", "Duration of HTTP requests served.")
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return t, nil
}

// ErrorClass returns the class of err as the error.type attribute records
// it: the memory error sentinel it matches, in snake case ("not_found",
// "invalid_argument", "incomplete_scope", "permission_denied", "conflict",
// "too_large", "unimplemented", "closed", "unavailable"),
// "malformed_output" for an unusable model reply (extract.ErrMalformedOutput,
// which also matches memory.ErrInvalidArgument), "canceled" and
// "deadline_exceeded" for a context's end, "_OTHER" for any other error,
// and "" for nil.
func ErrorClass(err error) string {
	if err == nil {
		return ""
	}
	if errors.Is(err, extract.ErrMalformedOutput) {
		return "malformed_output"
	}
	for _, c := range errorClasses {
		if errors.Is(err, c.err) {
			return c.name
		}
	}
	return other
}

// errorClasses are the classes ErrorClass tries, in order.
var errorClasses = []struct {
	err  error
	name string
}{
	{memory.ErrNotFound, "not_found"},
	{memory.ErrInvalidArgument, "invalid_argument"},
	{memory.ErrIncompleteScope, "incomplete_scope"},
	{memory.ErrPermissionDenied, "permission_denied"},
	{memory.ErrConflict, "conflict"},
	{memory.ErrTooLarge, "too_large"},
	{memory.ErrUnimplemented, "unimplemented"},
	{memory.ErrClosed, "closed"},
	{memory.ErrUnavailable, "unavailable"},
	{context.Canceled, "canceled"},
	{context.DeadlineExceeded, "deadline_exceeded"},
}

// levelValue is the agentmem.level of l: l itself when it is a level, ""
// when empty (no attribute), "_OTHER" otherwise.
func levelValue(l memory.Level) string {
	switch {
	case l == "":
		return ""
	case l.Valid():
		return string(l)
	}
	return other
}

// attrKey is an attribute set of one instrument's samples; empty fields
// are left out.
type attrKey struct {
	kind    uint8 // which key set: one of the kind* constants
	a, b, c string
	flag    bool
}

const (
	kindOp        = iota // operation, level, error.type
	kindDegraded         // operation
	kindTier             // tier, error.type
	kindModel            // model operation, error.type
	kindToken            // model operation, token type
	kindModelOnly        // model operation
	kindFold             // outcome, flush, error.type
	kindFoldFlush        // flush
	kindHTTP             // method, route, status class
)

// measure returns the measurement option of k's attribute set, made once.
func (t *Telemetry) measure(k attrKey) metric.MeasurementOption {
	t.mu.RLock()
	o, ok := t.attrs[k]
	t.mu.RUnlock()
	if ok {
		return o
	}
	o = metric.WithAttributeSet(attribute.NewSet(k.attributes()...))
	t.mu.Lock()
	t.attrs[k] = o
	t.mu.Unlock()
	return o
}

// attributes lists k's attributes.
func (k attrKey) attributes() []attribute.KeyValue {
	var kv []attribute.KeyValue
	add := func(key, v string) {
		if v != "" {
			kv = append(kv, attribute.String(key, v))
		}
	}
	switch k.kind {
	case kindOp:
		add(keyOperation, k.a)
		add(keyLevel, k.b)
		add(keyErrorType, k.c)
	case kindDegraded:
		add(keyOperation, k.a)
	case kindTier:
		add(keyTier, k.a)
		add(keyErrorType, k.c)
	case kindModel:
		add(keyModelOperation, k.a)
		add(keyErrorType, k.c)
	case kindToken:
		add(keyModelOperation, k.a)
		add(keyTokenType, k.b)
	case kindModelOnly:
		add(keyModelOperation, k.a)
	case kindFold:
		add(keyFoldOutcome, k.a)
		kv = append(kv, attribute.Bool(keyFoldFlush, k.flag))
		add(keyErrorType, k.c)
	case kindFoldFlush:
		kv = append(kv, attribute.Bool(keyFoldFlush, k.flag))
	case kindHTTP:
		add(keyMethod, k.a)
		add(keyRoute, k.b)
		add(keyStatusClass, k.c)
	}
	return kv
}

// endSpan ends span, with error.type and status Error when err is not
// nil. Only the error's class is recorded: its message may quote ids or
// content.
func endSpan(span trace.Span, class string) {
	if class != "" && span.IsRecording() {
		span.SetAttributes(attribute.String(keyErrorType, class))
		span.SetStatus(codes.Error, class)
	}
	span.End()
}

// seconds returns the time since start in seconds.
func seconds(start time.Time) float64 { return time.Since(start).Seconds() }
