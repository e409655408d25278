package langchaingo_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/tiers/langchaingo"
	"github.com/agentmem/memory/tiers/tiered"
)

// TestHistoryRoles: each message type is stored with its role, and read
// back as its type; types without a role are refused and store nothing.
func TestHistoryRoles(t *testing.T) {
	eachDriver(t, func(t *testing.T, m *tiered.Memory) {
		ctx := context.Background()
		h, err := langchaingo.NewChatMessageHistory(m, s1, langchaingo.HistoryOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := h.AddUserMessage(ctx, "Book a table for two"); err != nil {
			t.Fatal(err)
		}
		if err := h.AddAIMessage(ctx, "Which evening?"); err != nil {
			t.Fatal(err)
		}
		for _, msg := range []llms.ChatMessage{
			llms.SystemChatMessage{Content: "Be brief."},
			llms.ToolChatMessage{ID: "call-1", Content: "3 tables free"},
			llms.HumanChatMessage{Content: "Friday"},
		} {
			if err := h.AddMessage(ctx, msg); err != nil {
				t.Fatal(err)
			}
		}
		for _, bad := range []struct {
			msg  llms.ChatMessage
			want error
		}{
			{llms.GenericChatMessage{Role: "narrator", Content: "Meanwhile"}, memory.ErrInvalidArgument},
			{llms.FunctionChatMessage{Name: "f", Content: "{}"}, memory.ErrInvalidArgument},
			{nil, memory.ErrInvalidArgument},
			{llms.HumanChatMessage{Content: "  "}, memory.ErrInvalidArgument},
			{llms.HumanChatMessage{Content: "\xff"}, memory.ErrInvalidArgument},
			{llms.AIChatMessage{Content: strings.Repeat("x", memory.MaxContentBytes+1)}, memory.ErrTooLarge},
		} {
			if err := h.AddMessage(ctx, bad.msg); !errors.Is(err, bad.want) {
				t.Errorf("AddMessage(%T) = %v, want %v", bad.msg, err, bad.want)
			}
		}
		want := []string{"user: Book a table for two", "assistant: Which evening?", "system: Be brief.", "tool: 3 tables free", "user: Friday"}
		if got := window(t, m, s1); !slices.Equal(got, want) {
			t.Errorf("stored turns = %q, want %q", got, want)
		}
		msgs, err := h.Messages(ctx)
		if err != nil {
			t.Fatal(err)
		}
		wantMsgs := []string{"human: Book a table for two", "ai: Which evening?", "system: Be brief.", "tool: 3 tables free", "human: Friday"}
		if got := describe(msgs); !slices.Equal(got, wantMsgs) {
			t.Errorf("Messages = %q, want %q", got, wantMsgs)
		}
	})
}

// TestHistoryClearAndSet: Clear empties the session; SetMessages replaces
// its turns, and a message it cannot store fails before anything is
// erased.
func TestHistoryClearAndSet(t *testing.T) {
	eachDriver(t, func(t *testing.T, m *tiered.Memory) {
		ctx := context.Background()
		h, _ := langchaingo.NewChatMessageHistory(m, s1, langchaingo.HistoryOptions{})
		keep, _ := langchaingo.NewChatMessageHistory(m, s2, langchaingo.HistoryOptions{})
		if err := keep.AddUserMessage(ctx, "another session"); err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{"one", "two"} {
			if err := h.AddUserMessage(ctx, s); err != nil {
				t.Fatal(err)
			}
		}
		err := h.SetMessages(ctx, []llms.ChatMessage{llms.HumanChatMessage{Content: "fine"}, llms.GenericChatMessage{Role: "x", Content: "bad"}})
		if !errors.Is(err, memory.ErrInvalidArgument) {
			t.Errorf("SetMessages with a generic message = %v, want ErrInvalidArgument", err)
		}
		if got := window(t, m, s1); !slices.Equal(got, []string{"user: one", "user: two"}) {
			t.Errorf("a refused SetMessages changed the session: %q", got)
		}
		if err := h.SetMessages(ctx, []llms.ChatMessage{llms.SystemChatMessage{Content: "Summary so far"}, llms.AIChatMessage{Content: "Where were we?"}}); err != nil {
			t.Fatal(err)
		}
		if got := window(t, m, s1); !slices.Equal(got, []string{"system: Summary so far", "assistant: Where were we?"}) {
			t.Errorf("after SetMessages the session holds %q", got)
		}
		if err := h.Clear(ctx); err != nil {
			t.Fatal(err)
		}
		msgs, err := h.Messages(ctx)
		if err != nil || len(msgs) != 0 {
			t.Errorf("after Clear, Messages = %q, %v", describe(msgs), err)
		}
		if got := window(t, m, s2); !slices.Equal(got, []string{"user: another session"}) {
			t.Errorf("Clear of s1 changed s2: %q", got)
		}
		if err := h.SetMessages(ctx, nil); err != nil {
			t.Errorf("SetMessages(nil) = %v", err)
		}
		if err := h.SetMessages(ctx, make([]llms.ChatMessage, memory.MaxBatch+1)); !errors.Is(err, memory.ErrTooLarge) {
			t.Errorf("SetMessages of too many = %v, want ErrTooLarge", err)
		}
	})
}

// TestHistoryBudget: Messages returns the window within the history's
// budget, newest turns first in, always at least the newest.
func TestHistoryBudget(t *testing.T) {
	ctx := context.Background()
	m := newTiered(t, "inmem")
	h, _ := langchaingo.NewChatMessageHistory(m, s1, langchaingo.HistoryOptions{Budget: 1})
	for _, s := range []string{"first words said here", "second words said here"} {
		if err := h.AddUserMessage(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	msgs, err := h.Messages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := describe(msgs); !slices.Equal(got, []string{"human: second words said here"}) {
		t.Errorf("Messages within 1 token = %q, want the newest turn", got)
	}
}
