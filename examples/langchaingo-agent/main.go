// Command langchaingo-agent shows the langchaingo adapters of the tiered
// memory (package tiers/langchaingo) under langchaingo's own chains and
// agents, across two sessions of one user with one agent, on the embedded
// default: one SQLite file in a temporary directory, no services, no
// network, and langchaingo's fake model (llms/fake) answering with
// scripted replies.
//
//	go run ./examples/langchaingo-agent
//
// In the first session a conversational agent (agents.NewConversationalAgent)
// run by an agent executor (agents.NewExecutor) with the save_memory and
// search_memory tools and the langchaingo Memory hears what the user says
// and saves two facts with save_memory. The store is then closed and
// opened again, as a new run of the program would. In the second session a
// conversation chain (chains.NewConversation) whose Memory recalls at the
// agent level puts those facts in the model's prompt, and a one-shot agent
// (agents.NewOneShotAgent) calls search_memory asking for the user level
// and is capped at the agent's maximum read scope. The executors' and the
// chain's Memory store each exchange as a user and an assistant turn.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/schema"
	"github.com/tmc/langchaingo/tools"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/sqlite"
	"github.com/agentmem/memory/internal/scriptedllm"
	"github.com/agentmem/memory/tiers/langchaingo"
	"github.com/agentmem/memory/tiers/tiered"
)

func main() {
	dir, err := os.MkdirTemp("", "langchaingo-agent-")
	if err == nil {
		err = run(context.Background(), os.Stdout, filepath.Join(dir, "agent.db"))
		os.RemoveAll(dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "langchaingo-agent:", err)
		os.Exit(1)
	}
}

// maxReadScope is the widest level the agent's memory reads: set by the
// host program (the service document's maxReadScope), never by the model.
const maxReadScope = memory.LevelAgent

// run runs both sessions on the SQLite file at path.
func run(ctx context.Context, out io.Writer, path string) error {
	// Set by the host from verified credentials; only the session differs.
	alice := memory.Identity{Tenant: "acme", User: "alice", Agent: "kaos://agent/travel/concierge", Session: "run-1"}

	fmt.Fprintln(out, "== session 1")
	err := withMemory(path, func(m *tiered.Memory) error {
		// The conversational agent's format: a tool call, or "AI:" and
		// the answer.
		model := scriptedllm.New(
			"Thought: Do I need to use a tool? Yes\nAction: save_memory\nAction Input: Alice is vegetarian",
			"Thought: Do I need to use a tool? Yes\nAction: save_memory\nAction Input: {\"fact\": \"Alice takes the 9:40 train from Lisbon to Porto\"}",
			"Thought: Do I need to use a tool? No\nAI: Noted: vegetarian, and the 9:40 train to Porto.",
		)
		return agentTurn(ctx, out, m, alice, conversational, model, "I'm vegetarian, and I take the 9:40 train from Lisbon to Porto.")
	})
	if err != nil {
		return err
	}

	alice.Session = "run-2"
	fmt.Fprintln(out, "\n== session 2 (the store opened again)")
	return withMemory(path, func(m *tiered.Memory) error {
		model := scriptedllm.New("Try a vegetarian tasca near São Bento, a short walk from where the 9:40 train arrives.")
		if err := conversationTurn(ctx, out, m, alice, model, "Any vegetarian dinner ideas near the station in Porto?"); err != nil {
			return err
		}
		// The one-shot agent's format: a tool call, or "Final Answer:".
		model = scriptedllm.New(
			"Thought: look it up\nAction: search_memory\nAction Input: {\"query\": \"train Porto\", \"scope\": \"user\"}",
			"Thought: I now know the final answer\nFinal Answer: The 9:40 from Lisbon.",
		)
		if err := agentTurn(ctx, out, m, alice, oneShot, model, "Which train am I on?"); err != nil {
			return err
		}
		// The session's turns, as langchaingo messages.
		history, err := langchaingo.NewChatMessageHistory(m, alice, langchaingo.HistoryOptions{})
		if err != nil {
			return err
		}
		msgs, err := history.Messages(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintln(out, "\nsession 2's chat history:")
		for _, msg := range msgs {
			fmt.Fprintf(out, "    %s: %s\n", msg.GetType(), msg.GetContent())
		}
		return nil
	})
}

// withMemory opens the tiered memory on the SQLite file at path, runs f and
// closes both.
func withMemory(path string, f func(*tiered.Memory) error) error {
	driver, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		return err
	}
	store := backend.NewStore(driver, backend.StoreOptions{})
	defer store.Close()
	m, err := tiered.New(store, tiered.Options{IdleFlush: -1})
	if err != nil {
		return err
	}
	defer m.Close()
	return f(m)
}

// lastPrompt returns the last prompt model received, or "" before any.
func lastPrompt(model *scriptedllm.Model) string {
	prompts := model.Prompts()
	if len(prompts) == 0 {
		return ""
	}
	return prompts[len(prompts)-1]
}

// conversationTurn is one exchange of a conversation chain with the
// langchaingo Memory: chains.Run loads the memory for the input into the
// prompt, calls the model and saves the exchange.
func conversationTurn(ctx context.Context, out io.Writer, m tiered.Interface, who memory.Identity, model *scriptedllm.Model, input string) error {
	mem, err := langchaingo.NewMemory(m, who, langchaingo.MemoryOptions{Level: maxReadScope})
	if err != nil {
		return err
	}
	reply, err := chains.Run(ctx, chains.NewConversation(model, mem), input)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "user: %s\nmemory in the prompt:\n%s", input, indent(memoryBlock(lastPrompt(model))))
	fmt.Fprintf(out, "assistant: %s\n", reply)
	return nil
}

// memoryBlock returns the memory block (tiered.BlockStart to
// tiered.BlockEnd) in prompt, or "" when it holds none.
func memoryBlock(prompt string) string {
	_, rest, ok := strings.Cut(prompt, tiered.BlockStart)
	if !ok {
		return ""
	}
	block, _, ok := strings.Cut(rest, tiered.BlockEnd)
	if !ok {
		return ""
	}
	return tiered.BlockStart + block + tiered.BlockEnd
}

// newAgent makes a langchaingo agent over a model with tools.
type newAgent func(model llms.Model, tools []tools.Tool) agents.Agent

// conversational and oneShot are langchaingo's conversational and
// one-shot (MRKL) agents.
var (
	conversational newAgent = func(model llms.Model, tools []tools.Tool) agents.Agent {
		return agents.NewConversationalAgent(model, tools)
	}
	oneShot newAgent = func(model llms.Model, tools []tools.Tool) agents.Agent {
		return agents.NewOneShotAgent(model, tools)
	}
)

// agentTurn runs one input through an agent executor with the memory tools
// and the langchaingo Memory, which the executor loads before the run and
// saves the exchange to after it, and shows the tool calls the agent made.
func agentTurn(ctx context.Context, out io.Writer, m tiered.Interface, who memory.Identity, agent newAgent, model llms.Model, input string) error {
	save, err := langchaingo.NewSaveTool(m, who)
	if err != nil {
		return err
	}
	search, err := langchaingo.NewSearchTool(m, who, langchaingo.SearchOptions{MaxReadScope: maxReadScope})
	if err != nil {
		return err
	}
	// The executor returns the answer under "output" and, with
	// intermediate steps, the tool calls beside it: the Memory stores the
	// answer.
	mem, err := langchaingo.NewMemory(m, who, langchaingo.MemoryOptions{Level: maxReadScope, OutputKey: "output"})
	if err != nil {
		return err
	}
	executor := agents.NewExecutor(agent(model, []tools.Tool{save, search}),
		agents.WithMemory(mem), agents.WithReturnIntermediateSteps(), agents.WithMaxIterations(5))
	fmt.Fprintf(out, "user: %s\n", input)
	outputs, err := chains.Call(ctx, executor, map[string]any{"input": input})
	if err != nil {
		return err
	}
	steps, _ := outputs["intermediateSteps"].([]schema.AgentStep)
	for _, step := range steps {
		fmt.Fprintf(out, "  %s %s\n%s", step.Action.Tool, step.Action.ToolInput, indent(step.Observation))
	}
	answer, _ := outputs["output"].(string)
	fmt.Fprintf(out, "assistant: %s\n", strings.TrimSpace(answer))
	return nil
}

// indent indents each line of s by four spaces.
func indent(s string) string {
	if s == "" {
		return "    (nothing)\n"
	}
	return "    " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n    ") + "\n"
}
