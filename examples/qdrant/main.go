// Command qdrant shows the library on Qdrant: the recall example's
// support conversation stored in a Qdrant collection, and later questions
// answered by package recall through the Qdrant driver's text search,
// with the same calling code as on the embedded default.
//
//	go run ./examples/qdrant
//	QDRANT_ADDR=localhost:6334 go run ./examples/qdrant
//
// With QDRANT_ADDR it uses that Qdrant (gRPC, 1.17 or newer), in a
// collection of its own that it deletes at the end; without, an in-process
// stand-in for one (internal/qdrantserver), so the example runs anywhere.
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	qc "github.com/qdrant/go-client/qdrant"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/qdrant"
	"github.com/agentmem/memory/internal/qdrantserver"
	"github.com/agentmem/memory/recall"
)

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "qdrant:", err)
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
	addr := os.Getenv("QDRANT_ADDR")
	if addr == "" {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		srv := qdrantserver.New()
		go func() { _ = srv.Serve(l) }()
		defer srv.Stop()
		addr = l.Addr().String()
		fmt.Println("Qdrant: an in-process stand-in (set QDRANT_ADDR for a real one)")
	} else {
		fmt.Println("Qdrant:", addr)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return err
	}
	client, err := qc.NewClient(&qc.Config{Host: host, Port: p})
	if err != nil {
		return err
	}
	defer client.Close() // the driver never closes a client it was given
	collection := fmt.Sprintf("agentmem-example-%d", time.Now().UnixNano())
	defer client.DeleteCollection(context.Background(), collection)

	// One collection per store. Dims would size its dense vectors for an
	// embedder; this example ranks text alone.
	driver, err := qdrant.New(ctx, qdrant.Options{Client: client, Collection: collection})
	if err != nil {
		return err
	}
	store := backend.NewStore(driver, backend.StoreOptions{})
	defer store.Close()

	// From here on the code is the embedded example's, unchanged.
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
