// Command langchaingo-agent shows the langchaingo adapters of the tiered
// memory (package tiers/langchaingo) across two sessions of one user with
// one agent, on the embedded default: one SQLite file in a temporary
// directory, no services, no network, and langchaingo's fake model
// (llms/fake) answering with scripted replies.
//
//	go run ./examples/langchaingo-agent
//
// In the first session an agent with the save_memory and search_memory
// tools hears what the user says and saves two facts with save_memory. The
// store is then closed and opened again, as a new run of the program would.
// In the second session a conversation whose langchaingo memory recalls at
// the agent level puts those facts in the model's prompt, and the agent's
// search_memory call, asking for the user level, is capped at the agent's
// maximum read scope.
//
// langchaingo's chains and agents packages import modules this module does
// not depend on, so the two loops below call the adapters as they do:
// chains.Call loads the memory's variables before the model call and saves
// the exchange after it, and the agent loop speaks the format of
// langchaingo's one-shot agent (Action, Action Input, Observation, Final
// Answer).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/fake"
	"github.com/tmc/langchaingo/schema"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/sqlite"
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
		model := fake.NewFakeLLM([]string{
			"Thought: the user told me something worth keeping\nAction: save_memory\nAction Input: Alice is vegetarian",
			"Thought: and the train\nAction: save_memory\nAction Input: {\"fact\": \"Alice takes the 9:40 train from Lisbon to Porto\"}",
			"Thought: I now know the final answer\nFinal Answer: Noted: vegetarian, and the 9:40 train to Porto.",
		})
		return agentTurn(ctx, out, m, alice, model, "I'm vegetarian, and I take the 9:40 train from Lisbon to Porto.")
	})
	if err != nil {
		return err
	}

	alice.Session = "run-2"
	fmt.Fprintln(out, "\n== session 2 (the store opened again)")
	return withMemory(path, func(m *tiered.Memory) error {
		model := fake.NewFakeLLM([]string{
			"Try a vegetarian tasca near São Bento, a short walk from where the 9:40 train arrives.",
		})
		if err := conversationTurn(ctx, out, m, alice, model, "Any vegetarian dinner ideas near the station in Porto?"); err != nil {
			return err
		}
		model = fake.NewFakeLLM([]string{
			"Thought: look it up\nAction: search_memory\nAction Input: {\"query\": \"train Porto\", \"scope\": \"user\"}",
			"Thought: I now know the final answer\nFinal Answer: The 9:40 from Lisbon.",
		})
		if err := agentTurn(ctx, out, m, alice, model, "Which train am I on?"); err != nil {
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

// conversationTurn is one exchange of a conversation chain (what
// chains.NewConversation and chains.Run do): the langchaingo memory loaded
// for the input, the prompt filled, the model called, the exchange saved.
func conversationTurn(ctx context.Context, out io.Writer, m tiered.Interface, who memory.Identity, model llms.Model, input string) error {
	mem, err := langchaingo.NewMemory(m, who, langchaingo.MemoryOptions{Level: maxReadScope})
	if err != nil {
		return err
	}
	inputs := map[string]any{"input": input}
	vars, err := mem.LoadMemoryVariables(ctx, inputs)
	if err != nil {
		return err
	}
	history := vars[mem.GetMemoryKey(ctx)].(string)
	fmt.Fprintf(out, "user: %s\nmemory in the prompt:\n%s", input, indent(history))
	prompt := "The following is a friendly conversation between a human and an AI.\n\nCurrent conversation:\n" +
		history + "\nHuman: " + input + "\nAI:"
	reply, err := llms.GenerateFromSinglePrompt(ctx, model, prompt)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "assistant: %s\n", reply)
	return mem.SaveContext(ctx, inputs, map[string]any{"text": reply})
}

// tool is langchaingo's tools.Tool.
type tool interface {
	Name() string
	Description() string
	Call(ctx context.Context, input string) (string, error)
}

// agentTurn runs one input through an agent with the memory tools, in the
// format of langchaingo's one-shot agent, with the langchaingo memory
// loaded before and the exchange saved after, as an agent executor does.
func agentTurn(ctx context.Context, out io.Writer, m tiered.Interface, who memory.Identity, model llms.Model, input string) error {
	save, err := langchaingo.NewSaveTool(m, who)
	if err != nil {
		return err
	}
	search, err := langchaingo.NewSearchTool(m, who, langchaingo.SearchOptions{MaxReadScope: maxReadScope})
	if err != nil {
		return err
	}
	mem, err := langchaingo.NewMemory(m, who, langchaingo.MemoryOptions{Level: maxReadScope})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "user: %s\n", input)
	answer, err := agentLoop(ctx, out, model, mem, []tool{save, search}, input)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "assistant: %s\n", answer)
	return nil
}

// agentLoop asks the model until it gives a final answer, running the tool
// each other reply names and putting its answer in the next prompt.
func agentLoop(ctx context.Context, out io.Writer, model llms.Model, mem schema.Memory, tools []tool, input string) (string, error) {
	inputs := map[string]any{"input": input}
	vars, err := mem.LoadMemoryVariables(ctx, inputs)
	if err != nil {
		return "", err
	}
	var prompt strings.Builder
	prompt.WriteString("Answer the question. You have access to the following tools:\n")
	for _, t := range tools {
		fmt.Fprintf(&prompt, "- %s: %s\n", t.Name(), t.Description())
	}
	fmt.Fprintf(&prompt, "\nPrevious conversation history:\n%v\n\nQuestion: %s\n", vars[mem.GetMemoryKey(ctx)], input)
	for range 5 {
		reply, err := llms.GenerateFromSinglePrompt(ctx, model, prompt.String())
		if err != nil {
			return "", err
		}
		prompt.WriteString(reply + "\n")
		if _, answer, ok := strings.Cut(reply, "Final Answer:"); ok {
			answer = strings.TrimSpace(answer)
			return answer, mem.SaveContext(ctx, inputs, map[string]any{"output": answer})
		}
		_, rest, ok := strings.Cut(reply, "Action:")
		name, arg, ok2 := strings.Cut(rest, "\nAction Input:")
		if !ok || !ok2 {
			return "", fmt.Errorf("cannot read the model's reply %q", reply)
		}
		name, arg = strings.TrimSpace(name), strings.TrimSpace(arg)
		observation := name + " is not a valid tool, try another one"
		for _, t := range tools {
			if t.Name() == name {
				if observation, err = t.Call(ctx, arg); err != nil {
					return "", err
				}
			}
		}
		fmt.Fprintf(out, "  %s %s\n%s", name, arg, indent(observation))
		prompt.WriteString("Observation: " + observation + "\n")
	}
	return "", fmt.Errorf("the agent gave no final answer")
}

// indent indents each line of s by four spaces.
func indent(s string) string {
	if s == "" {
		return "    (nothing)\n"
	}
	return "    " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n    ") + "\n"
}
