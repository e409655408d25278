package main

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/tiers/tiered"
)

// want is the example's whole output: deterministic, since the model is
// scripted and recall is lexical.
const want = `== session 1
user: I'm vegetarian, and I take the 9:40 train from Lisbon to Porto.
  save_memory Alice is vegetarian
    Saved to long-term memory: Alice is vegetarian
  save_memory {"fact": "Alice takes the 9:40 train from Lisbon to Porto"}
    Saved to long-term memory: Alice takes the 9:40 train from Lisbon to Porto
assistant: Noted: vegetarian, and the 9:40 train to Porto.

== session 2 (the store opened again)
user: Any vegetarian dinner ideas near the station in Porto?
memory in the prompt:
    [Memory]
    Known facts:
    - Alice is vegetarian
    - Alice takes the 9:40 train from Lisbon to Porto
    [End of memory]
assistant: Try a vegetarian tasca near São Bento, a short walk from where the 9:40 train arrives.
user: Which train am I on?
  search_memory {"query": "train Porto", "scope": "user"}
    Scope "user" is wider than this agent may read; searched at "agent" instead.
    1 fact from agent memory for "train Porto", best first:
    [Memory]
    Known facts:
    - Alice takes the 9:40 train from Lisbon to Porto
    [End of memory]
assistant: The 9:40 from Lisbon.

session 2's chat history:
    human: Any vegetarian dinner ideas near the station in Porto?
    ai: Try a vegetarian tasca near São Bento, a short walk from where the 9:40 train arrives.
    human: Which train am I on?
    ai: The 9:40 from Lisbon.
`

// TestRun runs the example on a SQLite file of its own: the second
// session, on the store opened again, recalls the facts the first saved,
// the search is capped at the agent level, and the session's turns are
// stored with their roles. The first session's exchange, which the output
// does not show, is stored by the executor's memory too.
func TestRun(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "agent.db")
	var out bytes.Buffer
	if err := run(ctx, &out, path); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != want {
		t.Errorf("output:\n%s\nwant:\n%s", got, want)
	}
	err := withMemory(path, func(m *tiered.Memory) error {
		first := memory.Identity{Tenant: "acme", User: "alice", Agent: "kaos://agent/travel/concierge", Session: "run-1"}
		turns, err := m.Window(ctx, first, 0)
		if err != nil {
			return err
		}
		var got []string
		for _, r := range turns {
			got = append(got, r.Label+": "+strings.TrimSpace(r.Content))
		}
		want := []string{
			"user: I'm vegetarian, and I take the 9:40 train from Lisbon to Porto.",
			"assistant: Noted: vegetarian, and the 9:40 train to Porto.",
		}
		if !slices.Equal(got, want) {
			t.Errorf("session 1's stored turns = %q, want %q", got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
