package telemetry_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/extract"
	"github.com/agentmem/memory/recall"
	"github.com/agentmem/memory/telemetry"
	"github.com/agentmem/memory/tiers/tiered"
)

// fakeMemory answers every call with err and its canned results, and
// remembers the context of the last call.
type fakeMemory struct {
	tiered.Interface // calls the interface may gain: not called here

	err          error
	appended     tiered.Appended
	records      []memory.Record
	recollection tiered.Recollection
	recalled     memory.Recollection
	erased       tiered.Erased
	listing      tiered.Listing
	ctx          context.Context
}

func (f *fakeMemory) List(ctx context.Context, id memory.Identity, opt tiered.ListOptions) (tiered.Listing, error) {
	f.ctx = ctx
	return f.listing, f.err
}

func (f *fakeMemory) Append(ctx context.Context, id memory.Identity, turns ...tiered.Turn) (tiered.Appended, error) {
	f.ctx = ctx
	return f.appended, f.err
}

func (f *fakeMemory) Window(ctx context.Context, id memory.Identity, budget int) ([]memory.Record, error) {
	f.ctx = ctx
	return f.records, f.err
}

func (f *fakeMemory) RecallWith(ctx context.Context, id memory.Identity, text string, opt tiered.RecallOptions) (tiered.Recollection, error) {
	f.ctx = ctx
	return f.recollection, f.err
}

func (f *fakeMemory) Recall(ctx context.Context, id memory.Identity, about string) (memory.Recollection, error) {
	f.ctx = ctx
	return f.recalled, f.err
}

func (f *fakeMemory) Remember(ctx context.Context, id memory.Identity, texts ...string) ([]memory.Record, error) {
	f.ctx = ctx
	return f.records, f.err
}

func (f *fakeMemory) Forget(ctx context.Context, id memory.Identity, level memory.Level) (tiered.Erased, error) {
	f.ctx = ctx
	return f.erased, f.err
}

var alice = memory.Identity{Tenant: "acme", User: "alice", Agent: "concierge", Session: "s1"}

func TestErrorClass(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{memory.Errorf(memory.ErrNotFound, "x"), "not_found"},
		{fmt.Errorf("wrapped: %w", memory.Errorf(memory.ErrInvalidArgument, "x")), "invalid_argument"},
		{memory.ErrIncompleteScope, "incomplete_scope"},
		{memory.ErrPermissionDenied, "permission_denied"},
		{memory.Wrap(memory.ErrConflict, errors.New("native"), "x"), "conflict"},
		{memory.ErrTooLarge, "too_large"},
		{memory.ErrUnimplemented, "unimplemented"},
		{memory.ErrClosed, "closed"},
		{memory.ErrUnavailable, "unavailable"},
		{extract.Malformed("no JSON"), "malformed_output"},
		{context.Canceled, "canceled"},
		{fmt.Errorf("op: %w", context.DeadlineExceeded), "deadline_exceeded"},
		{errors.New("something else"), "_OTHER"},
	} {
		if got := telemetry.ErrorClass(c.err); got != c.want {
			t.Errorf("ErrorClass(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}

// Every operation is a span named after it and a sample of the duration
// histogram; a failure adds error.type to both, counts in the errors
// counter and sets the span's status.
func TestWrapRecordsOperations(t *testing.T) {
	r := newRig(t, telemetry.Options{})
	f := &fakeMemory{
		appended: tiered.Appended{Turns: 2, Folding: true},
		records:  []memory.Record{{ID: "r1"}, {ID: "r2"}, {ID: "r3"}},
		erased:   tiered.Erased{Turns: 4, Digests: 1, Facts: 2, Work: 3},
	}
	m := telemetry.Wrap(f, r.t)
	ctx := context.Background()
	turns := []tiered.Turn{{Role: memory.RoleUser, Content: "a"}, {Role: memory.RoleUser, Content: "b"}}

	if _, err := m.Append(ctx, alice, turns...); err != nil {
		t.Fatal(err)
	}
	if !trace.SpanFromContext(f.ctx).SpanContext().IsValid() {
		t.Error("the wrapped memory's context carries no span")
	}
	m.Window(ctx, alice, 100)
	m.RecallWith(ctx, alice, "q", tiered.RecallOptions{Level: memory.LevelAgent, K: 3})
	m.Recall(ctx, alice, "q")
	m.Remember(ctx, alice, "x", "y")
	m.Forget(ctx, alice, memory.LevelUser)

	f.err = memory.Errorf(memory.ErrIncompleteScope, "no session")
	if _, err := m.Append(ctx, alice, turns...); !errors.Is(err, memory.ErrIncompleteScope) {
		t.Errorf("Append's error is %v, not the wrapped memory's", err)
	}
	m.Append(ctx, alice)
	f.err = memory.ErrPermissionDenied
	m.Forget(ctx, alice, memory.LevelStore)
	f.err = context.Canceled
	m.RecallWith(ctx, alice, "q", tiered.RecallOptions{Level: "nonsense"})

	all := r.metrics(t)
	checkPoints(t, all, "agentmem.operation.duration", "s",
		point{attrs{"agentmem.operation": "append"}, 1},
		point{attrs{"agentmem.operation": "window"}, 1},
		point{attrs{"agentmem.operation": "recall_with", "agentmem.level": "agent"}, 1},
		point{attrs{"agentmem.operation": "recall"}, 1},
		point{attrs{"agentmem.operation": "remember"}, 1},
		point{attrs{"agentmem.operation": "forget", "agentmem.level": "user"}, 1},
		point{attrs{"agentmem.operation": "append", "error.type": "incomplete_scope"}, 2},
		point{attrs{"agentmem.operation": "forget", "agentmem.level": "store", "error.type": "permission_denied"}, 1},
		point{attrs{"agentmem.operation": "recall_with", "agentmem.level": "_OTHER", "error.type": "canceled"}, 1},
	)
	checkPoints(t, all, "agentmem.operation.errors", "{error}",
		point{attrs{"agentmem.operation": "append", "error.type": "incomplete_scope"}, 2},
		point{attrs{"agentmem.operation": "forget", "agentmem.level": "store", "error.type": "permission_denied"}, 1},
		point{attrs{"agentmem.operation": "recall_with", "agentmem.level": "_OTHER", "error.type": "canceled"}, 1},
	)
	for _, name := range []string{"agentmem.recall.degraded", "agentmem.recall.tier.errors"} {
		if _, ok := all[name]; ok {
			t.Errorf("%s recorded without a degraded recall", name)
		}
	}

	spans := r.spans.Ended()
	var names []string
	for _, s := range spans {
		names = append(names, s.Name())
		if s.SpanKind() != trace.SpanKindInternal {
			t.Errorf("%s: kind %v", s.Name(), s.SpanKind())
		}
	}
	wantNames := []string{"agentmem.append", "agentmem.window", "agentmem.recall_with", "agentmem.recall",
		"agentmem.remember", "agentmem.forget", "agentmem.append", "agentmem.append", "agentmem.forget", "agentmem.recall_with"}
	if !slices.Equal(names, wantNames) {
		t.Fatalf("spans %v, want %v", names, wantNames)
	}
	for i, want := range []attrs{
		{"agentmem.operation": "append", "agentmem.turns": "2", "agentmem.append.stored": "2", "agentmem.append.folding": "true"},
		{"agentmem.operation": "window", "agentmem.budget": "100", "agentmem.records": "3"},
		{"agentmem.operation": "recall_with", "agentmem.level": "agent", "agentmem.recall.k": "3", "agentmem.budget": "0",
			"agentmem.recall.window": "0", "agentmem.recall.digest": "false", "agentmem.recall.facts": "0",
			"agentmem.recall.tokens": "0", "agentmem.recall.model_calls": "0", "agentmem.recall.degraded": "false"},
		{"agentmem.operation": "recall", "agentmem.records": "0", "agentmem.recall.tokens": "0", "agentmem.recall.degraded": "false"},
		{"agentmem.operation": "remember", "agentmem.texts": "2", "agentmem.records": "3"},
		{"agentmem.operation": "forget", "agentmem.level": "user", "agentmem.erased.turns": "4",
			"agentmem.erased.digests": "1", "agentmem.erased.facts": "2", "agentmem.erased.work": "3"},
		{"agentmem.operation": "append", "agentmem.turns": "2", "agentmem.append.stored": "2", "agentmem.append.folding": "true",
			"error.type": "incomplete_scope"},
	} {
		checkAttrs(t, spans[i].Name(), spanAttrs(spans[i]), want)
	}
	for i, s := range spans {
		wantErr := i >= 6
		if got := s.Status().Code == codes.Error; got != wantErr {
			t.Errorf("span %d %s: status %v", i, s.Name(), s.Status())
		}
		if wantErr && s.Status().Description != spanAttrs(s)["error.type"] {
			t.Errorf("span %d: status description %q, error.type %q", i, s.Status().Description, spanAttrs(s)["error.type"])
		}
		if len(s.Events()) != 0 {
			t.Errorf("span %d has events %v", i, s.Events())
		}
	}
}

func checkAttrs(t *testing.T, what string, got, want attrs) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s = %q, want %q", what, k, got[k], v)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: unexpected attribute %s = %q", what, k, got[k])
		}
	}
}

// A degraded recall is counted once, and RecallWith's failed tiers each
// by their error's class.
func TestWrapRecordsDegradedRecalls(t *testing.T) {
	r := newRig(t, telemetry.Options{})
	f := &fakeMemory{
		recollection: tiered.Recollection{
			Window: []memory.Record{{ID: "t1"}}, Facts: []recall.Result{},
			Degraded: true, Errors: tiered.TierErrors{Digest: memory.ErrUnavailable, Facts: context.DeadlineExceeded},
			Usage: extract.Usage{ModelCalls: 1, UnreportedCalls: 1},
		},
		recalled: memory.Recollection{Degraded: memory.ErrUnavailable},
	}
	m := telemetry.Wrap(f, r.t)
	ctx := context.Background()
	m.RecallWith(ctx, alice, "q", tiered.RecallOptions{})
	m.RecallWith(ctx, alice, "q", tiered.RecallOptions{})
	m.Recall(ctx, alice, "q")
	f.recollection.Errors = tiered.TierErrors{Window: memory.ErrClosed}
	m.RecallWith(ctx, alice, "q", tiered.RecallOptions{})

	all := r.metrics(t)
	checkPoints(t, all, "agentmem.recall.degraded", "{recall}",
		point{attrs{"agentmem.operation": "recall_with"}, 3},
		point{attrs{"agentmem.operation": "recall"}, 1},
	)
	checkPoints(t, all, "agentmem.recall.tier.errors", "{error}",
		point{attrs{"agentmem.tier": "digest", "error.type": "unavailable"}, 2},
		point{attrs{"agentmem.tier": "facts", "error.type": "deadline_exceeded"}, 2},
		point{attrs{"agentmem.tier": "window", "error.type": "closed"}, 1},
	)
	// A degraded recall succeeded: it is no operation error.
	if _, ok := all["agentmem.operation.errors"]; ok {
		t.Error("a degraded recall counted as an operation error")
	}
	s := r.spans.Ended()[0]
	checkAttrs(t, s.Name(), spanAttrs(s), attrs{
		"agentmem.operation": "recall_with", "agentmem.recall.k": "0", "agentmem.budget": "0",
		"agentmem.recall.window": "1", "agentmem.recall.digest": "false", "agentmem.recall.facts": "0",
		"agentmem.recall.tokens": "0", "agentmem.recall.model_calls": "1", "agentmem.recall.degraded": "true",
		"agentmem.recall.degraded_tiers": `["digest","facts"]`,
	})
	if s.Status().Code == codes.Error {
		t.Error("a degraded recall's span has status Error")
	}
}

// Without a provider, or without a Telemetry, the wrappers return what
// they are given.
func TestDisabledReturnsTheWrapped(t *testing.T) {
	off, err := telemetry.New(telemetry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeMemory{}
	sum, ext := &extract.Rules{}, &extract.Rules{}
	for _, tel := range []*telemetry.Telemetry{nil, off} {
		if m := telemetry.Wrap(f, tel); m != tiered.Interface(f) {
			t.Errorf("Wrap(%v) = %T", tel, m)
		}
		if s := telemetry.WrapSummarizer(sum, tel); s != extract.Summarizer(sum) {
			t.Errorf("WrapSummarizer(%v) = %T", tel, s)
		}
		if e := telemetry.WrapExtractor(ext, tel); e != extract.Extractor(ext) {
			t.Errorf("WrapExtractor(%v) = %T", tel, e)
		}
		emb := plainEmbedder{}
		if e := telemetry.WrapEmbedder(emb, tel); e != memory.Embedder(emb) {
			t.Errorf("WrapEmbedder(%v) = %T", tel, e)
		}
		tel.OnFold(tiered.FoldReport{Stored: true, Turns: 3})
	}
	on := newRig(t, telemetry.Options{})
	if m := telemetry.Wrap(f, on.t); m == tiered.Interface(f) {
		t.Error("Wrap with providers returned the memory unwrapped")
	}
}

// The span of a wrapped call holds none of what the call was given or
// returned, and no error message: not the identity, the texts, the ids.
func TestWrapRecordsNoUserData(t *testing.T) {
	r := newRig(t, telemetry.Options{})
	const marker = "SECRET"
	who := memory.Identity{Tenant: "t-" + marker, User: "u-" + marker, Agent: "a-" + marker,
		Instance: "i-" + marker, Squad: "q-" + marker, Session: "s-" + marker}
	rec := memory.Record{ID: "id-" + marker, Content: "content-" + marker, Identity: who}
	f := &fakeMemory{
		records:      []memory.Record{rec},
		recollection: tiered.Recollection{Window: []memory.Record{rec}, Digest: &rec, Text: "text-" + marker, Degraded: true, Errors: tiered.TierErrors{Facts: memory.Errorf(memory.ErrUnavailable, "embedder at %s-host", marker)}},
		recalled:     memory.Recollection{Records: []memory.Record{rec}, Text: "text-" + marker, Degraded: errors.New(marker)},
	}
	m := telemetry.Wrap(f, r.t)
	ctx := context.Background()
	run := func() {
		m.Append(ctx, who, tiered.Turn{Role: memory.RoleUser, Content: "said-" + marker, Speaker: "speaker-" + marker})
		m.Window(ctx, who, 0)
		m.RecallWith(ctx, who, "query-"+marker, tiered.RecallOptions{Level: memory.Level("level-" + marker)})
		m.Recall(ctx, who, "query-"+marker)
		m.Remember(ctx, who, "fact-"+marker)
		m.Forget(ctx, who, memory.Level("level-"+marker))
	}
	run()
	f.err = memory.Errorf(memory.ErrNotFound, "record id-%s of %s", marker, who.User)
	run()
	f.err = errors.New("native failure quoting " + marker)
	run()

	spans := r.spans.Ended()
	if len(spans) != 18 {
		t.Fatalf("%d spans, want 18", len(spans))
	}
	for _, s := range spans {
		for _, text := range spanStrings(s) {
			if strings.Contains(text, marker) {
				t.Errorf("span %s holds user data: %q", s.Name(), text)
			}
		}
	}
	checkNoMarkerInMetrics(t, r, marker)
}

func checkNoMarkerInMetrics(t *testing.T, r *rig, marker string) {
	t.Helper()
	for name, m := range r.metrics(t) {
		for _, p := range points(t, m, m.Unit) {
			for k, v := range p.attrs {
				if strings.Contains(k+v, marker) {
					t.Errorf("metric %s holds user data: %s=%q", name, k, v)
				}
			}
		}
	}
}

// TestWrapRecordsList checks List's span, counts and error class.
func TestWrapRecordsList(t *testing.T) {
	r := newRig(t, telemetry.Options{})
	f := &fakeMemory{listing: tiered.Listing{Window: []memory.Record{{ID: "t1"}}, Digest: &memory.Record{ID: "d"}, Facts: []memory.Record{{ID: "f1"}, {ID: "f2"}}}}
	m := telemetry.Wrap(f, r.t)
	ctx := context.Background()
	if l, err := m.List(ctx, alice, tiered.ListOptions{Level: memory.LevelUser}); err != nil || len(l.Facts) != 2 {
		t.Fatalf("List: %+v, %v", l, err)
	}
	f.err = memory.ErrIncompleteScope
	m.List(ctx, alice, tiered.ListOptions{})
	all := r.metrics(t)
	checkPoints(t, all, "agentmem.operation.duration", "s",
		point{attrs{"agentmem.operation": "list", "agentmem.level": "user"}, 1},
		point{attrs{"agentmem.operation": "list", "error.type": "incomplete_scope"}, 1},
	)
	spans := r.spans.Ended()
	if len(spans) != 2 || spans[0].Name() != "agentmem.list" {
		t.Fatalf("spans %v", spans)
	}
	checkAttrs(t, spans[0].Name(), spanAttrs(spans[0]), attrs{"agentmem.operation": "list", "agentmem.level": "user",
		"agentmem.list.window": "1", "agentmem.list.digest": "true", "agentmem.list.facts": "2"})
}
