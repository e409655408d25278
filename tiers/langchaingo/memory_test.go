package langchaingo_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"
	lcmemory "github.com/tmc/langchaingo/memory"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/tiers/langchaingo"
	"github.com/agentmem/memory/tiers/tiered"
)

// TestMemoryClear: Clear erases the session's turns and the facts saved
// in it, and leaves other sessions alone.
func TestMemoryClear(t *testing.T) {
	eachDriver(t, func(t *testing.T, m *tiered.Memory) {
		ctx := context.Background()
		keep, _ := langchaingo.NewMemory(m, s1, langchaingo.MemoryOptions{})
		mem, _ := langchaingo.NewMemory(m, s2, langchaingo.MemoryOptions{Level: memory.LevelAgent})
		for _, c := range []struct {
			mem *langchaingo.Memory
			say string
		}{{keep, "Keep this"}, {mem, "Erase this"}} {
			if err := c.mem.SaveContext(ctx, map[string]any{"input": c.say}, map[string]any{"text": "OK"}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := m.Remember(ctx, s2, "Alice plays the cello"); err != nil {
			t.Fatal(err)
		}
		if err := mem.Clear(ctx); err != nil {
			t.Fatal(err)
		}
		if got := window(t, m, s2); len(got) != 0 {
			t.Errorf("after Clear the window holds %q", got)
		}
		vars, err := mem.LoadMemoryVariables(ctx, map[string]any{"input": "Which instrument does Alice play?"})
		if err != nil {
			t.Fatal(err)
		}
		if vars["history"] != "" {
			t.Errorf("after Clear the recall is %q, want empty", vars["history"])
		}
		if got := window(t, m, s1); !slices.Equal(got, []string{"user: Keep this", "assistant: OK"}) {
			t.Errorf("Clear of s2 changed s1's window: %q", got)
		}
	})
}

// TestReturnMessages: with ReturnMessages the memory is a system message
// with the facts, then the window as human and ai messages.
func TestReturnMessages(t *testing.T) {
	ctx := context.Background()
	m := newTiered(t, "inmem")
	if _, err := m.Remember(ctx, s1, "Alice's cat is called Miso"); err != nil {
		t.Fatal(err)
	}
	mem, err := langchaingo.NewMemory(m, s2, langchaingo.MemoryOptions{Level: memory.LevelAgent, ReturnMessages: true, MemoryKey: "chat_history"})
	if err != nil {
		t.Fatal(err)
	}
	if err := mem.SaveContext(ctx, map[string]any{"input": "Hello"}, map[string]any{"text": "Hi Alice"}); err != nil {
		t.Fatal(err)
	}
	vars, err := mem.LoadMemoryVariables(ctx, map[string]any{"input": "my cat"})
	if err != nil {
		t.Fatal(err)
	}
	msgs, ok := vars["chat_history"].([]llms.ChatMessage)
	if !ok || len(vars) != 1 {
		t.Fatalf("variables %#v, want []llms.ChatMessage under chat_history", vars)
	}
	want := []string{
		"system: " + tiered.BlockStart + "\nKnown facts:\n- Alice's cat is called Miso\n" + tiered.BlockEnd,
		"human: Hello",
		"ai: Hi Alice",
	}
	if got := describe(msgs); !slices.Equal(got, want) {
		t.Errorf("messages = %q, want %q", got, want)
	}
	// Nothing recalled but the window: no system message.
	mem3, _ := langchaingo.NewMemory(m, other, langchaingo.MemoryOptions{ReturnMessages: true})
	_ = mem3.SaveContext(ctx, map[string]any{"q": "Hi"}, map[string]any{"a": "Hello Bob"})
	vars, err = mem3.LoadMemoryVariables(ctx, map[string]any{"q": "cat"})
	if err != nil {
		t.Fatal(err)
	}
	if got := describe(vars["history"].([]llms.ChatMessage)); !slices.Equal(got, []string{"human: Hi", "ai: Hello Bob"}) {
		t.Errorf("messages = %q", got)
	}
}

// TestMemoryKeys: the memory key and the input and output keys, with
// langchaingo's defaults.
func TestMemoryKeys(t *testing.T) {
	ctx := context.Background()
	m := newTiered(t, "inmem")
	def, err := langchaingo.NewMemory(m, s1, langchaingo.MemoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := def.GetMemoryKey(ctx); got != "history" {
		t.Errorf("GetMemoryKey = %q, want history", got)
	}
	if got := def.MemoryVariables(ctx); !slices.Equal(got, []string{"history"}) {
		t.Errorf("MemoryVariables = %q", got)
	}
	// langchaingo's buffer uses the same default key.
	if got := lcmemory.NewConversationBuffer().GetMemoryKey(ctx); got != def.GetMemoryKey(ctx) {
		t.Errorf("langchaingo's buffer key %q differs from %q", got, def.GetMemoryKey(ctx))
	}
	// Several inputs and outputs need keys naming the ones to store.
	in := map[string]any{"question": "Where is the ferry?", "lang": "en"}
	out := map[string]any{"answer": "At pier 3", "intermediateSteps": []any{}}
	if err := def.SaveContext(ctx, in, out); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("SaveContext with two inputs and no InputKey = %v, want ErrInvalidArgument", err)
	}
	if _, err := def.LoadMemoryVariables(ctx, in); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("LoadMemoryVariables with two inputs and no InputKey = %v, want ErrInvalidArgument", err)
	}
	keyed, err := langchaingo.NewMemory(m, s1, langchaingo.MemoryOptions{InputKey: "question", OutputKey: "answer", MemoryKey: "mem"})
	if err != nil {
		t.Fatal(err)
	}
	if err := keyed.SaveContext(ctx, in, out); err != nil {
		t.Fatal(err)
	}
	if got := window(t, m, s1); !slices.Equal(got, []string{"user: Where is the ferry?", "assistant: At pier 3"}) {
		t.Errorf("window = %q", got)
	}
	vars, err := keyed.LoadMemoryVariables(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := vars["mem"].(string); len(vars) != 1 || !strings.Contains(s, "user: Where is the ferry?") {
		t.Errorf("variables = %#v", vars)
	}
	// No inputs at all: the window alone.
	if vars, err := keyed.LoadMemoryVariables(ctx, nil); err == nil {
		t.Errorf("LoadMemoryVariables(nil) with InputKey set = %v, want an error", vars)
	}
	if vars, err := def.LoadMemoryVariables(ctx, nil); err != nil || !strings.Contains(vars["history"].(string), "assistant: At pier 3") {
		t.Errorf("LoadMemoryVariables(nil) = %v, %v", vars, err)
	}

	for _, c := range []struct {
		name    string
		in, out map[string]any
	}{
		{"missing input key", map[string]any{"lang": "en"}, map[string]any{"answer": "x"}},
		{"missing output key", map[string]any{"question": "x"}, map[string]any{"text": "x"}},
		{"non-string input", map[string]any{"question": 42}, map[string]any{"answer": "x"}},
		{"non-string output", map[string]any{"question": "x"}, map[string]any{"answer": []string{"x"}}},
		{"both blank", map[string]any{"question": " "}, map[string]any{"answer": "\n"}},
	} {
		if err := keyed.SaveContext(ctx, c.in, c.out); !errors.Is(err, memory.ErrInvalidArgument) {
			t.Errorf("%s: SaveContext = %v, want ErrInvalidArgument", c.name, err)
		}
	}
	if got := window(t, m, s1); len(got) != 2 {
		t.Errorf("refused SaveContexts stored turns: %q", got)
	}
	// One blank side: the other is stored.
	if err := keyed.SaveContext(ctx, map[string]any{"question": "Still there?"}, map[string]any{"answer": ""}); err != nil {
		t.Fatal(err)
	}
	if got := window(t, m, s1); got[len(got)-1] != "user: Still there?" || len(got) != 3 {
		t.Errorf("window = %q", got)
	}
}

// TestNewMemoryErrors: what NewMemory and NewChatMessageHistory refuse.
func TestNewMemoryErrors(t *testing.T) {
	m := newTiered(t, "inmem")
	noSession := s1
	noSession.Session = ""
	bad := s1
	bad.User = " alice"
	for _, c := range []struct {
		name string
		mem  tiered.Interface
		id   memory.Identity
		opt  langchaingo.MemoryOptions
		want error
	}{
		{"nil memory", nil, s1, langchaingo.MemoryOptions{}, memory.ErrInvalidArgument},
		{"no session", m, noSession, langchaingo.MemoryOptions{}, memory.ErrIncompleteScope},
		{"invalid identity", m, bad, langchaingo.MemoryOptions{}, memory.ErrInvalidArgument},
		{"keyed level", m, s1, langchaingo.MemoryOptions{Level: memory.LevelSquad}, memory.ErrInvalidArgument},
		{"unknown level", m, s1, langchaingo.MemoryOptions{Level: "Agent"}, memory.ErrInvalidArgument},
		{"negative K", m, s1, langchaingo.MemoryOptions{K: -1}, memory.ErrInvalidArgument},
		{"negative budget", m, s1, langchaingo.MemoryOptions{Budget: -1}, memory.ErrInvalidArgument},
	} {
		if _, err := langchaingo.NewMemory(c.mem, c.id, c.opt); !errors.Is(err, c.want) {
			t.Errorf("NewMemory, %s: %v, want %v", c.name, err, c.want)
		}
	}
	for _, l := range []memory.Level{memory.LevelSession, memory.LevelAgent, memory.LevelUser, memory.LevelStore} {
		if _, err := langchaingo.NewMemory(m, s1, langchaingo.MemoryOptions{Level: l}); err != nil {
			t.Errorf("NewMemory at %s: %v", l, err)
		}
	}
	if _, err := langchaingo.NewChatMessageHistory(m, noSession, langchaingo.HistoryOptions{}); !errors.Is(err, memory.ErrIncompleteScope) {
		t.Errorf("NewChatMessageHistory without a session: %v", err)
	}
	if _, err := langchaingo.NewChatMessageHistory(nil, s1, langchaingo.HistoryOptions{}); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("NewChatMessageHistory(nil): %v", err)
	}
	if _, err := langchaingo.NewChatMessageHistory(m, s1, langchaingo.HistoryOptions{Budget: -5}); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("NewChatMessageHistory with a negative budget: %v", err)
	}
}

// degraded is a tiered.Interface whose recalls cannot read the facts: a
// memory service with its fact tier down.
type degraded struct{ *tiered.Memory }

var errFactsDown = errors.New("fact index unreachable")

func (d degraded) RecallWith(ctx context.Context, id memory.Identity, text string, opt tiered.RecallOptions) (tiered.Recollection, error) {
	rec, err := d.Memory.RecallWith(ctx, id, text, opt)
	rec.Facts, rec.Degraded, rec.Errors.Facts = nil, true, errFactsDown
	rec.Text = tiered.Render(rec)
	return rec, err
}

// TestDegradedRecall: recall is soft. A memory whose fact tier is down
// still loads the window, and says so to its logger; the search tool
// answers that memory could not be searched, without a Go error.
func TestDegradedRecall(t *testing.T) {
	ctx := context.Background()
	m := degraded{newTiered(t, "inmem")}
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	mem, err := langchaingo.NewMemory(m, s1, langchaingo.MemoryOptions{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	if err := mem.SaveContext(ctx, map[string]any{"input": "Hi"}, map[string]any{"text": "Hello"}); err != nil {
		t.Fatal(err)
	}
	vars, err := mem.LoadMemoryVariables(ctx, map[string]any{"input": "cat"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(vars["history"].(string), "assistant: Hello") {
		t.Errorf("a degraded recall lost the window: %q", vars["history"])
	}
	if !strings.Contains(logs.String(), "recall degraded") || !strings.Contains(logs.String(), errFactsDown.Error()) {
		t.Errorf("the degraded recall was not logged: %q", logs.String())
	}
	search, err := langchaingo.NewSearchTool(m, s1, langchaingo.SearchOptions{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	out, err := search.Call(ctx, "cat")
	if err != nil || !strings.Contains(out, "could not be searched") {
		t.Errorf("search on a degraded memory = %q, %v", out, err)
	}
}
