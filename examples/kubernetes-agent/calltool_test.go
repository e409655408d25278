package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/tiers"
	"github.com/agentmem/memory/tiers/vectortool"
)

// TestCallTool checks that a call the model got wrong goes back to it as
// the result, and that a real failure ends the step.
func TestCallTool(t *testing.T) {
	ctx := context.Background()
	store := backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{})
	defer store.Close()
	v, err := tiers.NewVector(ctx, store, tiers.VectorOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	search, err := vectortool.New(v, memory.Identity{Agent: "kaos://agent/ai-agents/knowledge-retriever", Session: "run-1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, args, says string }{
		{"list_resources", `{}`, `there is no tool "list_resources"`},
		{vectortool.Name, `{"query": "latency", "k": 500}`, vectortool.MistakePrefix},
		{vectortool.Name, `{"query": "latency"}`, `No memory entries match "latency"`},
	} {
		out, err := callTool(ctx, search, tc.name, tc.args)
		if err != nil || !strings.Contains(out, tc.says) {
			t.Errorf("callTool(%s, %s) = %q, %v; want a result saying %q", tc.name, tc.args, out, err, tc.says)
		}
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	if out, err := callTool(ctx, search, vectortool.Name, `{"query": "latency"}`); !errors.Is(err, memory.ErrClosed) {
		t.Errorf("callTool on closed memory = %q, %v; want ErrClosed", out, err)
	}
}
