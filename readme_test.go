package memory_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/sqlite"
	"github.com/agentmem/memory/recall"
	"github.com/agentmem/memory/tiers"
)

// Example_readmeTour is the README's API tour, run on a real SQLite file.
func Example_readmeTour() {
	dir, err := os.MkdirTemp("", "agentmem-readme-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	if err := readmeTour(dir); err != nil {
		fmt.Println("error:", err)
	}
	// Output:
	// [Previous execution context]
	// [nightly/scan] Task: Scan the payments service for anomalies | Result: p99 latency spike at 03:12, first occurrence
	//
	// [Current task follows]
	// You are an anomaly monitor.
	// 1 record(s) at the agent level
	// true
	// Latency alerts fire when p99 exceeds 800 ms for five minutes
	// forgot 3
}

func readmeTour(dir string) error {
	ctx := context.Background()

	// The embedded default: one SQLite file.
	driver, err := sqlite.Open(filepath.Join(dir, "agent.db"), sqlite.Options{})
	if err != nil {
		return err
	}
	store := backend.NewStore(driver, backend.StoreOptions{})
	defer store.Close()

	// The `summary` memory type: spec.memory {type: summary, maxEntries: 10, ttl: 7d}.
	ttl, err := tiers.ParseTTL("7d")
	if err != nil {
		return err
	}
	mem, err := tiers.NewSummary(store, tiers.SummaryOptions{MaxEntries: 10, TTL: ttl})
	if err != nil {
		return err
	}

	// Who is acting: set by your program from verified credentials.
	who := memory.Identity{Tenant: "acme", Agent: "kaos://agent/ai-agents/monitor", Session: "run-1"}

	// End of a step: save a one-line summary.
	err = mem.Save(ctx, who, tiers.Step{
		Workflow: "nightly", Name: "scan",
		Input:  "Scan the payments service for anomalies",
		Output: "p99 latency spike at 03:12, first occurrence",
	})
	if err != nil {
		return err
	}

	// Start of the next step (a new run): recall for its task (summary memory
	// recalls the newest steps, whatever the task), and prepend to the system prompt.
	who.Session = "run-2"
	recalled, err := mem.Recall(ctx, who, "Scan the payments service again")
	if err != nil {
		return err
	}
	fmt.Println(tiers.Prepend(recalled, "You are an anomaly monitor."))

	// Records are reachable through any level the writer's identity spans.
	recent, err := store.List(ctx, who, memory.Query{Level: memory.LevelAgent, Limit: 50})
	if err != nil {
		return err
	}
	fmt.Println(len(recent), "record(s) at the agent level")

	// A level whose field the caller lacks fails before storage is touched.
	_, err = store.List(ctx, memory.Identity{Tenant: "acme"}, memory.Query{Level: memory.LevelUser})
	fmt.Println(errors.Is(err, memory.ErrIncompleteScope))

	// Long-term facts, recalled by relevance: BM25 over the level's records, no model needed.
	for _, fact := range []string{
		"The payments service pages the on-call SRE through PagerDuty",
		"Latency alerts fire when p99 exceeds 800 ms for five minutes",
	} {
		if err := store.Add(ctx, who, memory.Record{Kind: memory.KindFact, Content: fact}); err != nil {
			return err
		}
	}
	rec, err := recall.New(store, recall.Options{})
	if err != nil {
		return err
	}
	facts := memory.Query{Level: memory.LevelAgent, Kinds: []memory.Kind{memory.KindFact}}
	found, err := rec.Recall(ctx, who, facts, "when does a latency alert fire?", 1)
	if err != nil {
		return err
	}
	fmt.Println(found.Hits[0].Record.Content)

	// Erasure at a level removes exactly what that level reaches.
	n, err := store.Forget(ctx, who, memory.LevelAgent)
	if err != nil {
		return err
	}
	fmt.Println("forgot", n)
	return nil
}

// TestReadmeTourInSync checks that the README's API tour is exactly the
// body of readmeTour, so the code a newcomer copies compiles and runs.
func TestReadmeTourInSync(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "<!-- tour:start -->\n```go\n")
	tour, _, ok2 := strings.Cut(rest, "```\n<!-- tour:end -->")
	if !ok || !ok2 {
		t.Fatal("README.md has no API tour between the tour markers")
	}
	src, err := os.ReadFile("readme_test.go")
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	want.WriteString("func readmeTour(dir string) error {\n")
	for _, line := range strings.Split(strings.TrimSuffix(tour, "\n"), "\n") {
		if line != "" {
			want.WriteString("\t" + line)
		}
		want.WriteString("\n")
	}
	want.WriteString("\treturn nil\n}\n")
	if !strings.Contains(string(src), want.String()) {
		t.Errorf("the README's API tour and readmeTour in readme_test.go differ; make them equal")
	}
}

// TestReadmeAgentInSync checks that the Agent YAML the README shows is the
// manifest examples/kubernetes-agent runs by default, less its leading
// comment.
func TestReadmeAgentInSync(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := os.ReadFile("examples/kubernetes-agent/agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "The matching Agent (`examples/kubernetes-agent/agent.yaml`):\n\n```yaml\n")
	if !ok {
		t.Fatal("README.md has no Agent YAML block after \"The matching Agent\"")
	}
	shown, _, ok := strings.Cut(after, "```\n")
	if !ok {
		t.Fatal("the README's Agent YAML block is not closed")
	}
	var body []string
	for _, line := range strings.SplitAfter(string(manifest), "\n") {
		if len(body) == 0 && strings.HasPrefix(line, "#") {
			continue
		}
		body = append(body, line)
	}
	if want := strings.Join(body, ""); shown != want {
		t.Errorf("README.md shows an Agent that differs from examples/kubernetes-agent/agent.yaml:\n%s\nwant:\n%s", shown, want)
	}
}
