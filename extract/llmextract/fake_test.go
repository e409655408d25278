package llmextract_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/tmc/langchaingo/llms"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/extract"
)

// step is what a scripted model does on one call.
type step struct {
	resp *llms.ContentResponse
	err  error
	// block makes the call wait for its context to end and fail with the
	// context's error wrapped, as providers do.
	block bool
}

// text is a step that replies content, reporting tokens as OpenAI does.
func text(content string) step {
	return step{resp: &llms.ContentResponse{Choices: []*llms.ContentChoice{{
		Content:        content,
		GenerationInfo: map[string]any{"PromptTokens": 120, "CompletionTokens": 30, "TotalTokens": 150},
	}}}}
}

// call is one GenerateContent call the scripted model received.
type call struct {
	messages []llms.MessageContent
	options  llms.CallOptions
}

// scripted is an llms.Model that plays its steps in order, the last one
// again once they run out, and records every call.
type scripted struct {
	mu    sync.Mutex
	steps []step
	calls []call
}

func (m *scripted) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	var o llms.CallOptions
	for _, opt := range opts {
		opt(&o)
	}
	m.mu.Lock()
	m.calls = append(m.calls, call{messages: msgs, options: o})
	s := m.steps[min(len(m.calls), len(m.steps))-1]
	m.mu.Unlock()
	if s.block {
		<-ctx.Done()
		return nil, fmt.Errorf("provider: request failed: %w", ctx.Err())
	}
	return s.resp, s.err
}

func (m *scripted) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}

func (m *scripted) callCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.calls)
}

// userMessage returns the text of the human message of call i.
func (m *scripted) userMessage(i int) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls[i].messages[1].Parts[0].(llms.TextContent).Text
}

var testTime = time.Date(2024, 5, 3, 10, 0, 0, 0, time.UTC)

// turns returns user turns with the ids t1, t2, ...
func turns(texts ...string) []memory.Record {
	id := memory.Identity{Tenant: "acme", User: "sam", Session: "s1"}
	out := make([]memory.Record, len(texts))
	for i, text := range texts {
		out[i] = memory.NewTurn(id, memory.RoleUser, text, testTime.Add(time.Duration(i)*time.Minute))
		out[i].ID = fmt.Sprintf("t%d", i+1)
	}
	return out
}

// facts returns known facts with the ids k1, k2, ...
func facts(texts ...string) []memory.Record {
	id := memory.Identity{Tenant: "acme", User: "sam"}
	out := make([]memory.Record, len(texts))
	for i, text := range texts {
		out[i] = memory.NewFact(id, text, testTime)
		out[i].ID = fmt.Sprintf("k%d", i+1)
	}
	return out
}

// reported is the usage of one call that text reports.
var reported = extract.Usage{ModelCalls: 1, PromptTokens: 120, CompletionTokens: 30}
