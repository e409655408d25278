// Package scriptedllm is langchaingo's fake model (llms/fake), answering
// with scripted replies in turn, that keeps the text of every prompt it
// receives: the langchaingo adapters' tests and example program show and
// check what a chain or an agent put in the model's prompt with it.
package scriptedllm

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/fake"
)

// Model is an llms.Model answering with scripted replies and keeping the
// prompts it receives. It is safe for concurrent use.
type Model struct {
	*fake.LLM
	mu      sync.Mutex
	prompts []string
}

// New returns a Model answering with replies in turn.
func New(replies ...string) *Model { return &Model{LLM: fake.NewFakeLLM(replies)} }

// GenerateContent keeps the text of msgs, concatenated, and answers with
// the next scripted reply.
func (m *Model) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
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
func (m *Model) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}

// Prompts returns the prompts the model received, oldest first.
func (m *Model) Prompts() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.prompts)
}
