package agentspec_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/tiers"
	"github.com/agentmem/memory/tiers/agentspec"
)

func TestNewMemory(t *testing.T) {
	ctx := context.Background()
	store := backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{})
	who := memory.Identity{Tenant: "acme", Agent: "kaos://agent/ai-agents/monitor", Session: "run-1"}

	for _, c := range []struct {
		spec string
		env  agentspec.Environment
		want string // the Go type built
	}{
		{`{}`, agentspec.Environment{}, "*tiers.Buffer"},
		{`{"type": "none"}`, agentspec.Environment{}, "tiers.None"},
		{`{"type": "summary", "maxEntries": 2}`, agentspec.Environment{}, "*tiers.Summary"},
		{`{}`, agentspec.Environment{MemoryType: "summary"}, "*tiers.Summary"},
		{`{"type": "summary"}`, agentspec.Environment{MemoryType: "summary"}, "*tiers.Summary"},
		{`{"type": "vector", "maxContextTokens": 8000}`, agentspec.Environment{MountPath: t.TempDir()}, "*tiers.Vector"},
	} {
		spec, err := agentspec.Parse([]byte(c.spec))
		if err != nil {
			t.Fatal(err)
		}
		mem, err := agentspec.NewMemory(ctx, store, spec, c.env)
		if err != nil {
			t.Fatalf("NewMemory(%s, %+v): %v", c.spec, c.env, err)
		}
		if got := fmt.Sprintf("%T", mem); got != c.want {
			t.Errorf("NewMemory(%s, %+v) built %s, want %s", c.spec, c.env, got, c.want)
		}
		if v, ok := mem.(*tiers.Vector); ok {
			if v.Dir() != c.env.MountPath {
				t.Errorf("vector memory lives in %s, want the mount path %s", v.Dir(), c.env.MountPath)
			}
			_ = v.Close()
		}
	}

	// maxEntries carries over: of three saved summaries two are recalled.
	spec, _ := agentspec.Parse([]byte(`{"type": "summary", "maxEntries": 2, "ttl": "7d"}`))
	mem, err := agentspec.NewMemory(ctx, backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{}), spec, agentspec.Environment{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := mem.Save(ctx, who, tiers.Step{Workflow: "wf", Name: fmt.Sprintf("s%d", i), Input: "in", Output: "out"}); err != nil {
			t.Fatal(err)
		}
	}
	rec, err := mem.Recall(ctx, who, "")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(rec.Text, "[wf/"); n != 2 {
		t.Errorf("recalled %d summaries, want maxEntries = 2:\n%s", n, rec.Text)
	}

	// The environment contract's errors.
	summary, _ := agentspec.Parse([]byte(`{"type": "summary"}`))
	for _, c := range []struct {
		spec  agentspec.Spec
		env   agentspec.Environment
		store *backend.Store
		says  string
	}{
		{summary, agentspec.Environment{MemoryType: "vector"}, store, "disagrees"},
		{agentspec.Spec{}, agentspec.Environment{MemoryType: "vectors"}, store, "MEMORY_TYPE"},
		{summary, agentspec.Environment{}, nil, "summary memory needs a *backend.Store"},
		{agentspec.Spec{}, agentspec.Environment{}, nil, "buffer memory needs a *backend.Store"},
		{agentspec.Spec{Type: "none"}, agentspec.Environment{}, nil, "none memory needs a *backend.Store"},
		{agentspec.Spec{Type: "vector"}, agentspec.Environment{MountPath: t.TempDir()}, nil, "vector memory needs a *backend.Store"},
		{agentspec.Spec{Type: "bogus"}, agentspec.Environment{}, store, "spec.memory.type"},
	} {
		mem, err := agentspec.NewMemory(ctx, c.store, c.spec, c.env)
		if !errors.Is(err, memory.ErrInvalidArgument) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("NewMemory(%+v, %+v) = %v, want ErrInvalidArgument saying %q", c.spec, c.env, err, c.says)
		}
		if mem != nil {
			t.Errorf("NewMemory(%+v, %+v) failed but returned memory %#v, want nil", c.spec, c.env, mem)
		}
	}

	// A constructor's own failure leaves no typed nil in the interface:
	// the mount path is a file, so the vector directory cannot be made.
	file := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	mem, err = agentspec.NewMemory(ctx, store, agentspec.Spec{Type: "vector"}, agentspec.Environment{MountPath: filepath.Join(file, "memory")})
	if err == nil || mem != nil {
		t.Errorf("NewMemory of vector memory under a file = %#v, %v; want nil and an error", mem, err)
	}
}

func TestEnvironmentFromOS(t *testing.T) {
	t.Setenv(agentspec.EnvMemoryType, "summary")
	t.Setenv(agentspec.EnvAgentMemory, "[wf/s] Task: a | Result: b")
	want := agentspec.Environment{MemoryType: "summary", AgentMemory: "[wf/s] Task: a | Result: b"}
	if diff := cmp.Diff(want, agentspec.EnvironmentFromOS()); diff != "" {
		t.Errorf("EnvironmentFromOS (-want +got):\n%s", diff)
	}
}
