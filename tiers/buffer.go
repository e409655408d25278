package tiers

import (
	"context"
	"slices"
	"sync"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/internal/tokens"
)

// BufferOptions configure a Buffer. The zero value is the documented
// default.
type BufferOptions struct {
	// Tokens counts each turn's tokens once, when it is added; nil means
	// exact cl100k_base counts.
	Tokens memory.TokenCounter
	// Clock stamps turns; nil means time.Now.
	Clock backend.Clock
	// Posture is the identity requirements Add and Forget enforce, as a
	// backend.Store does; the zero value requires only a well-formed
	// identity with at least one field besides tenant.
	Posture memory.Posture
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
// Turns are kept per Identity (every field, session included), so one
// Buffer can serve many sessions, users and agents without mixing them.
// One Identity runs one step at a time; concurrent steps of the same run
// need distinct identities (a distinct Session, say) or distinct Buffers.
// A step that never calls Save keeps its turns until Save or Forget.
//
// A Buffer is safe for concurrent use.
type Buffer struct {
	tokens   memory.TokenCounter
	clock    backend.Clock
	posture  memory.Posture
	maxTurns int

	mu    sync.Mutex
	turns map[memory.Identity][]memory.Record // oldest first
}

// NewBuffer returns an empty Buffer. It fails with memory.ErrInvalidArgument
// when an option is out of range.
func NewBuffer(opt BufferOptions) (*Buffer, error) {
	if opt.MaxTurns < 0 {
		return nil, memory.Errorf(memory.ErrInvalidArgument, "buffer MaxTurns is %d; it cannot be negative", opt.MaxTurns)
	}
	if opt.Tokens == nil {
		opt.Tokens = tokens.Counter{}
	}
	return &Buffer{
		tokens:   opt.Tokens,
		clock:    opt.Clock,
		posture:  opt.Posture,
		maxTurns: opt.MaxTurns,
		turns:    map[memory.Identity][]memory.Record{},
	}, nil
}

// Add appends a turn spoken by role to id's current step. The turn is a
// memory.KindTurn record attributed to id, with its token count cached.
// role must be one of the memory.Role constants. Content must be valid
// UTF-8 without NUL bytes and at most memory.MaxContentBytes bytes.
func (b *Buffer) Add(ctx context.Context, id memory.Identity, role memory.Role, content string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := b.posture.CheckWrite(id); err != nil {
		return err
	}
	switch role {
	case memory.RoleUser, memory.RoleAssistant, memory.RoleSystem, memory.RoleTool:
	default:
		return memory.Errorf(memory.ErrInvalidArgument, "unknown turn role %q", string(role))
	}
	rec := memory.NewTurn(id, role, content, b.clock.Now())
	if err := rec.Validate(); err != nil {
		return err
	}
	n, err := b.tokens.CountTokens(ctx, content)
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
// is memory.ErrInvalidArgument.
func (b *Buffer) Window(id memory.Identity, maxTokens int) ([]memory.Record, error) {
	if maxTokens < 0 {
		return nil, memory.Errorf(memory.ErrInvalidArgument, "window budget is %d tokens; it cannot be negative", maxTokens)
	}
	if err := id.Validate(); err != nil {
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

// Recall starts a step: it returns an empty Recollection, because a buffer
// step always begins with an empty context window. It does not touch the
// turns held for id.
func (b *Buffer) Recall(ctx context.Context, id memory.Identity) (memory.Recollection, error) {
	if err := checkCall(ctx, id); err != nil {
		return memory.Recollection{}, err
	}
	return memory.Recollection{}, nil
}

// Save ends id's current step: after checking its arguments it discards
// every turn held for id and stores nothing.
func (b *Buffer) Save(ctx context.Context, id memory.Identity, step Step) error {
	if err := checkCall(ctx, id); err != nil {
		return err
	}
	if err := step.Validate(); err != nil {
		return err
	}
	b.mu.Lock()
	delete(b.turns, id)
	b.mu.Unlock()
	return nil
}

// Forget discards the turns of every identity visible to id at level, as a
// Store would derive it under the Buffer's posture, and reports how many
// turns it removed. A level whose fields id lacks is
// memory.ErrIncompleteScope.
func (b *Buffer) Forget(ctx context.Context, id memory.Identity, level memory.Level) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	f, err := b.posture.Filter(id, level)
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
