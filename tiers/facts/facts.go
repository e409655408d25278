package facts

import (
	"context"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/recall"
)

// Options configure Facts. The zero value is the documented default.
type Options struct {
	// Recall is how Search ranks (package recall); the zero value is its
	// defaults: lexical, or hybrid with an Embedder.
	Recall recall.Options
}

// Facts is the long-term fact tier over a backend.Store: facts stored as
// records of kind memory.KindFact, deduplicated within their writer's
// identity, superseded rather than overwritten. It is safe for concurrent
// use.
type Facts struct {
	st *backend.Store
	rc *recall.Recaller
}

// New returns the fact tier over st. The store's driver must have text
// search (for Search) and compare-and-swap (driver.Swapper: facts are
// created and superseded conditionally); without either New fails with
// memory.ErrUnimplemented. Options out of range are
// memory.ErrInvalidArgument.
func New(st *backend.Store, opt Options) (*Facts, error) {
	if st == nil {
		return nil, memory.Errorf(memory.ErrInvalidArgument, "facts: the store is nil")
	}
	if _, ok := st.Driver().(driver.Swapper); !ok {
		return nil, memory.Errorf(memory.ErrUnimplemented, "facts: the %T driver has no compare-and-swap (driver.Swapper), which creating and superseding facts needs", st.Driver())
	}
	rc, err := recall.New(st, opt.Recall)
	if err != nil {
		return nil, err
	}
	return &Facts{st: st, rc: rc}, nil
}

// factKinds are the kinds of fact records, live and superseded.
var factKinds = []memory.Kind{memory.KindFact, memory.KindSuperseded}

// liveKinds are the kinds recalled by relevance.
var liveKinds = []memory.Kind{memory.KindFact}

// Get returns the fact record factID that id may read at level, live
// (memory.KindFact) or superseded (memory.KindSuperseded). A record that
// does not exist, is not a fact or is not visible at level is
// memory.ErrNotFound; the level's checks are backend.Store's
// (memory.ErrIncompleteScope for a field the level needs, and so on).
func (f *Facts) Get(ctx context.Context, id memory.Identity, level memory.Level, factID string) (memory.Record, error) {
	if err := checkID("Get", factID); err != nil {
		return memory.Record{}, err
	}
	dq, err := f.st.Query(id, memory.Query{Level: level, Kinds: factKinds})
	if err != nil {
		return memory.Record{}, err
	}
	r, ok, err := f.one(ctx, dq, factID)
	if err != nil {
		return memory.Record{}, err
	}
	if !ok {
		return memory.Record{}, memory.Errorf(memory.ErrNotFound, "facts: no fact %s visible at level %s", factID, level)
	}
	return r, nil
}

// Search returns the k live facts id may read at level most relevant to
// text, best first, as package recall ranks them (Options.Recall).
// Superseded facts are never among them: the kind is filtered inside the
// driver's search.
func (f *Facts) Search(ctx context.Context, id memory.Identity, level memory.Level, text string, k int) (recall.Results, error) {
	return f.rc.Recall(ctx, id, memory.Query{Level: level, Kinds: liveKinds}, text, k)
}

// List returns the facts id may read at level, newest first: the live
// ones, and with includeSuperseded the superseded ones too.
func (f *Facts) List(ctx context.Context, id memory.Identity, level memory.Level, includeSuperseded bool) ([]memory.Record, error) {
	kinds := liveKinds
	if includeSuperseded {
		kinds = factKinds
	}
	return f.st.List(ctx, id, memory.Query{Level: level, Kinds: kinds})
}

// Delete removes the fact record factID, live or superseded, that id
// wrote: its record must carry exactly id's identity. A fact that does not
// exist or that another identity wrote is memory.ErrNotFound. The facts
// it superseded, or that superseded it, stay as they are: their links to
// it lead nowhere from then on (see History).
func (f *Facts) Delete(ctx context.Context, id memory.Identity, factID string) error {
	if err := checkID("Delete", factID); err != nil {
		return err
	}
	if err := f.st.CheckWrite(id); err != nil {
		return err
	}
	dq := ownQuery(id)
	dq.IDs = []string{factID}
	n, err := f.st.DeleteQuery(ctx, dq)
	if err != nil {
		return err
	}
	if n == 0 {
		return memory.Errorf(memory.ErrNotFound, "facts: no fact %s written by this identity", factID)
	}
	return nil
}

// ownQuery is the driver query of the fact records id wrote: those whose
// attribution is exactly id, the records a write by id (Store.Swap) can
// replace. Callers check id with Store.CheckWrite first.
func ownQuery(id memory.Identity) driver.Query {
	return driver.Query{Filter: memory.Filter{Match: memory.AllFields, Identity: id}, Kinds: factKinds}
}

// reach returns the driver query of the facts id may supersede: those
// of id's agent's memory of its user (memory.LevelAgent: any session of
// the same tenant, agent and user), whichever session learned them; of
// its user (memory.LevelUser) when id names no agent; its own when it
// names neither. A fact is superseded with its own attribution (the
// record keeps it), so a later session corrects what an earlier one
// learned.
func (f *Facts) reach(id memory.Identity) (driver.Query, error) {
	level := memory.LevelAgent
	switch {
	case id.Agent != "":
	case id.User != "":
		level = memory.LevelUser
	default:
		return ownQuery(id), nil
	}
	dq, err := f.st.Query(id, memory.Query{Level: level, Kinds: factKinds})
	return dq, err
}

// Reachable returns the live facts of id's reach (see Update), newest
// first, at most limit of them (0: all): the facts a new fact of id's may
// supersede, which an extract.Extractor is given as the known facts.
func (f *Facts) Reachable(ctx context.Context, id memory.Identity, limit int) ([]memory.Record, error) {
	if limit < 0 {
		return nil, memory.Errorf(memory.ErrInvalidArgument, "facts: negative limit %d", limit)
	}
	if err := f.st.CheckWrite(id); err != nil {
		return nil, err
	}
	dq, err := f.reach(id)
	if err != nil {
		return nil, err
	}
	dq.Kinds, dq.Limit = []memory.Kind{memory.KindFact}, limit
	return f.st.Driver().List(ctx, dq)
}

// own returns the fact records id wrote under ids, by id; an id without
// one is missing. Callers check id with Store.CheckWrite first.
func (f *Facts) own(ctx context.Context, id memory.Identity, ids ...string) (map[string]memory.Record, error) {
	dq := ownQuery(id)
	dq.IDs = ids
	recs, err := f.st.Driver().List(ctx, dq)
	if err != nil {
		return nil, err
	}
	out := make(map[string]memory.Record, len(recs))
	for _, r := range recs {
		out[r.ID] = r
	}
	return out, nil
}

// one returns the record dq matches under factID, if any.
func (f *Facts) one(ctx context.Context, dq driver.Query, factID string) (memory.Record, bool, error) {
	dq.IDs = []string{factID}
	recs, err := f.st.Driver().List(ctx, dq)
	if err != nil || len(recs) == 0 {
		return memory.Record{}, false, err
	}
	return recs[0], true, nil
}
