package llmextract_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/tmc/langchaingo/llms"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/extract/llmextract"
)

// replyModel is an llms.Model that answers every request with one reply,
// reporting its tokens as langchaingo's OpenAI provider does. A program
// passes a real model: openai.New(), anthropic.New(), ollama.New(), ...
type replyModel string

func (m replyModel) GenerateContent(context.Context, []llms.MessageContent, ...llms.CallOption) (*llms.ContentResponse, error) {
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{
		Content:        string(m),
		GenerationInfo: map[string]any{"PromptTokens": 412, "CompletionTokens": 58},
	}}}, nil
}

func (m replyModel) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}

// Extract makes one model call for the whole evicted batch; the model's
// turn labels come back as the turns' record ids, and the known fact it
// names as superseded as that fact's id.
func ExampleExtractor_Extract() {
	id := memory.Identity{Tenant: "acme", User: "sam", Session: "s1"}
	now := time.Date(2024, 5, 3, 10, 0, 0, 0, time.UTC)
	turns := []memory.Record{
		memory.NewTurn(id, memory.RoleUser, "I finally moved to Porto last week!", now),
		memory.NewTurn(id, memory.RoleAssistant, "Congratulations! How is it?", now.Add(time.Minute)),
		memory.NewTurn(id, memory.RoleUser, "Great, and I'm vegetarian now, so the food is a treat.", now.Add(2*time.Minute)),
	}
	for i := range turns {
		turns[i].ID = fmt.Sprintf("turn-%d", i+1)
	}
	known := memory.NewFact(memory.Identity{Tenant: "acme", User: "sam"}, "The user lives in Lisbon.", now.AddDate(0, -2, 0))
	known.ID = "fact-lisbon"

	model := replyModel("```json\n" + `{"facts": [
	  {"text": "The user moved to Porto in the last week of April 2024.", "sources": ["T1"], "supersedes": "F1"},
	  {"text": "The user is vegetarian.", "sources": ["T3"]}
	]}` + "\n```")
	e, err := llmextract.New(model, llmextract.Options{CallOptions: []llms.CallOption{llms.WithTemperature(0)}})
	if err != nil {
		log.Fatal(err)
	}
	facts, usage, err := e.Extract(context.Background(), turns, []memory.Record{known})
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range facts {
		fmt.Printf("%s %v supersedes %q\n", f.Text, f.Sources, f.Supersedes)
	}
	fmt.Printf("%d call, %d prompt and %d completion tokens\n", usage.ModelCalls, usage.PromptTokens, usage.CompletionTokens)
	// Output:
	// The user moved to Porto in the last week of April 2024. [turn-1] supersedes "fact-lisbon"
	// The user is vegetarian. [turn-3] supersedes ""
	// 1 call, 412 prompt and 58 completion tokens
}

// Summarize folds the evicted turns into the previous digest in one call.
func ExampleExtractor_Summarize() {
	id := memory.Identity{Tenant: "acme", User: "sam", Session: "s1"}
	turns := []memory.Record{memory.NewTurn(id, memory.RoleUser, "Book the 9:40 train to Lisbon on Friday, please.", time.Now())}
	model := replyModel("Sam moved to Porto and is vegetarian. He asked for the 9:40 train to Lisbon on Friday.")
	e, err := llmextract.New(model, llmextract.Options{})
	if err != nil {
		log.Fatal(err)
	}
	digest, _, err := e.Summarize(context.Background(), "Sam moved to Porto and is vegetarian.", turns)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(digest)
	// Output:
	// Sam moved to Porto and is vegetarian. He asked for the 9:40 train to Lisbon on Friday.
}
