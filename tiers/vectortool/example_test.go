package vectortool_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/tiers"
	"github.com/agentmem/memory/tiers/vectortool"
)

// The host program binds the tool to the running agent's verified
// identity and offers it to the model; the model calls it with JSON
// arguments and cites the entry names it gets back.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "agent-memory-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	// The store is the memory's source of posture, token counts and clock;
	// the entries live in the directory.
	store := backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{})
	defer store.Close()
	mem, err := tiers.NewVector(ctx, store, tiers.VectorOptions{Dir: dir})
	if err != nil {
		log.Fatal(err)
	}
	defer mem.Close()
	id := memory.Identity{Agent: "kaos://agent/ai-agents/security-scanner", Session: "run-7"}
	err = mem.Save(ctx, id, tiers.Step{Workflow: "weekly", Name: "scan", Input: "Scan images", Output: "openssl 3.0.2 is vulnerable (CVE-2022-3602)"})
	if err != nil {
		log.Fatal(err)
	}

	tool, err := vectortool.New(mem, id)
	if err != nil {
		log.Fatal(err)
	}
	def := vectortool.Definition() // for llms.WithTools / llms.WithFunctions
	fmt.Println(tool.Name(), def.Name)

	out, err := tool.Call(ctx, `{"query": "openssl vulnerable", "k": 3}`)
	if err != nil {
		log.Fatal(err)
	}
	lines := strings.Split(out, "\n")
	fmt.Println(lines[0])
	fmt.Println(strings.HasPrefix(lines[2], "entry ") && strings.Contains(lines[2], ".txt (score 0.575, saved "))
	fmt.Println(lines[3])

	// A mistake in the model's arguments is the tool's answer, not an
	// error: the model reads what was wrong and calls again.
	out, err = tool.Call(ctx, `{"query": "openssl", "k": 500}`)
	fmt.Println(strings.SplitN(out, "\n", 2)[0], err)
	// Output:
	// vector-search vector-search
	// 1 match for "openssl vulnerable", best first; cite the entry name:
	// true
	// [weekly/scan] Task: Scan images | Result: openssl 3.0.2 is vulnerable (CVE-2022-3602)
	// The vector-search call was not run: "k" is 500; it must be a whole number from 1 to 100. <nil>
}
