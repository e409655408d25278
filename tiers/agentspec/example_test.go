package agentspec_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/tiers"
	"github.com/agentmem/memory/tiers/agentspec"
)

// An executor builds the memory spec.memory describes. Every type takes a
// store, the one source of posture: a program whose agents have only
// buffer (or none, or vector) memory passes one over the in-memory
// driver, and every type refuses the same calls under its posture.
func ExampleNewMemory() {
	ctx := context.Background()
	store := backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{Posture: memory.Posture{RequirePrincipal: true}})
	defer store.Close()

	spec, err := agentspec.Parse([]byte("type: buffer\n"))
	if err != nil {
		log.Fatal(err)
	}
	mem, err := agentspec.NewMemory(ctx, store, spec, agentspec.Environment{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%T\n", mem)

	step := tiers.Step{Workflow: "weekly", Name: "report", Input: "Write the report.", Output: "Done."}
	noUser := memory.Identity{Agent: "kaos://agent/ai-agents/reporter", Session: "run-1"}
	fmt.Println(errors.Is(mem.Save(ctx, noUser, step), memory.ErrIncompleteScope))
	withUser := noUser
	withUser.User = "alice"
	fmt.Println(mem.Save(ctx, withUser, step))
	// Output:
	// *tiers.Buffer
	// true
	// <nil>
}

// The memory block of a whole Agent manifest; the rest of the manifest is
// the controller's business and is not checked here.
func ExampleParseManifest() {
	spec, err := agentspec.ParseManifest([]byte(`apiVersion: purko.io/v1alpha1
kind: Agent
metadata:
  name: anomaly-monitor
spec:
  role: anomaly-monitor
  memory:
    type: summary
    maxEntries: 10        # keep the last 10 summaries
    ttl: 7d               # discard entries older than 7 days
`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(spec.MemoryType(), spec.MaxEntries, spec.TTLDuration())
	// Output: summary 10 168h0m0s
}

// A spec.memory block is checked field by field: a typo or a bad value is
// refused with the field's name and what it accepts.
func ExampleParse() {
	_, err := agentspec.Parse([]byte("type: vectors\n"))
	fmt.Println(err)
	_, err = agentspec.Parse([]byte("type: summary\nmaxEntry: 10\n"))
	fmt.Println(errors.Is(err, memory.ErrInvalidArgument))
	// Output:
	// memory: invalid argument: spec.memory.type: "vectors" is not a memory type; use one of buffer, summary, vector, none
	// true
}

// The executor's environment: MEMORY_TYPE set by the workflow controller
// must agree with spec.memory.type.
func ExampleEnvironmentFromOS() {
	store := backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{})
	defer store.Close()
	env := agentspec.EnvironmentFromOS()
	env.MemoryType = "summary" // as the controller sets MEMORY_TYPE
	_, err := agentspec.NewMemory(context.Background(), store, agentspec.Spec{Type: agentspec.TypeVector}, env)
	fmt.Println(err)
	// Output: memory: invalid argument: MEMORY_TYPE="summary" disagrees with spec.memory.type "vector"
}
