// Command recall shows recall by relevance on the embedded default: a
// support agent's past conversation with a customer is stored in one
// SQLite file, and later questions bring back the turns that answer them,
// ranked by package recall (BM25 over the customer's records, each turn
// lifted by the turns around it), with no model and no service.
//
//	go run ./examples/recall
//	go run ./examples/recall -qdrant
//
// It writes its database in a temporary directory and removes it at the
// end, so every run starts from the same conversation. With -qdrant the
// same calling code runs on the Qdrant driver instead: on the Qdrant
// QDRANT_ADDR names (gRPC, 1.17 or newer), in a collection of its own
// that it deletes at the end, or without QDRANT_ADDR on an in-process
// stand-in for one (internal/qdrantserver), so that it runs anywhere.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	qc "github.com/qdrant/go-client/qdrant"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/qdrant"
	"github.com/agentmem/memory/backend/sqlite"
	"github.com/agentmem/memory/internal/qdrantserver"
	"github.com/agentmem/memory/recall"
)

func main() {
	onQdrant := flag.Bool("qdrant", false, "store the conversation in Qdrant (QDRANT_ADDR, or an in-process stand-in) instead of SQLite")
	flag.Parse()
	if err := run(context.Background(), *onQdrant); err != nil {
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

func run(ctx context.Context, onQdrant bool) error {
	open := openSQLite
	if onQdrant {
		open = openQdrant
	}
	d, done, err := open(ctx)
	if err != nil {
		return err
	}
	defer done()
	store := backend.NewStore(d, backend.StoreOptions{})
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

// openSQLite opens a SQLite file in a temporary directory; done removes
// the directory.
func openSQLite(context.Context) (driver.Driver, func(), error) {
	dir, err := os.MkdirTemp("", "agentmem-recall-")
	if err != nil {
		return nil, nil, err
	}
	d, err := sqlite.Open(filepath.Join(dir, "memory.db"), sqlite.Options{})
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	return d, func() { os.RemoveAll(dir) }, nil
}

// openQdrant opens a collection of its own on the Qdrant QDRANT_ADDR
// names, or on an in-process stand-in; done deletes the collection and
// stops the stand-in.
func openQdrant(ctx context.Context) (driver.Driver, func(), error) {
	addr := os.Getenv("QDRANT_ADDR")
	var srv *qdrantserver.Server
	if addr == "" {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, nil, err
		}
		srv = qdrantserver.New()
		go func() { _ = srv.Serve(l) }()
		addr = l.Addr().String()
		fmt.Println("Qdrant: an in-process stand-in (set QDRANT_ADDR for a real one)")
	} else {
		fmt.Println("Qdrant:", addr)
	}
	stop := func() {
		if srv != nil {
			srv.Stop()
		}
	}
	host, port, err := net.SplitHostPort(addr)
	p, perr := strconv.Atoi(port)
	if err != nil || perr != nil {
		stop()
		return nil, nil, fmt.Errorf("QDRANT_ADDR=%q: want host:port", addr)
	}
	client, err := qc.NewClient(&qc.Config{Host: host, Port: p})
	if err != nil {
		stop()
		return nil, nil, err
	}
	collection := fmt.Sprintf("agentmem-example-%d", time.Now().UnixNano())
	done := func() {
		_ = client.DeleteCollection(context.Background(), collection)
		_ = client.Close() // the driver never closes a client it was given
		stop()
	}
	// One collection per store; Options.Dims would size its dense vectors
	// for an embedder, and this example ranks text alone.
	d, err := qdrant.New(ctx, qdrant.Options{Client: client, Collection: collection})
	if err != nil {
		done()
		return nil, nil, err
	}
	return d, done, nil
}
