package facts

import (
	"context"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/extract"
)

// Status is what Add did with one fact.
type Status string

// The statuses of an added fact.
const (
	// Created means the fact was stored: its text was not stored before.
	Created Status = "created"
	// Existing means the same text is stored as a live fact already, in
	// the same writer identity; its record is unchanged (its sources are
	// the first add's). Added.Replaced says whether the call superseded a
	// fact by it.
	Existing Status = "existing"
	// Superseded means the same text is stored, but as a fact a newer one
	// superseded: nothing changed. Re-adding an old text never reverts the
	// newer fact; only after the superseded record is deleted is the text
	// stored anew.
	Superseded Status = "superseded"
)

// Added is the outcome of one fact of an Add.
type Added struct {
	// Record is the fact's record as stored: the one created, or the one
	// found under the fact's id.
	Record memory.Record
	// Status says which.
	Status Status
	// Replaced is the id of the fact this fact superseded in this call
	// (the fact's Supersedes), or empty when it superseded none.
	Replaced string
}

// Add stores facts written by id, one by one, in order, and reports what
// happened to each. A fact's record is attributed to id's whole identity
// and its id is memory.ContentID(memory.KindFact, id, text), as
// memory.NewFact makes it, so a text is stored once per writer identity:
// adding it again changes nothing (Existing, or Superseded when a newer
// fact superseded it). Its Sources are kept as its provenance
// (SourcesKey).
//
// A fact whose Supersedes names a live fact of id's reach (see Update:
// the agent's facts of its user, from any session) supersedes it, as
// Update does, and Added.Replaced names it. A Supersedes that names no
// such fact — none, one out of reach, one already superseded by another
// fact — is left alone,
// and the fact is stored superseding nothing (Replaced is empty): a batch
// proposed by an extractor is not refused because a fact it knew changed
// meanwhile.
//
// Every fact is checked before anything is stored: its text (extract.CheckFactText),
// its sources (record ids, each once), its Supersedes (a record id other
// than the fact's own), and the record it makes as the store checks
// records; at most memory.MaxBatch facts. Violations are
// memory.ErrInvalidArgument, or memory.ErrTooLarge for a limit, and store
// nothing. A failure while storing returns the outcomes of the facts
// stored before it with the error; that fact and those after it are not
// stored.
func (f *Facts) Add(ctx context.Context, id memory.Identity, facts ...extract.Fact) ([]Added, error) {
	if len(facts) > memory.MaxBatch {
		return nil, memory.Errorf(memory.ErrTooLarge, "facts: a batch of %d facts, the limit is %d", len(facts), memory.MaxBatch)
	}
	for i, fact := range facts {
		if err := checkFact(i, fact); err != nil {
			return nil, err
		}
	}
	if err := f.st.CheckWrite(id); err != nil {
		return nil, err
	}
	recs := make([]memory.Record, len(facts))
	for i, fact := range facts {
		r, err := f.record(ctx, id, fact.Text, fact.Sources)
		if err != nil {
			return nil, err
		}
		if fact.Supersedes == r.ID {
			return nil, memory.Errorf(memory.ErrInvalidArgument, "facts: fact %d supersedes itself (%s)", i, r.ID)
		}
		recs[i] = r
	}
	out := make([]Added, 0, len(facts))
	for i, fact := range facts {
		a, err := f.put(ctx, id, recs[i], fact.Supersedes, false)
		if err != nil {
			return out, err
		}
		out = append(out, a)
	}
	return out, nil
}
