package tiers_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/tiers"
)

func TestFromSpec(t *testing.T) {
	ctx := context.Background()
	store := backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{})
	who := memory.Identity{Tenant: "acme", Agent: "kaos://agent/ai-agents/monitor", Session: "run-1"}

	for _, c := range []struct {
		spec string
		env  tiers.Environment
		want string // the Go type built
	}{
		{`{}`, tiers.Environment{}, "*tiers.Buffer"},
		{`{"type": "none"}`, tiers.Environment{}, "tiers.None"},
		{`{"type": "summary", "maxEntries": 2}`, tiers.Environment{}, "*tiers.Summary"},
		{`{}`, tiers.Environment{MemoryType: "summary"}, "*tiers.Summary"},
		{`{"type": "summary"}`, tiers.Environment{MemoryType: "summary"}, "*tiers.Summary"},
		{`{"type": "vector", "maxContextTokens": 8000}`, tiers.Environment{MountPath: t.TempDir()}, "*tiers.Vector"},
	} {
		spec, err := tiers.ParseSpec([]byte(c.spec))
		if err != nil {
			t.Fatal(err)
		}
		mem, err := tiers.FromSpec(ctx, store, spec, c.env)
		if err != nil {
			t.Fatalf("FromSpec(%s, %+v): %v", c.spec, c.env, err)
		}
		if got := fmt.Sprintf("%T", mem); got != c.want {
			t.Errorf("FromSpec(%s, %+v) built %s, want %s", c.spec, c.env, got, c.want)
		}
		if v, ok := mem.(*tiers.Vector); ok {
			if v.Dir() != c.env.MountPath {
				t.Errorf("vector memory lives in %s, want the mount path %s", v.Dir(), c.env.MountPath)
			}
			_ = v.Close()
		}
	}

	// maxEntries carries over: of three saved summaries two are recalled.
	spec, _ := tiers.ParseSpec([]byte(`{"type": "summary", "maxEntries": 2, "ttl": "7d"}`))
	mem, err := tiers.FromSpec(ctx, backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{}), spec, tiers.Environment{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := mem.Save(ctx, who, tiers.Step{Workflow: "wf", Name: fmt.Sprintf("s%d", i), Input: "in", Output: "out"}); err != nil {
			t.Fatal(err)
		}
	}
	rec, err := mem.Recall(ctx, who)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(rec.Text, "[wf/"); n != 2 {
		t.Errorf("recalled %d summaries, want maxEntries = 2:\n%s", n, rec.Text)
	}

	// The environment contract's errors.
	summary, _ := tiers.ParseSpec([]byte(`{"type": "summary"}`))
	for _, c := range []struct {
		spec  tiers.Spec
		env   tiers.Environment
		store *backend.Store
		says  string
	}{
		{summary, tiers.Environment{MemoryType: "vector"}, store, "disagrees"},
		{tiers.Spec{}, tiers.Environment{MemoryType: "vectors"}, store, "MEMORY_TYPE"},
		{summary, tiers.Environment{}, nil, "summary memory needs a *backend.Store"},
		{tiers.Spec{}, tiers.Environment{}, nil, "buffer memory needs a *backend.Store"},
		{tiers.Spec{Type: "none"}, tiers.Environment{}, nil, "none memory needs a *backend.Store"},
		{tiers.Spec{Type: "vector"}, tiers.Environment{MountPath: t.TempDir()}, nil, "vector memory needs a *backend.Store"},
		{tiers.Spec{Type: "bogus"}, tiers.Environment{}, store, "spec.memory.type"},
	} {
		_, err := tiers.FromSpec(ctx, c.store, c.spec, c.env)
		if !errors.Is(err, memory.ErrInvalidArgument) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("FromSpec(%+v, %+v) = %v, want ErrInvalidArgument saying %q", c.spec, c.env, err, c.says)
		}
	}
}

func TestEnvironmentFromOS(t *testing.T) {
	t.Setenv(tiers.EnvMemoryType, "summary")
	t.Setenv(tiers.EnvAgentMemory, "[wf/s] Task: a | Result: b")
	want := tiers.Environment{MemoryType: "summary", AgentMemory: "[wf/s] Task: a | Result: b"}
	if diff := cmp.Diff(want, tiers.EnvironmentFromOS()); diff != "" {
		t.Errorf("EnvironmentFromOS (-want +got):\n%s", diff)
	}
}
