package langchaingo_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/fake"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/tiers/langchaingo"
	"github.com/agentmem/memory/tiers/tiered"
)

// openMemory returns a tiered memory on the in-memory driver and a func
// closing it.
func openMemory() (*tiered.Memory, func()) {
	store := backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{})
	m, err := tiered.New(store, tiered.Options{IdleFlush: -1})
	if err != nil {
		log.Fatal(err)
	}
	return m, func() { m.Close(); store.Close() }
}

// A langchaingo memory for chains.NewConversation(llm, mem) or
// agents.WithMemory(mem): before each call chains.Call loads the memory's
// variables (what LoadMemoryVariables returns, shown here) into the
// prompt, and after it saves the exchange as two turns.
func ExampleMemory() {
	ctx := context.Background()
	m, closeMemory := openMemory()
	defer closeMemory()
	// A fact an earlier session saved.
	alice := memory.Identity{Tenant: "acme", User: "alice", Agent: "concierge", Session: "run-1"}
	if _, err := m.Remember(ctx, alice, "Alice is allergic to peanuts"); err != nil {
		log.Fatal(err)
	}

	alice.Session = "run-2"
	mem, err := langchaingo.NewMemory(m, alice, langchaingo.MemoryOptions{Level: memory.LevelAgent})
	if err != nil {
		log.Fatal(err)
	}
	question := "Which snacks should I avoid? Am I allergic to anything?"
	vars, err := mem.LoadMemoryVariables(ctx, map[string]any{"input": question})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(vars["history"])

	// langchaingo's fake model stands in for a real one.
	llm := fake.NewFakeLLM([]string{"Avoid anything with peanuts."})
	reply, err := chains.Run(ctx, chains.NewConversation(llm, mem), question)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(reply)
	vars, err = mem.LoadMemoryVariables(ctx, map[string]any{"input": "Thanks"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(vars["history"])
	// Output:
	// [Memory]
	// Known facts:
	// - Alice is allergic to peanuts
	// [End of memory]
	// Avoid anything with peanuts.
	// [Memory]
	// Recent turns:
	// user: Which snacks should I avoid? Am I allergic to anything?
	// assistant: Avoid anything with peanuts.
	// [End of memory]
}

// A chat history over the session's window, for langchaingo's buffer
// memories (memory.WithChatHistory) or any code that keeps messages.
func ExampleChatMessageHistory() {
	ctx := context.Background()
	m, closeMemory := openMemory()
	defer closeMemory()
	who := memory.Identity{Tenant: "acme", User: "alice", Agent: "concierge", Session: "run-1"}
	h, err := langchaingo.NewChatMessageHistory(m, who, langchaingo.HistoryOptions{})
	if err != nil {
		log.Fatal(err)
	}
	for _, msg := range []llms.ChatMessage{
		llms.SystemChatMessage{Content: "You are a travel concierge."},
		llms.HumanChatMessage{Content: "Book the 9:40 to Porto."},
		llms.AIChatMessage{Content: "Booked: seat 42."},
	} {
		if err := h.AddMessage(ctx, msg); err != nil {
			log.Fatal(err)
		}
	}
	// A message type with no conversation role is refused.
	err = h.AddMessage(ctx, llms.GenericChatMessage{Role: "narrator", Content: "Meanwhile"})
	fmt.Println(err)

	msgs, err := h.Messages(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, msg := range msgs {
		fmt.Printf("%s: %s\n", msg.GetType(), msg.GetContent())
	}
	// Output:
	// memory: invalid argument: langchaingo: a "generic" message has no conversation role: store human, ai, system or tool messages
	// system: You are a travel concierge.
	// human: Book the 9:40 to Porto.
	// ai: Booked: seat 42.
}

// The memory tools, bound to the running agent's verified identity and
// offered to an agent (agents.NewOneShotAgent(llm, tools)): the model saves
// a fact, then searches at a scope wider than the agent may read and is
// capped at its maximum read scope.
func ExampleSearchTool() {
	ctx := context.Background()
	m, closeMemory := openMemory()
	defer closeMemory()
	who := memory.Identity{Tenant: "acme", User: "alice", Agent: "concierge", Session: "run-1"}
	save, err := langchaingo.NewSaveTool(m, who)
	if err != nil {
		log.Fatal(err)
	}
	search, err := langchaingo.NewSearchTool(m, who, langchaingo.SearchOptions{MaxReadScope: memory.LevelAgent})
	if err != nil {
		log.Fatal(err)
	}
	out, err := save.Call(ctx, "Alice prefers aisle seats")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(out)
	out, err = search.Call(ctx, `{"query": "seat preference", "scope": "store"}`)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out)
	// A mistake in the model's input is the tool's answer, not an error.
	out, err = search.Call(ctx, `{"query": "seats", "k": 500}`)
	fmt.Println(strings.SplitN(out, "\n", 2)[0], err)
	// Output:
	// Saved to long-term memory: Alice prefers aisle seats
	// Scope "store" is wider than this agent may read; searched at "agent" instead.
	// 1 fact from agent memory for "seat preference", best first:
	// [Memory]
	// Known facts:
	// - Alice prefers aisle seats
	// [End of memory]
	//
	// The search_memory call was not run: "k" is 500; it must be a whole number from 1 to 50. <nil>
}
