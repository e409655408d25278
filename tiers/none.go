package tiers

import (
	"context"

	"github.com/agentmem/memory"
)

// None is the "none" memory type: explicitly stateless. Recall always
// returns nothing and Save stores nothing. It behaves like Buffer with no
// turns, but says in the configuration that the agent is designed to be
// stateless. The zero value is ready to use and safe for concurrent use.
//
// None still checks its arguments as the other types do (a live context, a
// well-formed identity, a valid Step), so switching an agent between types
// never changes which calls succeed.
type None struct{}

// Recall returns an empty Recollection.
func (None) Recall(ctx context.Context, id memory.Identity) (memory.Recollection, error) {
	if err := checkCall(ctx, id); err != nil {
		return memory.Recollection{}, err
	}
	return memory.Recollection{}, nil
}

// Save checks its arguments and stores nothing.
func (None) Save(ctx context.Context, id memory.Identity, step Step) error {
	if err := checkCall(ctx, id); err != nil {
		return err
	}
	return step.Validate()
}
