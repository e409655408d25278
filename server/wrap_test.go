package server_test

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/backend/sqlite"
	"github.com/agentmem/memory/contract"
	"github.com/agentmem/memory/server"
	"github.com/agentmem/memory/tiers/tiered"
)

// counted is a tiered.Interface counting the appends it passes on.
type counted struct {
	tiered.Interface
	appends atomic.Int64
}

func (c *counted) Append(ctx context.Context, id memory.Identity, turns ...tiered.Turn) (tiered.Appended, error) {
	c.appends.Add(1)
	return c.Interface.Append(ctx, id, turns...)
}

// TestWrap checks that Options.Wrap's result answers the requests, and
// that a Wrap returning nil is refused.
func TestWrap(t *testing.T) {
	mem := newMemory(t, inmem.New(inmem.Options{}), memory.Posture{})
	var c *counted
	_, hs := serve(t, mem, server.Options{Wrap: func(m tiered.Interface) tiered.Interface {
		c = &counted{Interface: m}
		return c
	}})
	r := do(t, hs.URL, call{path: contract.PathWrite, token: token(t, aliceClaims),
		headers: map[string]string{contract.HeaderSession: "s1"},
		body:    contract.WriteRequest{Turns: []contract.Turn{{Role: memory.RoleUser, Content: "hello"}}}})
	if r.status != http.StatusOK || c.appends.Load() != 1 {
		t.Fatalf("write through the wrapper: %d %s, %d appends counted", r.status, r.body, c.appends.Load())
	}
	if _, err := server.New(mem, server.Options{Authenticator: bearer(t, server.BearerOptions{}),
		Wrap: func(tiered.Interface) tiered.Interface { return nil }}); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Fatalf("a Wrap returning nil: %v, want ErrInvalidArgument", err)
	}
}

// TestWriteKeyAcrossReplicas sends one write under one Idempotency-Key to
// two servers on one SQLite file, as a client's retry may reach another
// replica: the second finds the turns stored and stores nothing.
func TestWriteKeyAcrossReplicas(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	var bases []string
	for range 2 {
		d, err := sqlite.Open(path, sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, hs := serve(t, newMemory(t, d, memory.Posture{}), server.Options{})
		bases = append(bases, hs.URL)
	}
	tok := token(t, aliceClaims)
	headers := map[string]string{contract.HeaderSession: "s1", contract.HeaderIdempotencyKey: "write-1"}
	req := contract.WriteRequest{Turns: []contract.Turn{{Role: memory.RoleUser, Content: "one"}, {Role: memory.RoleAssistant, Content: "two"}, {Role: memory.RoleUser, Content: "three"}}}
	for i, base := range bases {
		got := decodeAs[contract.WriteResponse](t, do(t, base, call{path: contract.PathWrite, token: tok, headers: headers, body: req}), http.StatusOK)
		if got.Turns != 3 || got.Replayed != (i == 1) {
			t.Fatalf("server %d: %+v, want 3 turns, replayed %v", i, got, i == 1)
		}
	}
	l := decodeAs[contract.ListResponse](t, do(t, bases[1], call{path: contract.PathList, token: tok, headers: map[string]string{contract.HeaderSession: "s1"}, body: contract.ListRequest{}}), http.StatusOK)
	var said []string
	for _, r := range l.Turns {
		said = append(said, r.Content)
	}
	if strings.Join(said, ",") != "one,two,three" {
		t.Fatalf("the session holds %q, want the three turns once, in order", said)
	}
}
