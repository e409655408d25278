// Package telemetry records what the memory does as OpenTelemetry metrics
// and spans: per-operation latency and errors of a tiered memory, the model
// calls and tokens of its Summarizer, Extractor and Embedder, what its folds
// did, and the requests of an HTTP service. It is optional: the root
// package memory, the tiers, extract and backend import no OpenTelemetry
// code; only this package and what imports it do.
//
// New takes the providers to record with. Either left nil is a no-op
// provider, never the global one (otel.GetMeterProvider): a program that
// wants the globals passes them. With neither provider set, the wrappers
// return what they are given unchanged, so the default costs nothing per
// call.
//
//	mp, metrics := telemetry.NewPrometheus()      // or any MeterProvider
//	t, err := telemetry.New(telemetry.Options{MeterProvider: mp, TracerProvider: tp})
//	m, err := tiered.New(store, tiered.Options{
//		Summarizer: telemetry.WrapSummarizer(sum, t),
//		Extractor:  telemetry.WrapExtractor(ext, t),
//		OnFold:     t.OnFold,
//	})
//	var mem tiered.Interface = telemetry.Wrap(m, t)
//	mux.Handle("GET /metrics", metrics)
//	srv := telemetry.Handler(mux, t)
//
// # No user data
//
// Spans and metrics carry the operation, the level it names, counts
// (turns, records, tokens) and the class of an error — never content,
// record ids, identity fields, query texts, request paths beyond the
// server's fixed route patterns, or error messages (which may quote ids
// or content). A failed call sets its span's status to Error with the
// error's class as the description and the attribute error.type; it
// records no exception event.
//
// # Error classes
//
// ErrorClass names the memory error sentinel an error matches
// ("not_found", "invalid_argument", "incomplete_scope", …), "canceled" or
// "deadline_exceeded" for a context's end, "malformed_output" for a model
// reply extract could not use, and "_OTHER" for anything else.
//
// # Metrics
//
// Names follow OpenTelemetry's conventions under the agentmem. prefix;
// durations are histograms in seconds. The operations of Wrap are
// append, window, recall_with, recall, remember, forget and list; a histogram's
// count is the number of calls.
//
//	agentmem.operation.duration      s        agentmem.operation, agentmem.level, error.type
//	agentmem.operation.errors        {error}  agentmem.operation, agentmem.level, error.type
//	agentmem.recall.degraded         {recall} agentmem.operation
//	agentmem.recall.tier.errors      {error}  agentmem.tier, error.type
//	agentmem.model.duration          s        agentmem.model.operation, error.type
//	agentmem.model.calls             {call}   agentmem.model.operation, error.type
//	agentmem.model.tokens            {token}  agentmem.model.operation, agentmem.token.type
//	agentmem.model.unreported_calls  {call}   agentmem.model.operation
//	agentmem.embed.texts             {text}   agentmem.model.operation
//	agentmem.folds                   {fold}   agentmem.fold.outcome, agentmem.fold.flush, error.type
//	agentmem.fold.turns              {turn}   agentmem.fold.flush
//	agentmem.fold.facts              {fact}   agentmem.fold.flush
//	agentmem.http.request.duration   s        http.request.method, http.route, agentmem.http.status_class
//
// agentmem.level is present only for a call that names a level (Forget,
// and RecallWith with RecallOptions.Level set), as the memory.Level's
// value, or "_OTHER" for a string that is not a level; error.type only
// for a failed call. agentmem.recall.tier.errors counts the tiers
// RecallWith reports in Recollection.Errors (window, digest, facts);
// Recall reports its degradation as one joined error, so its recalls are
// counted in agentmem.recall.degraded only.
//
// # Model calls and tokens, counted once
//
// WrapSummarizer, WrapExtractor and WrapEmbedder count model use: each
// call of the wrapped implementation is a span and a sample of
// agentmem.model.duration (agentmem.model.operation summarize, extract,
// embed or embed_query), and the Usage it reports is added up:
// ModelCalls to agentmem.model.calls, PromptTokens and CompletionTokens to
// agentmem.model.tokens (agentmem.token.type input and output),
// UnreportedCalls to agentmem.model.unreported_calls. The Embedder
// interface reports no usage, so an Embed or EmbedQuery call counts as one
// model call whose tokens are unreported, and its texts go to
// agentmem.embed.texts. Wrap the embedder a cache (embedding.Cache) calls,
// not the cache, to count only what reaches the model.
//
// Telemetry.OnFold, the function for tiered.Options.OnFold, records what
// folds did (agentmem.folds by outcome, and the turns and facts of the
// folds that stored their digest) but not FoldReport.Usage, which the
// wrapped Summarizer and Extractor have counted already: with both in
// place every token is counted once. Likewise the span of a recall
// carries its Recollection.Usage as attributes, but only the wrapped
// Embedder adds to the metrics.
//
// # Serving metrics
//
// NewPrometheus returns an SDK MeterProvider and an http.Handler that
// serves its metrics in the Prometheus text exposition format, collected
// at each request; Handler records a service's requests by route.
//
// # Exporting spans
//
// Package telemetry/otlp makes a TracerProvider that exports spans to an
// OpenTelemetry collector over OTLP/HTTP. It is a package of its own: the
// exporter links gRPC and Protocol Buffers code, which a program that
// imports only this package does not.
package telemetry
