package langchaingo_test

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/fake"
	"github.com/tmc/langchaingo/schema"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/backend/sqlite"
	"github.com/agentmem/memory/tiers/langchaingo"
	"github.com/agentmem/memory/tiers/tiered"
)

// The adapters satisfy langchaingo's interfaces. tools.Tool is spelled out
// (langchainTool): package tools imports a module this one does not
// depend on.
var (
	_ schema.Memory             = (*langchaingo.Memory)(nil)
	_ schema.ChatMessageHistory = (*langchaingo.ChatMessageHistory)(nil)
	_ langchainTool             = (*langchaingo.SaveTool)(nil)
	_ langchainTool             = (*langchaingo.SearchTool)(nil)
)

// langchainTool is langchaingo's tools.Tool interface.
type langchainTool interface {
	Name() string
	Description() string
	Call(ctx context.Context, input string) (string, error)
}

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

// model is langchaingo's fake model, scripted with replies, recording
// the prompts it receives.
type model struct {
	*fake.LLM
	mu      sync.Mutex
	prompts []string
}

func newModel(replies ...string) *model { return &model{LLM: fake.NewFakeLLM(replies)} }

// GenerateContent records the prompt's text and answers with the next
// scripted reply.
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

// Call is GenerateContent on one prompt.
func (m *model) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}

// last returns the last prompt the model received.
func (m *model) last(t *testing.T) string {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.prompts) == 0 {
		t.Fatal("the model was not called")
	}
	return m.prompts[len(m.prompts)-1]
}

// converse runs one exchange the way langchaingo's chains.Call runs the
// chain chains.NewConversation makes (the langchaingo chains package needs
// modules this one does not depend on): the memory's variables loaded for
// the inputs, a prompt holding the memory variable and the input, one
// model call, and SaveContext with the inputs and the reply under "text".
func converse(ctx context.Context, llm llms.Model, mem schema.Memory, input string) (string, error) {
	inputs := map[string]any{"input": input}
	vars, err := mem.LoadMemoryVariables(ctx, inputs)
	if err != nil {
		return "", err
	}
	prompt := fmt.Sprintf("The following is a conversation between a human and an AI.\n\nCurrent conversation:\n%v\nHuman: %s\nAI:",
		vars[mem.GetMemoryKey(ctx)], input)
	reply, err := llms.GenerateFromSinglePrompt(ctx, llm, prompt)
	if err != nil {
		return "", err
	}
	return reply, mem.SaveContext(ctx, inputs, map[string]any{"text": reply})
}

// action is a reply's tool call in langchaingo's one-shot (MRKL) agent
// format.
var action = regexp.MustCompile(`(?s)Action:\s*(.*?)\s*\nAction Input:\s*(.*)`)

// runAgent runs an agent loop in the format of langchaingo's one-shot
// agent over an executor with mem: the memory loaded for the input, the
// model asked, each "Action:"/"Action Input:" reply run as a call of the
// named tool whose answer is put after "Observation:" in the next prompt,
// until a reply with "Final Answer:", which is returned and saved with the
// input under "output". A tool's Go error ends the run, as it ends an
// executor's.
func runAgent(ctx context.Context, llm llms.Model, mem schema.Memory, tools []langchainTool, input string) (string, error) {
	inputs := map[string]any{"input": input}
	vars, err := mem.LoadMemoryVariables(ctx, inputs)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("Answer the question. You have these tools:\n")
	for _, t := range tools {
		fmt.Fprintf(&b, "- %s: %s\n", t.Name(), t.Description())
	}
	fmt.Fprintf(&b, "\nPrevious conversation history:\n%v\n\nQuestion: %s\n", vars[mem.GetMemoryKey(ctx)], input)
	for range 5 {
		reply, err := llms.GenerateFromSinglePrompt(ctx, llm, b.String())
		if err != nil {
			return "", err
		}
		b.WriteString(reply + "\n")
		if _, answer, ok := strings.Cut(reply, "Final Answer:"); ok {
			answer = strings.TrimSpace(answer)
			return answer, mem.SaveContext(ctx, inputs, map[string]any{"output": answer})
		}
		m := action.FindStringSubmatch(reply)
		if m == nil {
			return "", fmt.Errorf("cannot parse the reply %q", reply)
		}
		observation := m[1] + " is not a valid tool"
		for _, t := range tools {
			if strings.EqualFold(t.Name(), m[1]) {
				if observation, err = t.Call(ctx, strings.TrimSpace(m[2])); err != nil {
					return "", err
				}
			}
		}
		b.WriteString("Observation: " + observation + "\n")
	}
	return "", fmt.Errorf("the agent did not finish")
}

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
