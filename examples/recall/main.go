// Command recall shows recall by relevance on the embedded default: a
// support agent's past conversation with a customer is stored in one
// SQLite file, and later questions bring back the turns that answer them,
// ranked by package recall (BM25 over the customer's records, each turn
// lifted by the turns around it), with no model and no service.
//
//	go run ./examples/recall
//
// It writes its database in a temporary directory and removes it at the
// end, so every run starts from the same conversation.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/sqlite"
	"github.com/agentmem/memory/recall"
)

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "recall:", err)
		os.Exit(1)
	}
}

// conversation is last week's chat, one line per turn, the customer first.
var conversation = []string{
	"Hi, my order 4417 still hasn't arrived and it was due on Monday.",
	"Sorry about that! I can see it left our warehouse in Leeds on Friday.",
	"The tracking page hasn't changed in three days.",
	"The courier marked it as held at the depot because the address was incomplete.",
	"Oh, I moved recently. The new flat number is 12B.",
	"Thanks, I've added flat 12B and asked the courier to deliver again tomorrow.",
	"Great. Also, can I change my payment card for future orders?",
	"Yes, you can replace the card under Account, then Payment methods.",
}

// questions are what the agent is asked later, in a new session.
var questions = []string{
	"where is order 4417 now?",
	"which flat number did the customer give?",
	"how does the customer replace a payment card?",
}

func run(ctx context.Context) error {
	dir, err := os.MkdirTemp("", "agentmem-recall-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	driver, err := sqlite.Open(filepath.Join(dir, "memory.db"), sqlite.Options{})
	if err != nil {
		return err
	}
	store := backend.NewStore(driver, backend.StoreOptions{})
	defer store.Close()

	// Last week's session: each turn stored as it was said.
	chat := memory.Identity{Tenant: "acme", User: "customer-881", Agent: "support-bot", Session: "chat-2026-11-24"}
	start := time.Now().Add(-7 * 24 * time.Hour)
	for i, line := range conversation {
		role := memory.RoleUser
		if i%2 == 1 {
			role = memory.RoleAssistant
		}
		turn := memory.NewTurn(memory.Identity{}, role, line, start.Add(time.Duration(i)*time.Minute))
		if err := store.Add(ctx, chat, turn); err != nil {
			return err
		}
	}

	// Today, a new session with the same customer: recall across all of
	// their sessions (the user level).
	today := chat
	today.Session = "chat-2026-12-01"
	r, err := recall.New(store, recall.Options{})
	if err != nil {
		return err
	}
	for _, q := range questions {
		found, err := r.Recall(ctx, today, memory.Query{Level: memory.LevelUser}, q, 3)
		if err != nil {
			return err
		}
		fmt.Printf("%s\n", q)
		for _, f := range found.Hits {
			fmt.Printf("  %.2f  [%s] %s\n", f.Score, f.Record.Label, f.Record.Content)
		}
	}
	return nil
}
