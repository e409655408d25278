package tiered

import (
	"context"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/extract"
)

// Remember stores texts as long-term facts written by id — what an agent
// saves on purpose (the service document's save_memory), beside the facts
// folds extract — with id's compound attribution and no level, and returns
// their records as stored: a text id already wrote is stored once, and its
// existing record is returned (see facts.Facts.Add). Each text must be a
// fact's text (extract.CheckFactText), at most memory.MaxBatch of them;
// otherwise nothing is stored and the error is memory.ErrInvalidArgument or
// memory.ErrTooLarge. Under FailureMode Soft a failure of the store is
// logged and the records stored before it are returned without an error.
func (m *Memory) Remember(ctx context.Context, id memory.Identity, texts ...string) ([]memory.Record, error) {
	if err := m.enter(ctx); err != nil {
		return nil, err
	}
	defer m.leave()
	if len(texts) > memory.MaxBatch {
		return nil, memory.Errorf(memory.ErrTooLarge, "tiered: %d facts, the limit is %d", len(texts), memory.MaxBatch)
	}
	fs := make([]extract.Fact, len(texts))
	for i, t := range texts {
		fs[i] = extract.Fact{Text: t}
	}
	added, err := m.facts.Add(ctx, id, fs...)
	out := make([]memory.Record, len(added))
	for i, a := range added {
		out[i] = a.Record
	}
	return out, m.soft(err, "remember facts")
}
