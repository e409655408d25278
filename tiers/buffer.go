package tiers

import (
	"context"
	"slices"
	"sync"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
)

// BufferOptions configure a Buffer. The zero value is the documented
// default.
type BufferOptions struct {
	// MaxTurns caps the turns held for one step; when a step exceeds it the
	// oldest turn is dropped. Zero means no cap; negative is invalid.
	MaxTurns int
}

// Buffer is the "buffer" memory type, the document's default: in-memory and
// per invocation. Each step starts with an empty context window, the turns
// of the step are held in the process while it runs, and ending the step
// discards them. Nothing is saved after the step completes, and nothing
// survives the process. That is the type's defined behaviour, not a
// limitation: use Summary to carry context across steps.
//
// A Buffer keeps nothing in its *backend.Store: the store is its source of
// posture, token counter and clock, so a Buffer refuses exactly the calls
// the other types built from the same store refuse. Every call needs the
// caller's agent-level scope as the store derives it (tenant and agent,
// plus the user when the caller has one or the posture requires it), and
// Add and Save also pass the store's write check. A program with only
// buffer memory can give it a store over the in-memory driver:
//
//	store := backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{Posture: posture})
//	buf, err := tiers.NewBuffer(store, tiers.BufferOptions{})
//
// Turns are kept per Identity (every field, session included), so one
// Buffer can serve many sessions, users and agents without mixing them.
// One Identity runs one step at a time; concurrent steps of the same run
// need distinct identities (a distinct Session, say) or distinct Buffers.
// A step that never calls Save keeps its turns until Save or Forget.
//
// A Buffer is safe for concurrent use.
type Buffer struct {
	store    *backend.Store
	maxTurns int

	mu    sync.Mutex
	turns map[memory.Identity][]memory.Record // oldest first
}

// NewBuffer returns an empty Buffer whose scope, token counts and clock
// come from store. It fails with memory.ErrInvalidArgument for a nil store
// or an option out of range.
func NewBuffer(store *backend.Store, opt BufferOptions) (*Buffer, error) {
	switch {
	case store == nil:
		return nil, needStore("buffer")
	case opt.MaxTurns < 0:
		return nil, memory.Errorf(memory.ErrInvalidArgument, "buffer MaxTurns is %d; it cannot be negative", opt.MaxTurns)
	}
	return &Buffer{
		store:    store,
		maxTurns: opt.MaxTurns,
		turns:    map[memory.Identity][]memory.Record{},
	}, nil
}

// Add appends a turn spoken by role to id's current step. The turn is a
// memory.KindTurn record attributed to id, stamped with the store's clock,
// with its token count (the store's counter) cached. id must pass the
// store's write check and hold the agent-level scope. role must be one of
// the memory.Role constants. Content must be valid UTF-8 without NUL bytes
// and at most memory.MaxContentBytes bytes.
func (b *Buffer) Add(ctx context.Context, id memory.Identity, role memory.Role, content string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if _, err := writeScope(b.store, id, memory.LevelAgent); err != nil {
		return err
	}
	switch role {
	case memory.RoleUser, memory.RoleAssistant, memory.RoleSystem, memory.RoleTool:
	default:
		return memory.Errorf(memory.ErrInvalidArgument, "unknown turn role %q", string(role))
	}
	rec := memory.NewTurn(id, role, content, b.store.Now())
	if err := rec.Validate(); err != nil {
		return err
	}
	n, err := b.store.Tokens().CountTokens(ctx, content)
	if err != nil {
		return err
	}
	rec.Tokens = n
	b.mu.Lock()
	defer b.mu.Unlock()
	turns := append(b.turns[id], rec)
	if b.maxTurns > 0 && len(turns) > b.maxTurns {
		turns = slices.Delete(turns, 0, len(turns)-b.maxTurns)
	}
	b.turns[id] = turns
	return nil
}

// Window returns the newest turns of id's current step whose cached token
// counts together fit in maxTokens, oldest first. It stops at the first
// turn that does not fit, so the window is always an unbroken run of the
// latest turns; a newest turn larger than the budget gives an empty window.
// Zero maxTokens means no budget: every turn of the step. A negative budget
// is memory.ErrInvalidArgument. id must hold the agent-level scope, as for
// Recall.
func (b *Buffer) Window(id memory.Identity, maxTokens int) ([]memory.Record, error) {
	if maxTokens < 0 {
		return nil, memory.Errorf(memory.ErrInvalidArgument, "window budget is %d tokens; it cannot be negative", maxTokens)
	}
	if _, err := b.store.Filter(id, memory.LevelAgent); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	turns := b.turns[id]
	start := len(turns)
	if maxTokens == 0 {
		start = 0
	} else {
		used := 0
		for start > 0 && used+turns[start-1].Tokens <= maxTokens {
			used += turns[start-1].Tokens
			start--
		}
	}
	if start == len(turns) {
		return nil, nil
	}
	return slices.Clone(turns[start:]), nil
}

// Recall starts a step: it returns an empty Recollection (no Records, no
// Text, Tokens 0, Degraded nil), because a buffer step always begins with
// an empty context window; about is ignored. It does not touch the turns
// held for id. A level whose fields id lacks is memory.ErrIncompleteScope,
// as it is for the other types.
func (b *Buffer) Recall(ctx context.Context, id memory.Identity, about string) (memory.Recollection, error) {
	if _, err := readScope(ctx, b.store, id, memory.LevelAgent); err != nil {
		return memory.Recollection{}, err
	}
	return memory.Recollection{}, nil
}

// Save ends id's current step: after the checks every type's Save makes
// (a valid Step, the store's write check, the agent-level scope) it
// discards every turn held for id and stores nothing.
func (b *Buffer) Save(ctx context.Context, id memory.Identity, step Step) error {
	if _, err := saveScope(ctx, b.store, id, memory.LevelAgent, step); err != nil {
		return err
	}
	b.mu.Lock()
	delete(b.turns, id)
	b.mu.Unlock()
	return nil
}

// Forget discards the turns of every identity visible to id at level, as
// the store derives the level's filter, and reports how many turns it
// removed. A level whose fields id lacks is memory.ErrIncompleteScope.
func (b *Buffer) Forget(ctx context.Context, id memory.Identity, level memory.Level) (int64, error) {
	f, err := readScope(ctx, b.store, id, level)
	if err != nil {
		return 0, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	var n int64
	for who, turns := range b.turns {
		if f.Matches(who) {
			n += int64(len(turns))
			delete(b.turns, who)
		}
	}
	return n, nil
}
