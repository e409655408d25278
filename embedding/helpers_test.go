package embedding_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/backend/sqlite"
	"github.com/agentmem/memory/embedding/embeddingtest"
)

const dims = 32

var (
	alice = memory.Identity{Tenant: "t1", User: "alice", Agent: "agent", Session: "s1"}
	bob   = memory.Identity{Tenant: "t2", User: "bob", Agent: "agent", Session: "s9"}
	t0    = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
)

type byteTokens struct{}

func (byteTokens) CountTokens(_ context.Context, s string) (int, error) { return len(s), nil }

// drivers runs f on a fresh store of each driver with vectors and a work
// queue: in-memory and SQLite (a temp file).
func drivers(t *testing.T, f func(t *testing.T, s *backend.Store)) {
	t.Helper()
	t.Run("inmem", func(t *testing.T) {
		s := backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{Tokens: byteTokens{}})
		t.Cleanup(func() { s.Close() })
		f(t, s)
	})
	t.Run("sqlite", func(t *testing.T) {
		d, err := sqlite.Open(filepath.Join(t.TempDir(), "m.db"), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		s := backend.NewStore(d, backend.StoreOptions{Tokens: byteTokens{}})
		t.Cleanup(func() { s.Close() })
		f(t, s)
	})
}

// fake is a memory.Embedder over the deterministic embedder that records
// its batches and can fail, block or run a hook inside a call.
type fake struct {
	name string
	e    embeddingtest.Embedder

	mu      sync.Mutex
	batches [][]string
	fails   int                       // calls to fail before succeeding; negative: all
	err     error                     // what a failing call returns
	hook    func(ctx context.Context) // run inside each call, before it returns
	mangle  func([][]float32) [][]float32
}

func newFake(name string) *fake {
	return &fake{name: name, e: embeddingtest.Embedder{Dims: dims}, err: fmt.Errorf("provider: 503 overloaded")}
}

func (f *fake) Model() string { return f.name }

func (f *fake) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	f.mu.Lock()
	f.batches = append(f.batches, slices.Clone(texts))
	fail := f.fails != 0
	if f.fails > 0 {
		f.fails--
	}
	hook, mangle := f.hook, f.mangle
	f.mu.Unlock()
	if hook != nil {
		hook(ctx)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if fail {
		return nil, f.err
	}
	v, err := f.e.Embed(ctx, texts)
	if mangle != nil {
		v = mangle(v)
	}
	return v, err
}

func (f *fake) set(fn func(f *fake)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func (f *fake) sizes() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	var n []int
	for _, b := range f.batches {
		n = append(n, len(b))
	}
	return n
}

func (f *fake) texts() int {
	n := 0
	for _, s := range f.sizes() {
		n += s
	}
	return n
}

// reversed is another model of the same dimension: the deterministic
// vectors, reversed.
func reversed(v [][]float32) [][]float32 {
	for _, x := range v {
		slices.Reverse(x)
	}
	return v
}

func vec(text string) []float32 { return embeddingtest.Vector(text, dims) }

// addTurns stores n turns of who with distinct contents and returns them.
func addTurns(t *testing.T, s *backend.Store, who memory.Identity, n int) []memory.Record {
	t.Helper()
	var recs []memory.Record
	for i := range n {
		recs = append(recs, memory.NewTurn(who, memory.RoleUser, fmt.Sprintf("turn %d about topic%d", i, i), t0.Add(time.Duration(i)*time.Second)))
	}
	if err := s.Add(context.Background(), who, recs...); err != nil {
		t.Fatal(err)
	}
	return recs
}

func list(t *testing.T, s *backend.Store, who memory.Identity) []memory.Record {
	t.Helper()
	recs, err := s.List(context.Background(), who, memory.Query{Level: memory.LevelSession})
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// eventually polls cond for up to 10 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func allEmbedded(t *testing.T, s *backend.Store, who memory.Identity) func() bool {
	return func() bool {
		for _, r := range list(t, s, who) {
			if r.Vector == nil {
				return false
			}
		}
		return true
	}
}

// checkVectors fails unless every record of who has the vector of its
// current content under model f (mangled as f mangles).
func checkVectors(t *testing.T, s *backend.Store, who memory.Identity, mangle func([][]float32) [][]float32) {
	t.Helper()
	for _, r := range list(t, s, who) {
		want := [][]float32{vec(r.Content)}
		if mangle != nil {
			want = mangle(want)
		}
		if !slices.Equal(r.Vector, want[0]) {
			t.Errorf("record %s (%q) has vector %v…, not its content's", r.ID, r.Content, head(r.Vector))
		}
	}
}

func head(v []float32) []float32 { return v[:min(3, len(v))] }

// noClaims hides the driver's work queue; noSwap its compare-and-swap.
type noClaims struct {
	driver.Driver
	driver.Swapper
}

type noSwap struct{ driver.Driver }
