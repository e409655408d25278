package tiered

import (
	"context"

	"github.com/agentmem/memory"
)

// Interface is the tiered memory's calls, answered alike by a Memory in
// the process and by a client of the memory service (package client), so
// that code written against it — an agent loop, the langchaingo adapters —
// runs on either unchanged.
type Interface interface {
	// Append stores turns in id's session (see Memory.Append).
	Append(ctx context.Context, id memory.Identity, turns ...Turn) (Appended, error)
	// Window returns id's short-term window (see Memory.Window).
	Window(ctx context.Context, id memory.Identity, budget int) ([]memory.Record, error)
	// RecallWith returns what id should remember before a turn about text
	// (see Memory.RecallWith).
	RecallWith(ctx context.Context, id memory.Identity, text string, opt RecallOptions) (Recollection, error)
	// Recall is memory.Recaller's shape of RecallWith (see Memory.Recall).
	Recall(ctx context.Context, id memory.Identity, about string) (memory.Recollection, error)
	// Remember stores texts as long-term facts id wrote on purpose (see
	// Memory.Remember).
	Remember(ctx context.Context, id memory.Identity, texts ...string) ([]memory.Record, error)
	// Forget erases every tier at level (see Memory.Forget).
	Forget(ctx context.Context, id memory.Identity, level memory.Level) (Erased, error)
	// List returns the session's window and digest and every fact at a
	// level (see Memory.List).
	List(ctx context.Context, id memory.Identity, opt ListOptions) (Listing, error)
}

var _ Interface = (*Memory)(nil)
