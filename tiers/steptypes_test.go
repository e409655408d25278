package tiers_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/tiers"
)

// The step memory types by their spec.memory.type names, the default
// first.
const (
	typeBuffer  = "buffer"
	typeSummary = "summary"
	typeVector  = "vector"
	typeNone    = "none"
)

var memoryTypes = []string{typeBuffer, typeSummary, typeVector, typeNone}

// everyType builds every step memory type from st with its default
// options, as an executor does for a spec.memory naming only the type
// (package agentspec), vector memory in a fresh directory.
func everyType(t *testing.T, st *backend.Store) map[string]tiers.StepMemory {
	t.Helper()
	ctx := context.Background()
	out := map[string]tiers.StepMemory{}
	for _, typ := range memoryTypes {
		var (
			mem tiers.StepMemory
			err error
		)
		switch typ {
		case typeBuffer:
			mem, err = tiers.NewBuffer(st, tiers.BufferOptions{})
		case typeSummary:
			mem, err = tiers.NewSummary(st, tiers.SummaryOptions{})
		case typeVector:
			var v *tiers.Vector
			if v, err = tiers.NewVector(ctx, st, tiers.VectorOptions{Dir: t.TempDir()}); err == nil {
				t.Cleanup(func() { _ = v.Close() })
				mem = v
			}
		case typeNone:
			mem, err = tiers.NewNone(st)
		}
		if err != nil {
			t.Fatalf("building %s memory: %v", typ, err)
		}
		out[typ] = mem
	}
	return out
}

// errClass names the sentinel err matches: "ok" for nil.
func errClass(err error) string {
	if err == nil {
		return "ok"
	}
	for _, kind := range []error{memory.ErrNotFound, memory.ErrInvalidArgument, memory.ErrIncompleteScope, memory.ErrPermissionDenied,
		memory.ErrConflict, memory.ErrTooLarge, memory.ErrUnimplemented, memory.ErrClosed, context.Canceled} {
		if errors.Is(err, kind) {
			return kind.Error()
		}
	}
	return "unclassified: " + err.Error()
}

// outcome is what each call of one memory type gives one identity.
type outcome struct {
	Save, Recall string
	// ForgetUser and ForgetAgent are Forget at the user and agent levels;
	// "n/a" for None, which is no memory.Forgetter.
	ForgetUser, ForgetAgent string
	// Own is the type's own calls, which must agree with Save and Recall:
	// Buffer's Add and Window, Vector's Search; "n/a" for the others.
	Own string
}

// TestPostureReachesEveryType builds every memory type from one Store
// (the one source of posture), then changes the store's posture and
// checks that every type refuses exactly the same writes and reads.
func TestPostureReachesEveryType(t *testing.T) {
	ctx := context.Background()
	full := memory.Identity{Tenant: "acme", User: "alice", Agent: "kaos://agent/ai/monitor", Session: "run-1"}
	noUser, noAgent := full, full
	noUser.User, noAgent.Agent = "", ""
	ids := map[string]memory.Identity{"full": full, "no user": noUser, "no agent": noAgent}
	const ok, refused = "ok", "memory: incomplete scope"
	type answers struct{ save, forgetUser, forgetAgent string } // Recall answers as Save does
	for _, tc := range []struct {
		name    string
		posture memory.Posture
		want    map[string]answers
	}{
		{"zero posture", memory.Posture{}, map[string]answers{
			"full":     {ok, ok, ok},
			"no user":  {ok, refused, ok},
			"no agent": {refused, ok, refused}, // the types' agent level needs an agent
		}},
		{"RequirePrincipal", memory.Posture{RequirePrincipal: true}, map[string]answers{
			"full":     {ok, ok, ok},
			"no user":  {refused, refused, refused},
			"no agent": {refused, ok, refused},
		}},
		{"RequireAgentIdentity", memory.Posture{RequireAgentIdentity: true}, map[string]answers{
			"full":     {ok, ok, ok},
			"no user":  {ok, refused, ok},
			"no agent": {refused, refused, refused},
		}},
		{"both", memory.Posture{RequirePrincipal: true, RequireAgentIdentity: true}, map[string]answers{
			"full":     {ok, ok, ok},
			"no user":  {refused, refused, refused},
			"no agent": {refused, refused, refused},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{Posture: tc.posture})
			t.Cleanup(func() { _ = st.Close() })
			mems := everyType(t, st)
			for idName, id := range ids {
				want, got := map[string]outcome{}, map[string]outcome{}
				for typ, mem := range mems {
					w := tc.want[idName]
					want[typ] = outcome{Save: w.save, Recall: w.save, ForgetUser: w.forgetUser, ForgetAgent: w.forgetAgent, Own: "n/a"}
					var o outcome
					o.Save = errClass(mem.Save(ctx, id, step(1)))
					_, err := mem.Recall(ctx, id, "")
					o.Recall = errClass(err)
					o.ForgetUser, o.ForgetAgent = "n/a", "n/a"
					if f, isForgetter := mem.(memory.Forgetter); isForgetter {
						_, err = f.Forget(ctx, id, memory.LevelUser)
						o.ForgetUser = errClass(err)
						_, err = f.Forget(ctx, id, memory.LevelAgent)
						o.ForgetAgent = errClass(err)
					} else {
						w := want[typ]
						w.ForgetUser, w.ForgetAgent = "n/a", "n/a"
						want[typ] = w
					}
					o.Own = "n/a"
					switch m := mem.(type) {
					case *tiers.Buffer:
						add := errClass(m.Add(ctx, id, memory.RoleUser, "hello"))
						_, err := m.Window(id, 0)
						o.Own = "Add " + add + ", Window " + errClass(err)
						w := want[typ]
						w.Own = "Add " + w.Save + ", Window " + w.Recall
						want[typ] = w
					case *tiers.Vector:
						_, err := m.Search(ctx, id, "in", 3)
						o.Own = "Search " + errClass(err)
						w := want[typ]
						w.Own = "Search " + w.Recall
						want[typ] = w
					}
					got[typ] = o
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("identity %q under %+v (-want +got):\n%s", idName, tc.posture, diff)
				}
			}
		})
	}
}

// TestEveryTypeRefusesInvalidUTF8 checks the one rule for text that is
// not valid UTF-8: every type's Save refuses it, and nothing is stored.
func TestEveryTypeRefusesInvalidUTF8(t *testing.T) {
	ctx := context.Background()
	clock := newClock()
	st := newStore(t, clock)
	mems := everyType(t, st)
	who := memory.Identity{Tenant: "acme", Agent: "kaos://agent/ai/monitor", Session: "run-1"}
	bad := []tiers.Step{
		{Workflow: "w", Name: "s", Input: "a\xffb", Output: "fine"},
		{Workflow: "w", Name: "s", Input: "fine", Output: "cut in the middle of \xe6\x97"},
		{Workflow: "w", Name: "s", Input: "\xc0\x80", Output: ""}, // an overlong NUL
	}
	for _, typ := range memoryTypes {
		for _, s := range bad {
			if err := mems[typ].Save(ctx, who, s); !errors.Is(err, memory.ErrInvalidArgument) {
				t.Errorf("%s: Save(%q, %q) = %v, want ErrInvalidArgument", typ, s.Input, s.Output, err)
			}
		}
		if typ == typeBuffer {
			b := mems[typ].(*tiers.Buffer)
			if err := b.Add(ctx, who, memory.RoleUser, "a\xffb"); !errors.Is(err, memory.ErrInvalidArgument) {
				t.Errorf("buffer: Add of invalid UTF-8 = %v, want ErrInvalidArgument", err)
			}
		}
		if r, err := mems[typ].Recall(ctx, who, ""); err != nil || r.Text != "" {
			t.Errorf("%s: after refused saves Recall = %q, %v; want nothing", typ, r.Text, err)
		}
	}
	if recs := stored(t, st, who); len(recs) != 0 {
		t.Errorf("refused saves stored %d summaries", len(recs))
	}
	dir := mems[typeVector].(*tiers.Vector).Dir()
	if files, _ := filepath.Glob(filepath.Join(dir, "*.txt")); len(files) != 0 {
		t.Errorf("refused saves wrote vector entries %v", files)
	}
}

// wordCounter counts the white-space-separated words of a text, so a test
// can tell the store's counter from the default cl100k_base one. With
// failOnBlock it fails on any text holding a recalled line under the
// block's header: the count of a whole recalled block, never a line's or
// the bare framing's.
type wordCounter struct{ failOnBlock bool }

var errBlockCount = errors.New("the block is not counted")

func (c wordCounter) CountTokens(ctx context.Context, s string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if c.failOnBlock && strings.Contains(s, tiers.ContextHeader+"\n[") {
		return 0, errBlockCount
	}
	return len(strings.Fields(s)), nil
}

// TestEveryTypeRecallsByRecency checks the one Recall shape every step
// memory type implements: each recalls by recency, so what the step is
// about never changes what it recalls; Tokens is the store's counter's
// count of Text (zero for nothing); none degrades.
func TestEveryTypeRecallsByRecency(t *testing.T) {
	ctx := context.Background()
	clock := newClock()
	clock.tick = time.Second
	st := backend.NewStore(inmem.New(inmem.Options{Clock: clock.Now}), backend.StoreOptions{Clock: clock.Now, Tokens: wordCounter{}})
	t.Cleanup(func() { _ = st.Close() })
	mems := everyType(t, st)
	who := memory.Identity{Tenant: "acme", Agent: "kaos://agent/ai/monitor", Session: "run-1"}
	for _, typ := range memoryTypes {
		for i := 1; i <= 3; i++ {
			mustSave(t, mems[typ], who, step(i))
		}
	}
	who.Session = "run-2"
	abouts := []string{"", "in 1", "out 3 in 2", "something else entirely", strings.Repeat("in 1 ", 10_000)}
	for _, typ := range memoryTypes {
		first, err := mems[typ].Recall(ctx, who, abouts[0])
		if err != nil {
			t.Fatalf("%s: Recall: %v", typ, err)
		}
		wantText := ""
		if typ == typeSummary || typ == typeVector {
			wantText = block(line(1), line(2), line(3))
		}
		if first.Text != wantText {
			t.Errorf("%s: Text =\n%s\nwant\n%s", typ, first.Text, wantText)
		}
		if want := len(strings.Fields(first.Text)); first.Tokens != want {
			t.Errorf("%s: Tokens = %d, want %d (the store's counter's count of Text)", typ, first.Tokens, want)
		}
		if first.Degraded != nil {
			t.Errorf("%s: Degraded = %v, want nil", typ, first.Degraded)
		}
		for _, about := range abouts[1:] {
			got, err := mems[typ].Recall(ctx, who, about)
			if err != nil {
				t.Fatalf("%s: Recall about %.20q: %v", typ, about, err)
			}
			if diff := cmp.Diff(first, got); diff != "" {
				t.Errorf("%s: Recall about %.20q differs from Recall about nothing (-want +got):\n%s", typ, about, diff)
			}
		}
	}
}

// TestRecallCountFailureFails checks that a type that renders a block
// counts it: when the store's counter fails on the block, Summary and
// Vector fail the call rather than report a wrong Tokens or degrade.
func TestRecallCountFailureFails(t *testing.T) {
	ctx := context.Background()
	clock := newClock()
	clock.tick = time.Second
	st := backend.NewStore(inmem.New(inmem.Options{Clock: clock.Now}), backend.StoreOptions{Clock: clock.Now, Tokens: wordCounter{failOnBlock: true}})
	t.Cleanup(func() { _ = st.Close() })
	mems := everyType(t, st)
	who := memory.Identity{Tenant: "acme", Agent: "kaos://agent/ai/monitor", Session: "run-1"}
	for _, typ := range memoryTypes {
		mustSave(t, mems[typ], who, step(1))
		_, err := mems[typ].Recall(ctx, who, "in 1")
		var want error
		if typ == typeSummary || typ == typeVector {
			want = errBlockCount
		}
		if !errors.Is(err, want) {
			t.Errorf("%s: Recall = %v, want %v", typ, err, want)
		}
	}
}
