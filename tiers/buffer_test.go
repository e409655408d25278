package tiers_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/internal/tokens"
	"github.com/agentmem/memory/tiers"
)

// newBuffer returns a Buffer over st; nil means a fresh store with the
// zero posture.
func newBuffer(t *testing.T, st *backend.Store, opt tiers.BufferOptions) *tiers.Buffer {
	t.Helper()
	if st == nil {
		st = newStore(t, newClock())
	}
	b, err := tiers.NewBuffer(st, opt)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustAdd(t *testing.T, b *tiers.Buffer, id memory.Identity, role memory.Role, content string) {
	t.Helper()
	if err := b.Add(context.Background(), id, role, content); err != nil {
		t.Fatalf("Add(%q): %v", content, err)
	}
}

func contents(recs []memory.Record) []string {
	out := []string{}
	for _, r := range recs {
		out = append(out, r.Label+": "+r.Content)
	}
	return out
}

func mustWindow(t *testing.T, b *tiers.Buffer, id memory.Identity, max int) []memory.Record {
	t.Helper()
	w, err := b.Window(id, max)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestBufferWindowBudget(t *testing.T) {
	clock := newClock()
	b := newBuffer(t, newStore(t, clock), tiers.BufferOptions{})
	turns := []struct {
		role memory.Role
		text string
	}{
		{memory.RoleUser, "Which pods are failing in the ai-agents namespace?"},
		{memory.RoleAssistant, "Let me list them."},
		{memory.RoleTool, `{"pods":["a","b","c"]}`},
		{memory.RoleAssistant, "Three pods are in CrashLoopBackOff."},
	}
	var counter tokens.Counter
	cost := make([]int, len(turns))
	for i, tu := range turns {
		mustAdd(t, b, alice, tu.role, tu.text)
		cost[i] = countTokens(t, counter, tu.text)
	}
	all := mustWindow(t, b, alice, 0)
	if len(all) != 4 {
		t.Fatalf("unbounded window has %d turns, want 4", len(all))
	}
	for i, r := range all {
		want := memory.Record{Kind: memory.KindTurn, Label: string(turns[i].role), Content: turns[i].text, Tokens: cost[i], Identity: alice}
		if diff := cmp.Diff(want, r, cmpopts.IgnoreFields(memory.Record{}, "ID", "Key", "Metadata", "Created", "Expires", "Version", "Vector")); diff != "" {
			t.Fatalf("turn %d (-want +got):\n%s", i, diff)
		}
	}
	cases := []struct {
		budget int
		want   int // how many of the newest turns
	}{
		{cost[3], 1},
		{cost[3] + cost[2], 2},
		{cost[3] + cost[2] + cost[1] - 1, 2},
		{cost[3] + cost[2] + cost[1] + cost[0], 4},
		{cost[3] - 1, 0},
		{1 << 20, 4},
	}
	for _, tc := range cases {
		w := mustWindow(t, b, alice, tc.budget)
		if got, want := contents(w), contents(all[len(all)-tc.want:]); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("Window(%d) = %v, want %v", tc.budget, got, want)
		}
	}
	if _, err := b.Window(alice, -1); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Fatalf("Window(-1) = %v, want ErrInvalidArgument", err)
	}
	// The window is a copy.
	w := mustWindow(t, b, alice, 0)
	w[0].Content = "changed"
	if mustWindow(t, b, alice, 0)[0].Content == "changed" {
		t.Fatal("Window shares its slice with the buffer")
	}
}

func TestBufferStepLifecycle(t *testing.T) {
	b := newBuffer(t, nil, tiers.BufferOptions{})
	ctx := context.Background()
	if diff := cmp.Diff(memory.Recollection{}, mustRecall(t, b, alice)); diff != "" {
		t.Fatalf("Recall, want empty (-want +got):\n%s", diff)
	}
	mustAdd(t, b, alice, memory.RoleUser, "hello")
	// Recall is always empty: each step starts with an empty context window.
	if diff := cmp.Diff(memory.Recollection{}, mustRecall(t, b, alice)); diff != "" {
		t.Fatalf("Recall mid-step, want empty (-want +got):\n%s", diff)
	}
	if err := b.Save(ctx, alice, tiers.Step{Workflow: "w", Name: ""}); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Fatalf("Save with an invalid step = %v", err)
	}
	if len(mustWindow(t, b, alice, 0)) != 1 {
		t.Fatal("a failed Save discarded the step")
	}
	mustSave(t, b, alice, step(1))
	if w := mustWindow(t, b, alice, 0); len(w) != 0 {
		t.Fatalf("turns survived Save: %v", contents(w))
	}
	if r := mustRecall(t, b, alice); r.Text != "" {
		t.Fatalf("the next step recalled %q", r.Text)
	}
}

func TestBufferIsolation(t *testing.T) {
	b := newBuffer(t, nil, tiers.BufferOptions{})
	sameUserOtherSession := alice
	sameUserOtherSession.Session = "run-9"
	mustAdd(t, b, alice, memory.RoleUser, "alice run-1")
	mustAdd(t, b, bob, memory.RoleUser, "bob run-2")
	mustAdd(t, b, sameUserOtherSession, memory.RoleUser, "alice run-9")
	for _, c := range []struct {
		id   memory.Identity
		want string
	}{{alice, "user: alice run-1"}, {bob, "user: bob run-2"}, {sameUserOtherSession, "user: alice run-9"}} {
		if got := strings.Join(contents(mustWindow(t, b, c.id, 0)), "|"); got != c.want {
			t.Errorf("%+v sees %q, want %q", c.id, got, c.want)
		}
	}
	mustSave(t, b, alice, step(1))
	if len(mustWindow(t, b, bob, 0)) != 1 || len(mustWindow(t, b, sameUserOtherSession, 0)) != 1 {
		t.Fatal("ending alice's step discarded another identity's turns")
	}
}

func TestBufferMaxTurns(t *testing.T) {
	b := newBuffer(t, nil, tiers.BufferOptions{MaxTurns: 2})
	for i := 1; i <= 4; i++ {
		mustAdd(t, b, alice, memory.RoleUser, fmt.Sprint(i))
	}
	if got := strings.Join(contents(mustWindow(t, b, alice, 0)), "|"); got != "user: 3|user: 4" {
		t.Fatalf("window = %q", got)
	}
	if _, err := tiers.NewBuffer(newStore(t, newClock()), tiers.BufferOptions{MaxTurns: -1}); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Fatalf("NewBuffer(MaxTurns -1) = %v", err)
	}
	if _, err := tiers.NewBuffer(nil, tiers.BufferOptions{}); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Fatalf("NewBuffer(nil store) = %v", err)
	}
}

func TestBufferInvalidArguments(t *testing.T) {
	b := newBuffer(t, postureStore(t, newClock(), memory.Posture{RequirePrincipal: true}), tiers.BufferOptions{})
	ctx := context.Background()
	cases := []struct {
		name    string
		id      memory.Identity
		role    memory.Role
		content string
		want    error
	}{
		{"unknown role", alice, "robot", "x", memory.ErrInvalidArgument},
		{"invalid utf-8", alice, memory.RoleUser, "\xff", memory.ErrInvalidArgument},
		{"nul byte", alice, memory.RoleUser, "a\x00b", memory.ErrInvalidArgument},
		{"too large", alice, memory.RoleUser, strings.Repeat("a", memory.MaxContentBytes+1), memory.ErrTooLarge},
		{"no principal", memory.Identity{Agent: "a", Session: "s"}, memory.RoleUser, "x", memory.ErrIncompleteScope},
		{"malformed identity", memory.Identity{User: "alice\n"}, memory.RoleUser, "x", memory.ErrInvalidArgument},
	}
	for _, tc := range cases {
		if err := b.Add(ctx, tc.id, tc.role, tc.content); !errors.Is(err, tc.want) {
			t.Errorf("%s: Add = %v, want %v", tc.name, err, tc.want)
		}
	}
	if w := mustWindow(t, b, alice, 0); len(w) != 0 {
		t.Fatalf("failed Adds stored %v", contents(w))
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := b.Add(cancelled, alice, memory.RoleUser, "x"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Add = %v, want context.Canceled", err)
	}
	if _, err := b.Recall(cancelled, alice, ""); !errors.Is(err, context.Canceled) {
		t.Fatalf("Recall = %v, want context.Canceled", err)
	}
	if err := b.Save(cancelled, alice, step(1)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Save = %v, want context.Canceled", err)
	}
	if _, err := b.Forget(cancelled, alice, memory.LevelUser); !errors.Is(err, context.Canceled) {
		t.Fatalf("Forget = %v, want context.Canceled", err)
	}
}

func TestBufferForget(t *testing.T) {
	b := newBuffer(t, nil, tiers.BufferOptions{})
	otherSession := alice
	otherSession.Session = "run-9"
	mustAdd(t, b, alice, memory.RoleUser, "a1")
	mustAdd(t, b, alice, memory.RoleAssistant, "a2")
	mustAdd(t, b, otherSession, memory.RoleUser, "a3")
	mustAdd(t, b, bob, memory.RoleUser, "b1")
	n, err := b.Forget(context.Background(), alice, memory.LevelUser)
	if err != nil || n != 3 {
		t.Fatalf("Forget = %d, %v; want 3", n, err)
	}
	if len(mustWindow(t, b, alice, 0)) != 0 || len(mustWindow(t, b, otherSession, 0)) != 0 || len(mustWindow(t, b, bob, 0)) != 1 {
		t.Fatal("Forget removed the wrong turns")
	}
	if _, err := b.Forget(context.Background(), memory.Identity{Agent: "a"}, memory.LevelSession); !errors.Is(err, memory.ErrIncompleteScope) {
		t.Fatalf("Forget without a session = %v, want ErrIncompleteScope", err)
	}
	if _, err := b.Forget(context.Background(), alice, memory.LevelStore); !errors.Is(err, memory.ErrPermissionDenied) {
		t.Fatalf("Forget at store level = %v, want ErrPermissionDenied", err)
	}
}

func TestBufferConcurrent(t *testing.T) {
	b := newBuffer(t, nil, tiers.BufferOptions{})
	const sessions, turns = 8, 50
	var wg sync.WaitGroup
	for s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := memory.Identity{User: "u", Agent: "a", Session: fmt.Sprint("run-", s)}
			for i := range turns {
				if err := b.Add(context.Background(), id, memory.RoleUser, fmt.Sprint(s, "/", i)); err != nil {
					t.Error(err)
					return
				}
				if _, err := b.Window(id, 20); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for s := range sessions {
		id := memory.Identity{User: "u", Agent: "a", Session: fmt.Sprint("run-", s)}
		w := mustWindow(t, b, id, 0)
		if len(w) != turns {
			t.Fatalf("session %d holds %d turns, want %d", s, len(w), turns)
		}
		for i, r := range w {
			if r.Content != fmt.Sprint(s, "/", i) {
				t.Fatalf("session %d turn %d = %q: turns mixed or reordered", s, i, r.Content)
			}
		}
	}
}

func TestNone(t *testing.T) {
	var n tiers.None
	ctx := context.Background()
	if diff := cmp.Diff(memory.Recollection{}, mustRecall(t, n, alice)); diff != "" {
		t.Fatalf("Recall, want empty (-want +got):\n%s", diff)
	}
	mustSave(t, n, alice, step(1))
	if r := mustRecall(t, n, alice); r.Text != "" {
		t.Fatalf("None remembered %q", r.Text)
	}
	if err := n.Save(ctx, alice, tiers.Step{Workflow: "w/x", Name: "s"}); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Fatalf("Save with an invalid step = %v", err)
	}
	if _, err := n.Recall(ctx, memory.Identity{User: " bad"}, ""); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Fatalf("Recall with a malformed identity = %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := n.Save(cancelled, alice, step(1)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Save = %v, want context.Canceled", err)
	}
	if _, err := n.Recall(cancelled, alice, ""); !errors.Is(err, context.Canceled) {
		t.Fatalf("Recall = %v, want context.Canceled", err)
	}
}
