package main

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
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
// stored with their roles.
func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &out, filepath.Join(t.TempDir(), "agent.db")); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != want {
		t.Errorf("output:\n%s\nwant:\n%s", got, want)
	}
}
