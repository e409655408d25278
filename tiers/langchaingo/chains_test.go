package langchaingo_test

// The adapters under langchaingo's own chains and agents: the conversation
// chain chains.NewConversation run with chains.Run and chains.Call, agent
// executors (agents.NewExecutor) over the conversational and the one-shot
// agent with the memory tools, and langchaingo's ConversationBuffer memory
// over the chat history, all with langchaingo's fake model answering with
// scripted replies.

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	lcmemory "github.com/tmc/langchaingo/memory"
	"github.com/tmc/langchaingo/schema"
	"github.com/tmc/langchaingo/tools"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/tiers/langchaingo"
	"github.com/agentmem/memory/tiers/tiered"
)

// The adapters satisfy langchaingo's interfaces.
var (
	_ schema.Memory             = (*langchaingo.Memory)(nil)
	_ schema.ChatMessageHistory = (*langchaingo.ChatMessageHistory)(nil)
	_ tools.Tool                = (*langchaingo.SaveTool)(nil)
	_ tools.Tool                = (*langchaingo.SearchTool)(nil)
)

// TestConversationAcrossSessions: in one session a conversational agent,
// run by an executor with the Memory, saves a fact with save_memory; in
// the next, a conversation chain whose Memory recalls at the agent level
// puts the fact in the model's prompt, then the window of the turns said
// since. Each exchange is stored as a user and an assistant turn, which
// langchaingo's buffer memory reads back through the chat history; Clear
// through the chain's memory erases the session.
func TestConversationAcrossSessions(t *testing.T) {
	eachDriver(t, func(t *testing.T, m *tiered.Memory) {
		ctx := context.Background()
		mem1, err := langchaingo.NewMemory(m, s1, langchaingo.MemoryOptions{Level: memory.LevelAgent})
		if err != nil {
			t.Fatal(err)
		}
		save, err := langchaingo.NewSaveTool(m, s1)
		if err != nil {
			t.Fatal(err)
		}
		search, err := langchaingo.NewSearchTool(m, s1, langchaingo.SearchOptions{MaxReadScope: memory.LevelAgent})
		if err != nil {
			t.Fatal(err)
		}
		llm := newModel(
			"Thought: Do I need to use a tool? Yes\nAction: save_memory\nAction Input: Alice's cat is called Miso",
			"Thought: Do I need to use a tool? No\nAI: Noted: your cat is Miso.",
		)
		agent := agents.NewExecutor(agents.NewConversationalAgent(llm, []tools.Tool{save, search}), agents.WithMemory(mem1))
		out, err := chains.Run(ctx, agent, "My cat is called Miso.")
		if err != nil {
			t.Fatal(err)
		}
		if strings.TrimSpace(out) != "Noted: your cat is Miso." || llm.calls() != 2 {
			t.Errorf("the agent answered %q after %d model calls, want the second reply's answer after 2", out, llm.calls())
		}
		if p := llm.prompt(t, 0); !strings.Contains(p, "- save_memory: Save one fact") || !strings.Contains(p, "- search_memory: Search long-term memory") {
			t.Errorf("the agent's prompt does not offer the tools:\n%s", p)
		}
		if !strings.Contains(llm.last(t), "Observation: Saved to long-term memory: Alice's cat is called Miso") {
			t.Errorf("the agent's second prompt lacks the tool's answer:\n%s", llm.last(t))
		}
		want := []string{"user: My cat is called Miso.", "assistant: " + out}
		if got := window(t, m, s1); !slices.Equal(got, want) {
			t.Errorf("session 1's window = %q, want %q", got, want)
		}

		mem2, err := langchaingo.NewMemory(m, s2, langchaingo.MemoryOptions{Level: memory.LevelAgent})
		if err != nil {
			t.Fatal(err)
		}
		llm2 := newModel("Your cat is called Miso.", "You're welcome.")
		conv := chains.NewConversation(llm2, mem2)
		if out, err := chains.Run(ctx, conv, "What is my cat called?"); err != nil || out != "Your cat is called Miso." {
			t.Fatalf("chains.Run = %q, %v", out, err)
		}
		prompt := llm2.last(t)
		if !strings.Contains(prompt, "Current conversation:\n"+tiered.BlockStart+"\nKnown facts:\n- Alice's cat is called Miso\n"+tiered.BlockEnd+"\nHuman: What is my cat called?\nAI:") {
			t.Errorf("the second session's prompt lacks the fact saved in the first:\n%s", prompt)
		}
		if strings.Contains(prompt, "My cat is called Miso.") {
			t.Errorf("the second session's prompt holds the first session's window:\n%s", prompt)
		}
		res, err := chains.Call(ctx, conv, map[string]any{"input": "Thanks!"})
		if err != nil || res["text"] != "You're welcome." {
			t.Fatalf("chains.Call = %v, %v", res, err)
		}
		// Facts are recalled for the input: none is about "Thanks!".
		if prompt := llm2.last(t); !strings.Contains(prompt, "Recent turns:\nuser: What is my cat called?\nassistant: Your cat is called Miso.\n") || strings.Contains(prompt, "Known facts") {
			t.Errorf("the next prompt lacks the session's window, or holds facts not about its input:\n%s", prompt)
		}
		want = []string{"user: What is my cat called?", "assistant: Your cat is called Miso.", "user: Thanks!", "assistant: You're welcome."}
		if got := window(t, m, s2); !slices.Equal(got, want) {
			t.Errorf("session 2's window = %q, want %q", got, want)
		}

		// At the session level (the default), the fact of session 1 is
		// not recalled in session 2.
		narrow, err := langchaingo.NewMemory(m, s2, langchaingo.MemoryOptions{})
		if err != nil {
			t.Fatal(err)
		}
		vars, err := narrow.LoadMemoryVariables(ctx, map[string]any{"input": "What is my cat called?"})
		if err != nil {
			t.Fatal(err)
		}
		if block := vars["history"].(string); strings.Contains(block, "Alice's cat") || strings.Contains(block, "Known facts") {
			t.Errorf("a session-level recall found another session's fact:\n%s", block)
		}

		// langchaingo's buffer memory over the chat history reads the
		// turns the Memory stored.
		h, err := langchaingo.NewChatMessageHistory(m, s2, langchaingo.HistoryOptions{})
		if err != nil {
			t.Fatal(err)
		}
		llm3 := newModel("OK")
		if _, err := chains.Run(ctx, chains.NewConversation(llm3, lcmemory.NewConversationBuffer(lcmemory.WithChatHistory(h))), "One more"); err != nil {
			t.Fatal(err)
		}
		if p := llm3.last(t); !strings.Contains(p, "Human: What is my cat called?\nAI: Your cat is called Miso.\nHuman: Thanks!\nAI: You're welcome.\nHuman: One more\nAI:") {
			t.Errorf("the buffer's prompt lacks the turns the Memory stored:\n%s", p)
		}

		// Clear through the chain's memory erases the session and leaves
		// the first alone.
		if err := conv.GetMemory().Clear(ctx); err != nil {
			t.Fatal(err)
		}
		if got := window(t, m, s2); len(got) != 0 {
			t.Errorf("after Clear session 2's window holds %q", got)
		}
		if got := window(t, m, s1); len(got) != 2 {
			t.Errorf("Clear of session 2 changed session 1's window: %q", got)
		}
	})
}

// TestAgentSearchesMemory: a one-shot agent run by an executor with the
// memory tools answers a mistaken search_memory input with the tool's
// mistake answer, not an error, searches again, is capped at its maximum
// read scope and answers from what it found; the executor's memory stores
// the exchange. Under a session-level maximum the same search finds
// nothing; a Go error of a tool ends the executor's run.
func TestAgentSearchesMemory(t *testing.T) {
	eachDriver(t, func(t *testing.T, m *tiered.Memory) {
		ctx := context.Background()
		if _, err := m.Remember(ctx, s1, "Alice's train leaves Lisbon at 9:40"); err != nil {
			t.Fatal(err)
		}
		search, _ := langchaingo.NewSearchTool(m, s2, langchaingo.SearchOptions{MaxReadScope: memory.LevelAgent})
		save, _ := langchaingo.NewSaveTool(m, s2)
		mem, _ := langchaingo.NewMemory(m, s2, langchaingo.MemoryOptions{})
		llm := newModel(
			"Thought: look it up\nAction: search_memory\nAction Input: {\"query\": \"\"}",
			"Thought: with a query this time\nAction: search_memory\nAction Input: {\"query\": \"train Lisbon\", \"scope\": \"user\"}",
			"Thought: found it\nFinal Answer: At 9:40.",
		)
		agent := agents.NewExecutor(agents.NewOneShotAgent(llm, []tools.Tool{search, save}), agents.WithMemory(mem))
		out, err := chains.Run(ctx, agent, "When does my train leave?")
		if err != nil {
			t.Fatal(err)
		}
		if out != "At 9:40." || llm.calls() != 3 {
			t.Errorf("answer %q after %d model calls, want the third reply's", out, llm.calls())
		}
		prompt := llm.last(t)
		for _, want := range []string{
			"- search_memory: Search long-term memory", "- save_memory: Save one fact",
			"Observation: The search_memory call was not run: the query is empty.\n",
			`Observation: Scope "user" is wider than this agent may read; searched at "agent" instead.`,
			"1 fact from agent memory for \"train Lisbon\", best first:\n" + tiered.BlockStart + "\nKnown facts:\n- Alice's train leaves Lisbon at 9:40\n" + tiered.BlockEnd,
		} {
			if !strings.Contains(prompt, want) {
				t.Errorf("the agent's last prompt lacks %q:\n%s", want, prompt)
			}
		}
		stored := []string{"user: When does my train leave?", "assistant: At 9:40."}
		if got := window(t, m, s2); !slices.Equal(got, stored) {
			t.Errorf("stored turns %q", got)
		}

		// Capped at the session level, the search asking for the user
		// level finds nothing. An executor without memory stores no turn.
		narrow, _ := langchaingo.NewSearchTool(m, s2, langchaingo.SearchOptions{MaxReadScope: memory.LevelSession})
		llm = newModel(
			"Thought: look it up\nAction: search_memory\nAction Input: {\"query\": \"train Lisbon\", \"scope\": \"user\"}",
			"Thought: I now know the final answer\nFinal Answer: I don't know.",
		)
		if _, err := chains.Run(ctx, agents.NewExecutor(agents.NewOneShotAgent(llm, []tools.Tool{narrow})), "When does my train leave?"); err != nil {
			t.Fatal(err)
		}
		want := "Observation: Scope \"user\" is wider than this agent may read; searched at \"session\" instead.\nNo facts in session memory match \"train Lisbon\"."
		if p := llm.last(t); !strings.Contains(p, want) || strings.Contains(p, "9:40") {
			t.Errorf("the capped search's prompt lacks %q or holds the fact:\n%s", want, p)
		}
		if got := window(t, m, s2); !slices.Equal(got, stored) {
			t.Errorf("an executor without memory stored turns: %q", got)
		}

		// A store-level search under the default posture is a Go error,
		// which ends the run: no answer, nothing stored.
		wide, _ := langchaingo.NewSearchTool(m, s2, langchaingo.SearchOptions{MaxReadScope: memory.LevelStore})
		llm = newModel(
			"Thought: look everywhere\nAction: search_memory\nAction Input: train",
			"Thought: I now know the final answer\nFinal Answer: unreachable",
		)
		agent = agents.NewExecutor(agents.NewOneShotAgent(llm, []tools.Tool{wide}), agents.WithMemory(mem))
		if out, err := chains.Run(ctx, agent, "Anything about trains?"); !errors.Is(err, memory.ErrPermissionDenied) || llm.calls() != 1 {
			t.Errorf("a refused search = %q, %v after %d model calls; want ErrPermissionDenied after 1", out, err, llm.calls())
		}
		if got := window(t, m, s2); !slices.Equal(got, stored) {
			t.Errorf("a failed run stored turns: %q", got)
		}
	})
}

// TestExecutorInputs: an agent executor's inputs must all be strings, so
// a Memory that returns messages cannot feed one (the executor refuses
// it before the model is called); the rendered default can.
func TestExecutorInputs(t *testing.T) {
	ctx := context.Background()
	m := newTiered(t, "inmem")
	var answer string
	for _, c := range []struct {
		returnMessages bool
		want           error
	}{{true, agents.ErrExecutorInputNotString}, {false, nil}} {
		mem, err := langchaingo.NewMemory(m, s1, langchaingo.MemoryOptions{ReturnMessages: c.returnMessages})
		if err != nil {
			t.Fatal(err)
		}
		llm := newModel("Thought: Do I need to use a tool? No\nAI: Hello.")
		agent := agents.NewExecutor(agents.NewConversationalAgent(llm, nil), agents.WithMemory(mem))
		out, err := chains.Run(ctx, agent, "Hi")
		if !errors.Is(err, c.want) || c.want != nil && llm.calls() != 0 {
			t.Errorf("ReturnMessages %v: chains.Run = %q, %v after %d model calls, want %v", c.returnMessages, out, err, llm.calls(), c.want)
		}
		if err == nil {
			answer = out
		}
	}
	// The refused run stored nothing.
	if got := window(t, m, s1); !slices.Equal(got, []string{"user: Hi", "assistant: " + answer}) || strings.TrimSpace(answer) != "Hello." {
		t.Errorf("stored turns %q", got)
	}
}

// TestHistoryUnderBuffer: a conversation chain with langchaingo's own
// ConversationBuffer memory over the history loads the session's turns
// with its prefixes and stores an exchange as a user and an assistant
// turn; the buffer's Clear erases the session.
func TestHistoryUnderBuffer(t *testing.T) {
	eachDriver(t, func(t *testing.T, m *tiered.Memory) {
		ctx := context.Background()
		h, err := langchaingo.NewChatMessageHistory(m, s1, langchaingo.HistoryOptions{})
		if err != nil {
			t.Fatal(err)
		}
		llm := newModel("Lisbon, you said.", "Sardines.")
		conv := chains.NewConversation(llm, lcmemory.NewConversationBuffer(lcmemory.WithChatHistory(h)))
		for _, say := range []string{"I live in Lisbon.", "What do I like to eat?"} {
			if _, err := chains.Run(ctx, conv, say); err != nil {
				t.Fatal(err)
			}
		}
		if !strings.Contains(llm.last(t), "Current conversation:\nHuman: I live in Lisbon.\nAI: Lisbon, you said.\nHuman: What do I like to eat?") {
			t.Errorf("the buffer's prompt lacks the history:\n%s", llm.last(t))
		}
		want := []string{"user: I live in Lisbon.", "assistant: Lisbon, you said.", "user: What do I like to eat?", "assistant: Sardines."}
		if got := window(t, m, s1); !slices.Equal(got, want) {
			t.Errorf("stored turns = %q, want %q", got, want)
		}
		if err := conv.GetMemory().Clear(ctx); err != nil {
			t.Fatal(err)
		}
		if got := window(t, m, s1); len(got) != 0 {
			t.Errorf("after the buffer's Clear the session holds %q", got)
		}
	})
}
