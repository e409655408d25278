// Command tiered-chat shows the tiered memory (package tiers/tiered) across
// three chat sessions of one user with one agent, on the embedded default:
// one SQLite file in a temporary directory, no services, no network.
//
//	go run ./examples/tiered-chat
//
// In the first session the user says things about themselves. Turns past
// the window's small trigger are folded in the background into the
// session's digest and into long-term facts (extract.Rules, which calls no
// model); at the session's end Flush folds all but the newest turn. Before
// every turn of the later sessions the agent recalls at memory.LevelAgent,
// which brings back the facts of the user's earlier sessions with this
// agent and, until the new session has a digest of its own, the last
// session's digest, and puts the rendered block in its system prompt. A
// scripted chat model answers from that prompt.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/sqlite"
	"github.com/agentmem/memory/extract"
	"github.com/agentmem/memory/tiers/tiered"
)

func main() {
	dir, err := os.MkdirTemp("", "tiered-chat-")
	if err == nil {
		err = run(context.Background(), os.Stdout, dir)
		os.RemoveAll(dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tiered-chat:", err)
		os.Exit(1)
	}
}

// sessions is what the user says in each session.
var sessions = [][]string{{
	"Hi! I'm planning a trip to Porto next month.", "I live in Lisbon with my partner and two cats.",
	"My favourite food is grilled sardines.", "I'm allergic to peanuts.",
	"I work as a ferry engineer on the Tagus.", "We usually travel by train.",
}, {
	"Where do I live?", "I started learning the cello last winter.", "What is my favourite food?",
}, {
	"Which instrument am I learning?", "Am I allergic to anything?",
}}

// settle is Options.Settle: how old a turn must be before a fold evicts it.
const settle = 20 * time.Millisecond

func run(ctx context.Context, out io.Writer, dir string) error {
	driver, err := sqlite.Open(filepath.Join(dir, "chat.db"), sqlite.Options{})
	if err != nil {
		return err
	}
	store := backend.NewStore(driver, backend.StoreOptions{})
	defer store.Close()
	// A small window, so that a few turns fold. Any extract.Extractor and
	// Summarizer plug in here, such as llmextract.New over a langchaingo model.
	rules := &countingRules{}
	m, err := tiered.New(store, tiered.Options{Budget: 200, Trigger: 60, Target: 30, Settle: settle, IdleFlush: -1,
		Extractor: rules, Summarizer: rules})
	if err != nil {
		return err
	}
	defer m.Close()

	for i, said := range sessions {
		// Set by the host from verified credentials; only the session differs.
		who := memory.Identity{Tenant: "acme", User: "alice", Agent: "concierge", Session: fmt.Sprintf("chat-%d", i+1)}
		fmt.Fprintf(out, "=== Session %s ===\n", who.Session)
		for _, text := range said {
			block, err := recallFor(ctx, m, who, text)
			if err != nil {
				return err
			}
			fmt.Fprintln(out, "\nUser:     ", text)
			if i > 0 && block != "" {
				fmt.Fprintf(out, "Recalled at the agent level:\n%s", indent(block))
			}
			answer := chatModel(block, text)
			fmt.Fprintln(out, "Assistant:", answer)
			for _, t := range []tiered.Turn{{Role: memory.RoleUser, Content: text}, {Role: memory.RoleAssistant, Content: answer}} {
				if _, err := m.Append(ctx, who, t); err != nil {
					return err
				}
			}
		}
		if err := endSession(ctx, m, who, rules); err != nil {
			return err
		}
		facts, err := m.Facts().List(ctx, who, memory.LevelAgent, false)
		if err != nil {
			return err
		}
		// Folds store their facts in the background, in no fixed order.
		slices.SortFunc(facts, func(a, b memory.Record) int { return strings.Compare(a.Content, b.Content) })
		fmt.Fprintf(out, "\nSession %s ended and folded. Facts known at the agent level:\n", who.Session)
		for _, f := range facts {
			fmt.Fprintln(out, "  -", f.Content)
		}
		fmt.Fprintln(out)
	}
	if err := m.Close(); err != nil { // lets the folds in flight finish, so Stats counts them
		return err
	}
	s := m.Stats()
	fmt.Fprintf(out, "Stats: %d folds, %d turns folded, %d facts proposed, %d model calls (extract.Rules makes none)\n",
		s.Folds, s.FoldedTurns, s.Facts, s.Usage.ModelCalls)
	return nil
}

// recallFor is the program's one recall: what the agent should remember
// before answering text. The facts are those of every session of who's user
// with who's agent (memory.LevelAgent); the window is who's session's, and
// the digest its own or, before it has one, the last session's.
// Recall is soft: a tier it could not read is reported in Degraded and Errors
// and the rest returned. A real agent would go on with that; the example stops.
func recallFor(ctx context.Context, m *tiered.Memory, who memory.Identity, text string) (string, error) {
	rec, err := m.RecallWith(ctx, who, text, tiered.RecallOptions{Level: memory.LevelAgent, K: 2})
	if err == nil && rec.Degraded {
		err = fmt.Errorf("recall degraded: %+v", rec.Errors)
	}
	return rec.Text, err
}

// endSession flushes who's session and waits until the background work is
// done: every turn but the newest folded into the digest, and every fact
// the folds proposed stored. A fold evicts only turns older than settle, so
// the last turns settle first. A real chat need not wait: the next session
// finds what is done by then.
func endSession(ctx context.Context, m *tiered.Memory, who memory.Identity, rules *countingRules) error {
	time.Sleep(settle)
	if err := m.Flush(ctx, who); err != nil {
		return err
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		window, err := m.Window(ctx, who, 0)
		if err != nil {
			return err
		}
		proposed := rules.facts.Load() // after the window: a fold extracts before it stores its digest
		stored, err := m.Facts().List(ctx, who, memory.LevelAgent, true)
		if err != nil {
			return err
		}
		if len(window) == 1 && int64(len(stored)) >= proposed {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("session %s: the background folds are not done after 30s", who.Session)
		}
	}
}

// countingRules is extract.Rules counting the facts it proposes, so that
// endSession can tell when they are all stored.
type countingRules struct {
	extract.Rules
	facts atomic.Int64
}

// Extract is extract.Rules.Extract, counted.
func (r *countingRules) Extract(ctx context.Context, turns, known []memory.Record) ([]extract.Fact, extract.Usage, error) {
	fs, u, err := r.Rules.Extract(ctx, turns, known)
	if err == nil {
		r.facts.Add(int64(len(fs)))
	}
	return fs, u, err
}

// chatModel stands in for the agent's chat model (any langchaingo
// llms.Model in a real agent), so the example needs no network: it answers
// a question with the first known fact in its system prompt (recall ranks
// them best first) and acknowledges anything else.
func chatModel(system, user string) string {
	if !strings.HasSuffix(user, "?") {
		return "Noted, thanks."
	}
	if _, facts, ok := strings.Cut(system, "Known facts:\n- "); ok {
		fact, _, _ := strings.Cut(facts, "\n")
		return "From what you told me: " + fact
	}
	return "I don't know that yet."
}

// indent indents each line of s by two spaces.
func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n  ") + "\n"
}
