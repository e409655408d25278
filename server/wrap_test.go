package server_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/inmem"
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
