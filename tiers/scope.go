package tiers

import (
	"context"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
)

// The step memory types take their scope from the *backend.Store they are
// built from, the one place scope is enforced: none of them holds a
// posture of its own. These are the checks they share, so switching an
// agent between types never changes which calls succeed.

// readScope is what Recall (and any other read) checks first: a live
// context, then the filter the store derives for id at level.
func readScope(ctx context.Context, store *backend.Store, id memory.Identity, level memory.Level) (memory.Filter, error) {
	if err := ctx.Err(); err != nil {
		return memory.Filter{}, err
	}
	return store.Filter(id, level)
}

// saveScope is what Save (and any other write) checks before anything is
// kept: a live context, a valid step, the store's write check for id, and
// the filter the store derives for id at level — the scope the write is
// pruned and read back in.
func saveScope(ctx context.Context, store *backend.Store, id memory.Identity, level memory.Level, step Step) (memory.Filter, error) {
	if err := ctx.Err(); err != nil {
		return memory.Filter{}, err
	}
	if err := step.Validate(); err != nil {
		return memory.Filter{}, err
	}
	return writeScope(store, id, level)
}

// writeScope is the store's write check for id followed by the filter it
// derives for id at level.
func writeScope(store *backend.Store, id memory.Identity, level memory.Level) (memory.Filter, error) {
	if err := store.CheckWrite(id); err != nil {
		return memory.Filter{}, err
	}
	return store.Filter(id, level)
}

// needStore is the error of a constructor given no store.
func needStore(what string) error {
	return memory.Errorf(memory.ErrInvalidArgument, "%s memory needs a *backend.Store: its posture, token counter and clock; "+
		"memory that keeps nothing in it can use one over the in-memory driver, backend.NewStore(inmem.New(inmem.Options{}), opts)", what)
}
