package langchaingo_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/tmc/langchaingo/llms"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/backend/sqlite"
	"github.com/agentmem/memory/internal/scriptedllm"
	"github.com/agentmem/memory/tiers/tiered"
)

// Identities: one user with one agent in two sessions, and another user.
var (
	s1    = memory.Identity{Tenant: "acme", User: "alice", Agent: "concierge", Session: "s1"}
	s2    = memory.Identity{Tenant: "acme", User: "alice", Agent: "concierge", Session: "s2"}
	other = memory.Identity{Tenant: "acme", User: "bob", Agent: "concierge", Session: "b1"}
)

// drivers are the storage the tests run on: the in-memory driver and the
// embedded default, SQLite in a file.
var drivers = []string{"inmem", "sqlite"}

// newTiered returns a tiered memory on driver, closed at the test's end.
func newTiered(t *testing.T, driver string) *tiered.Memory {
	t.Helper()
	var st *backend.Store
	switch driver {
	case "inmem":
		st = backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{})
	case "sqlite":
		d, err := sqlite.Open(filepath.Join(t.TempDir(), "memory.db"), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		st = backend.NewStore(d, backend.StoreOptions{})
	default:
		t.Fatalf("unknown driver %q", driver)
	}
	t.Cleanup(func() { _ = st.Close() })
	m, err := tiered.New(st, tiered.Options{IdleFlush: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m
}

// eachDriver runs f on a fresh tiered memory of each driver.
func eachDriver(t *testing.T, f func(t *testing.T, m *tiered.Memory)) {
	for _, d := range drivers {
		t.Run(d, func(t *testing.T) { f(t, newTiered(t, d)) })
	}
}

// model is langchaingo's fake model answering with scripted replies,
// keeping the prompts it receives.
type model struct{ *scriptedllm.Model }

func newModel(replies ...string) *model { return &model{scriptedllm.New(replies...)} }

// prompt returns the i-th prompt the model received, counting from 0, or
// from the last backwards when i is negative (-1 is the last).
func (m *model) prompt(t *testing.T, i int) string {
	t.Helper()
	prompts := m.Prompts()
	if i < 0 {
		i += len(prompts)
	}
	if i < 0 || i >= len(prompts) {
		t.Fatalf("prompt %d of %d: the model was not called that often", i, len(prompts))
	}
	return prompts[i]
}

// last returns the last prompt the model received.
func (m *model) last(t *testing.T) string {
	t.Helper()
	return m.prompt(t, -1)
}

// calls returns how many prompts the model received.
func (m *model) calls() int { return len(m.Prompts()) }

// window returns id's window as "role: content" lines.
func window(t *testing.T, m tiered.Interface, id memory.Identity) []string {
	t.Helper()
	turns, err := m.Window(context.Background(), id, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range turns {
		out = append(out, r.Label+": "+r.Content)
	}
	return out
}

// describe returns messages as "type: content" lines.
func describe(msgs []llms.ChatMessage) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = string(m.GetType()) + ": " + m.GetContent()
	}
	return out
}
