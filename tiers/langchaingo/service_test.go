package langchaingo_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/chains"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/client"
	"github.com/agentmem/memory/internal/servicetest"
	"github.com/agentmem/memory/server"
	"github.com/agentmem/memory/tiers/langchaingo"
)

// TestChainOverService runs the adapters on the memory service's client
// instead of a Memory in the process: a fact saved through the service in
// one session reaches the prompt of a conversation chain in the next, and
// the chain's exchange is stored in the service's window.
func TestChainOverService(t *testing.T) {
	local := newTiered(t, "inmem")
	_, hs := servicetest.Serve(t, local, server.Options{Authenticator: server.TrustedHeaders{}})
	cl, err := client.New(hs.URL, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	save, err := langchaingo.NewSaveTool(cl, s1)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := save.Call(ctx, "Alice's cat is called Miso"); err != nil || !strings.Contains(out, "Saved") {
		t.Fatalf("save_memory through the service: %q, %v", out, err)
	}
	mem, err := langchaingo.NewMemory(cl, s2, langchaingo.MemoryOptions{Level: memory.LevelAgent})
	if err != nil {
		t.Fatal(err)
	}
	llm := newModel("Your cat is Miso.")
	if _, err := chains.Run(ctx, chains.NewConversation(llm, mem), "What is my cat called?"); err != nil {
		t.Fatal(err)
	}
	if p := llm.last(t); !strings.Contains(p, "Alice's cat is called Miso") {
		t.Errorf("the chain's prompt lacks the fact saved through the service:\n%s", p)
	}
	want := []string{"user: What is my cat called?", "assistant: Your cat is Miso."}
	if got := window(t, local, s2); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("the service's window of session 2 = %q, want %q", got, want)
	}
}
