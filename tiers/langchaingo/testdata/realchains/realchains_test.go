// Package realchains runs the langchaingo adapters of package
// tiers/langchaingo under langchaingo's own chains and agents:
// chains.NewConversation with chains.Run and chains.Call, a conversational
// agent and a one-shot agent run by agents.NewExecutor with the memory
// tools, and memory.NewConversationBuffer over the chat history, all with
// langchaingo's fake model, on a tiered memory on SQLite.
//
// Those langchaingo packages import modules (a template engine, a Starlark
// interpreter) that github.com/agentmem/memory does not depend on, so this
// is a module of its own, in a testdata directory the go command ignores.
// Run it from this directory:
//
//	go test .
//
// adding GOFLAGS=-mod=mod when agentmem's own requirements have changed
// since its go.mod was written.
package realchains

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/fake"
	lcmemory "github.com/tmc/langchaingo/memory"
	"github.com/tmc/langchaingo/schema"
	"github.com/tmc/langchaingo/tools"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/sqlite"
	"github.com/agentmem/memory/tiers/langchaingo"
	"github.com/agentmem/memory/tiers/tiered"
)

var (
	_ schema.Memory             = (*langchaingo.Memory)(nil)
	_ schema.ChatMessageHistory = (*langchaingo.ChatMessageHistory)(nil)
	_ tools.Tool                = (*langchaingo.SaveTool)(nil)
	_ tools.Tool                = (*langchaingo.SearchTool)(nil)
)

// model is the fake model, recording the prompts it receives.
type model struct {
	*fake.LLM
	mu      sync.Mutex
	prompts []string
}

func newModel(replies ...string) *model { return &model{LLM: fake.NewFakeLLM(replies)} }

func (m *model) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	var b strings.Builder
	for _, msg := range msgs {
		for _, p := range msg.Parts {
			if t, ok := p.(llms.TextContent); ok {
				b.WriteString(t.Text)
			}
		}
	}
	m.mu.Lock()
	m.prompts = append(m.prompts, b.String())
	m.mu.Unlock()
	return m.LLM.GenerateContent(ctx, msgs, opts...)
}

func (m *model) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}

func (m *model) prompt(i int) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if i < 0 {
		i += len(m.prompts)
	}
	return m.prompts[i]
}

func window(t *testing.T, m *tiered.Memory, id memory.Identity) []string {
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

func TestRealChainsAndAgents(t *testing.T) {
	ctx := context.Background()
	d, err := sqlite.Open(filepath.Join(t.TempDir(), "memory.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st := backend.NewStore(d, backend.StoreOptions{})
	defer st.Close()
	m, err := tiered.New(st, tiered.Options{IdleFlush: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	s1 := memory.Identity{Tenant: "acme", User: "alice", Agent: "concierge", Session: "s1"}
	s2 := s1
	s2.Session = "s2"

	// Session 1: a conversational agent under an executor with the
	// memory saves a fact with save_memory.
	save, _ := langchaingo.NewSaveTool(m, s1)
	search1, _ := langchaingo.NewSearchTool(m, s1, langchaingo.SearchOptions{MaxReadScope: memory.LevelAgent})
	mem1, err := langchaingo.NewMemory(m, s1, langchaingo.MemoryOptions{Level: memory.LevelAgent})
	if err != nil {
		t.Fatal(err)
	}
	llm := newModel(
		"Thought: Do I need to use a tool? Yes\nAction: save_memory\nAction Input: Alice's cat is called Miso",
		"Thought: Do I need to use a tool? No\nAI: Noted, Miso it is.",
	)
	ex := agents.NewExecutor(agents.NewConversationalAgent(llm, []tools.Tool{save, search1}), agents.WithMemory(mem1))
	if _, err := chains.Run(ctx, ex, "My cat is called Miso."); err != nil {
		t.Fatal(err)
	}
	if p := llm.prompt(0); !strings.Contains(p, "save_memory") || !strings.Contains(p, "search_memory") {
		t.Errorf("the agent's prompt does not offer the tools:\n%s", p)
	}
	if p := llm.prompt(1); !strings.Contains(p, "Observation: Saved to long-term memory: Alice's cat is called Miso") {
		t.Errorf("the agent's second prompt lacks the tool's answer:\n%s", p)
	}
	if got := window(t, m, s1); len(got) != 2 || got[0] != "user: My cat is called Miso." || !strings.HasPrefix(got[1], "assistant: ") {
		t.Errorf("session 1's window = %q", got)
	}

	// Session 2: a conversation chain recalls the fact at the agent level.
	mem2, _ := langchaingo.NewMemory(m, s2, langchaingo.MemoryOptions{Level: memory.LevelAgent})
	llm2 := newModel("Your cat is called Miso.", "Anything else?")
	conv := chains.NewConversation(llm2, mem2)
	out, err := chains.Run(ctx, conv, "What is my cat called?")
	if err != nil || out != "Your cat is called Miso." {
		t.Fatalf("chains.Run = %q, %v", out, err)
	}
	if p := llm2.prompt(0); !strings.Contains(p, "Current conversation:\n[Memory]\nKnown facts:\n- Alice's cat is called Miso\n[End of memory]\nHuman: What is my cat called?") {
		t.Errorf("the conversation's prompt lacks the recalled fact:\n%s", p)
	}
	if _, err := chains.Call(ctx, conv, map[string]any{"input": "Thanks"}); err != nil {
		t.Fatal(err)
	}
	if p := llm2.prompt(-1); !strings.Contains(p, "Recent turns:\nuser: What is my cat called?\nassistant: Your cat is called Miso.\n") {
		t.Errorf("the next prompt lacks the window:\n%s", p)
	}

	// langchaingo's buffer memory over the chat history.
	h, _ := langchaingo.NewChatMessageHistory(m, s2, langchaingo.HistoryOptions{})
	llm3 := newModel("OK")
	if _, err := chains.Run(ctx, chains.NewConversation(llm3, lcmemory.NewConversationBuffer(lcmemory.WithChatHistory(h))), "One more"); err != nil {
		t.Fatal(err)
	}
	if p := llm3.prompt(0); !strings.Contains(p, "Human: Thanks\nAI: Anything else?\nHuman: One more\nAI:") {
		t.Errorf("the buffer's prompt lacks the history:\n%s", p)
	}

	// A one-shot agent's search, asking for the user level, is capped at
	// the session level.
	search2, _ := langchaingo.NewSearchTool(m, s2, langchaingo.SearchOptions{MaxReadScope: memory.LevelSession})
	llm4 := newModel(
		"Thought: search\nAction: search_memory\nAction Input: {\"query\": \"cat\", \"scope\": \"user\"}",
		"Thought: I now know the final answer\nFinal Answer: I don't know.",
	)
	if _, err := chains.Run(ctx, agents.NewExecutor(agents.NewOneShotAgent(llm4, []tools.Tool{search2})), "What is my cat called?"); err != nil {
		t.Fatal(err)
	}
	if p := llm4.prompt(1); !strings.Contains(p, `Observation: Scope "user" is wider than this agent may read; searched at "session" instead.`) || strings.Contains(p, "Miso") {
		t.Errorf("the capped search:\n%s", p)
	}

	// Clear through the chain's memory erases the session.
	if err := conv.Memory.Clear(ctx); err != nil {
		t.Fatal(err)
	}
	if got := window(t, m, s2); len(got) != 0 {
		t.Errorf("after Clear the window holds %q", got)
	}
}
