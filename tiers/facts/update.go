package facts

import (
	"context"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/extract"
)

// Update supersedes the live fact factID by a fact id writes with text,
// and returns the new fact's record. factID is a fact of id's reach: of
// id's agent's memory of its user (any session of the same tenant, agent
// and user), of its user when id names no agent, or id's own when it
// names neither; so a later session corrects what an earlier one learned. The old fact is kept, rewritten under its id as
// memory.KindSuperseded with SupersededByKey and SupersededAtKey: it is
// no longer searched, but Get, List (with superseded facts) and History
// still return it. The new fact records the old one under SupersedesKey
// and is valid from its creation. When text is already stored as a live
// fact of id's, the old fact is superseded by that one, which is returned
// unchanged.
//
// Of concurrent updates of one fact exactly one succeeds; the others fail
// with memory.ErrConflict and store nothing. A fact already superseded is
// memory.ErrConflict — unless it was superseded by this very text, when
// Update returns that fact (so calling it again after a failure completes
// the update). A fact that does not exist or is out of id's reach is
// memory.ErrNotFound. A text that is the fact's own, or that of a fact
// that was superseded (it is never made live again), is
// memory.ErrInvalidArgument, as is a text extract.CheckFactText refuses.
func (f *Facts) Update(ctx context.Context, id memory.Identity, factID, text string) (memory.Record, error) {
	if err := checkID("Update", factID); err != nil {
		return memory.Record{}, err
	}
	if err := extract.CheckFactText(text); err != nil {
		return memory.Record{}, err
	}
	if err := f.st.CheckWrite(id); err != nil {
		return memory.Record{}, err
	}
	b, err := f.record(ctx, id, text, nil)
	if err != nil {
		return memory.Record{}, err
	}
	if b.ID == factID {
		return memory.Record{}, memory.Errorf(memory.ErrInvalidArgument, "facts: the new text of fact %s is its own text", factID)
	}
	a, err := f.put(ctx, id, b, factID, true)
	if err != nil {
		return memory.Record{}, err
	}
	return a.Record, nil
}
