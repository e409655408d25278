package tiers

import (
	"context"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
)

// None is the "none" memory type: explicitly stateless. Recall always
// returns nothing and Save stores nothing. It behaves like Buffer with no
// turns, but says in the configuration that the agent is designed to be
// stateless. It is safe for concurrent use.
//
// A None built by NewNone (as agentspec.NewMemory builds it) still makes the
// checks every type makes, through its store: a live context, the caller's
// agent-level scope and, in Save, a valid Step and the store's write check. So
// switching an agent between types never changes which calls succeed (Summary
// at its default level). The zero value has no store: it checks only that the
// context is live, the identity well formed and the Step valid.
type None struct {
	store *backend.Store
}

// NewNone returns a None that checks its calls against store's posture. A
// nil store is memory.ErrInvalidArgument.
func NewNone(store *backend.Store) (None, error) {
	if store == nil {
		return None{}, needStore("none")
	}
	return None{store: store}, nil
}

// Recall returns an empty Recollection (no Records, no Text, Tokens 0,
// Degraded nil); about is ignored.
func (n None) Recall(ctx context.Context, id memory.Identity, about string) (memory.Recollection, error) {
	if err := n.check(ctx, id, nil); err != nil {
		return memory.Recollection{}, err
	}
	return memory.Recollection{}, nil
}

// Save checks its arguments and stores nothing.
func (n None) Save(ctx context.Context, id memory.Identity, step Step) error {
	return n.check(ctx, id, &step)
}

// check makes the checks of Recall (step nil) or Save.
func (n None) check(ctx context.Context, id memory.Identity, step *Step) error {
	var err error
	switch {
	case n.store == nil:
		if err = ctx.Err(); err == nil {
			err = id.Validate()
		}
		if err == nil && step != nil {
			err = step.Validate()
		}
	case step == nil:
		_, err = readScope(ctx, n.store, id, memory.LevelAgent)
	default:
		_, err = saveScope(ctx, n.store, id, memory.LevelAgent, *step)
	}
	return err
}
