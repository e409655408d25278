// Command quickstart shows an agent remembering across runs on the embedded
// default: one SQLite file, no services, no API key.
//
// Run it twice:
//
//	go run ./examples/quickstart
//	go run ./examples/quickstart
//
// The first run has nothing to recall; it does its step and saves a one-line
// summary. The second run recalls that summary as the
// [Previous execution context] block and prepends it to the system prompt.
// Set AGENTMEM_DB to choose the database file; delete the file to start over.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tmc/langchaingo/llms"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/sqlite"
	"github.com/agentmem/memory/tiers"
)

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	path, err := databasePath()
	if err != nil {
		return err
	}
	fmt.Println("Memory file:", path)

	// 1. Open the embedded store and the summary memory type: keep the last
	//    10 step summaries for 7 days, as in `spec.memory` (type: summary,
	//    maxEntries: 10, ttl: 7d).
	driver, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		return err
	}
	store := backend.NewStore(driver, backend.StoreOptions{})
	defer store.Close()
	ttl, err := tiers.ParseTTL("7d")
	if err != nil {
		return err
	}
	mem, err := tiers.NewSummary(store, tiers.SummaryOptions{MaxEntries: 10, TTL: ttl})
	if err != nil {
		return err
	}

	// 2. Who is acting. A real host sets this from verified credentials,
	//    never from what a model says.
	who := memory.Identity{
		Agent:   "kaos://agent/ai-agents/anomaly-monitor",
		Session: fmt.Sprintf("run-%d", time.Now().UnixNano()),
	}

	// 3. Step start: recall what earlier runs left behind, before the task.
	//    Summary memory recalls the newest steps, whatever the task is about.
	task := "Check the checkout service: p99 latency alert fired at 03:12 UTC."
	recalled, err := mem.Recall(ctx, who, task)
	if err != nil {
		return err
	}
	if recalled.Text == "" {
		fmt.Println("\nRecalled: nothing yet, this is the agent's first run.")
	} else {
		fmt.Printf("\nRecalled %d earlier step(s); this block is prepended to the system prompt:\n\n%s", len(recalled.Records), recalled.Text)
	}
	system := tiers.Prepend(recalled, "You are an anomaly monitor. Say whether an alert is new or recurring.")

	// 4. Run the step. Any langchaingo llms.Model plugs in here, for example
	//    openai.New() from github.com/tmc/langchaingo/llms/openai.
	var model llms.Model = scriptedModel{}
	answer, err := model.GenerateContent(ctx, []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, system),
		llms.TextParts(llms.ChatMessageTypeHuman, task),
	})
	if err != nil {
		return err
	}
	output := answer.Choices[0].Content
	fmt.Println("\nTask:  ", task)
	fmt.Println("Answer:", output)

	// 5. Step end: save a one-line summary for the next run.
	step := tiers.Step{Workflow: "nightly-checks", Name: "latency", Input: task, Output: output}
	if err := mem.Save(ctx, who, step); err != nil {
		return err
	}
	fmt.Println("\nSaved for next time:", step.Summary())
	fmt.Println("Run the same command again to see it recalled.")
	return nil
}

// databasePath is $AGENTMEM_DB, or quickstart.db in the user's cache
// directory (the system temp directory when there is none).
func databasePath() (string, error) {
	if p := os.Getenv("AGENTMEM_DB"); p != "" {
		return p, nil
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	dir = filepath.Join(dir, "agentmem")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	return filepath.Join(dir, "quickstart.db"), nil
}

// scriptedModel stands in for a real model so the quickstart needs no API
// key. It answers from what its system prompt holds, as a real model would:
// with no earlier context the alert is new; with recalled summaries of the
// same step it is recurring.
type scriptedModel struct{}

// GenerateContent answers from the system messages, as described above.
func (scriptedModel) GenerateContent(_ context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	var system string
	for _, m := range msgs {
		if m.Role == llms.ChatMessageTypeSystem {
			for _, p := range m.Parts {
				if t, ok := p.(llms.TextContent); ok {
					system += t.Text
				}
			}
		}
	}
	answer := "New alert: no earlier run saw p99 latency on checkout. Opened an incident."
	if n := strings.Count(system, "[nightly-checks/latency]"); n > 0 {
		answer = fmt.Sprintf("Recurring alert: p99 latency on checkout was seen in %d earlier run(s). Linked to the open incident instead of opening a new one.", n)
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: answer}}}, nil
}

// Call is llms.Model's single-prompt form.
func (m scriptedModel) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}
