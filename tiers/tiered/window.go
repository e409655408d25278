package tiered

import (
	"context"
	"slices"
	"strings"

	"github.com/agentmem/memory"
)

// firstPage is how many of a session's newest turns a read of the window
// asks for first: a window within its budget after a fold holds tens.
const firstPage = 64

// boundary is the newest turn a session's digest has folded, in the
// order turns were said: by creation time, then id. The zero boundary
// has folded nothing.
type boundary struct {
	created int64
	id      string
}

// folded reports whether b has folded t.
func (b boundary) folded(t memory.Record) bool {
	c := t.Created.UnixNano()
	return c < b.created || c == b.created && t.ID <= b.id
}

// of returns the boundary at t.
func boundaryOf(t memory.Record) boundary { return boundary{t.Created.UnixNano(), t.ID} }

// unfolded returns the session's turns after b, oldest first: at most
// limit of them, the newest (limit 0: all), and whether they are all.
// It reads the newest turns a page at a time, growing the page, until it
// reaches b.
func (m *Memory) unfolded(ctx context.Context, id memory.Identity, b boundary, limit int) ([]memory.Record, bool, error) {
	page := firstPage
	if limit > 0 {
		page = min(page, limit+1)
	}
	for {
		recs, err := m.st.List(ctx, id, memory.Query{Level: memory.LevelSession, Kinds: []memory.Kind{memory.KindTurn}, Limit: page})
		if err != nil {
			return nil, false, err
		}
		cut := slices.IndexFunc(recs, b.folded)
		switch {
		case cut >= 0:
			recs = recs[:cut]
		case len(recs) == page:
			if limit == 0 || page <= limit {
				page *= 4
				if limit > 0 {
					page = min(page, limit+1)
				}
				continue
			}
		}
		all := true
		if limit > 0 && len(recs) > limit {
			recs, all = recs[:limit], false
		}
		slices.Reverse(recs)
		return recs, all, nil
	}
}

// tokens returns t's token count: the one cached on it, or counted now
// for a turn written without one.
func (m *Memory) tokens(ctx context.Context, t memory.Record) (int, error) {
	if t.Tokens > 0 || t.Content == "" {
		return t.Tokens, nil
	}
	return m.st.Tokens().CountTokens(ctx, t.Content)
}

// Window returns the short-term window of id's session, oldest first: the
// newest turns not yet folded into the digest, as many as fit in budget
// tokens (0 means Options.Budget; a larger budget is cut to it) and
// Options.MaxTurns, and always at least the newest turn. A principal-bound
// read sees only the turns its attribution matches (memory.LevelSession):
// another principal's turns in a session of the same id are not in it.
// An identity without a session is memory.ErrIncompleteScope.
func (m *Memory) Window(ctx context.Context, id memory.Identity, budget int) ([]memory.Record, error) {
	if err := m.enter(ctx); err != nil {
		return nil, err
	}
	defer m.leave()
	if budget < 0 {
		return nil, memory.Errorf(memory.ErrInvalidArgument, "tiered: window budget is %d; it must not be negative", budget)
	}
	if budget == 0 || budget > m.opt.Budget {
		budget = m.opt.Budget
	}
	d, err := m.latestDigest(ctx, id)
	if err != nil {
		return nil, err
	}
	turns, _, err := m.unfolded(ctx, id, d.through, m.opt.MaxTurns)
	if err != nil {
		return nil, err
	}
	return m.fit(ctx, turns, budget)
}

// fit returns the newest of turns (oldest first) that fit in budget
// tokens, and at least the newest one.
func (m *Memory) fit(ctx context.Context, turns []memory.Record, budget int) ([]memory.Record, error) {
	used, from := 0, len(turns)
	for from > 0 {
		n, err := m.tokens(ctx, turns[from-1])
		if err != nil {
			return nil, err
		}
		if used+n > budget && from < len(turns) {
			break
		}
		used += n
		from--
	}
	return turns[from:], nil
}

// Turn is one turn to append: who spoke and what was said.
type Turn struct {
	Role    memory.Role
	Content string
	// Speaker, when not empty, names who said it (memory.SpeakerKey).
	Speaker string
	// ID, when not empty, is the turn's record id, making its append
	// idempotent: an append whose first turn's id is already stored in
	// the session stores nothing and reports Appended.Replayed. The turns
	// of an append have ids all or none; they share a creation time and
	// are ordered by id, so their ids must increase in the order said.
	// A retried append gives the same ids (derived from the session's
	// identity and a request key, say: see package server). Empty means a
	// fresh id (memory.NewTurn).
	ID string
}

// Append stores turns in id's session, in order, as one batch, and
// queues a fold when the session's unfolded turns pass Options.Trigger
// tokens or Options.MaxTurns turns. The fold runs in the background
// (folding and extraction are never on the write path). An identity
// without a session is memory.ErrIncompleteScope; it never falls back to
// a shared window. Turns are said in the order appended: each gets a
// creation time from the store's clock. The result says whether this
// append queued a fold (Appended.Folding).
func (m *Memory) Append(ctx context.Context, id memory.Identity, turns ...Turn) (Appended, error) {
	if err := m.enter(ctx); err != nil {
		return Appended{}, err
	}
	defer m.leave()
	if _, err := m.st.Filter(id, memory.LevelSession); err != nil {
		return Appended{}, err
	}
	if len(turns) > memory.MaxBatch {
		return Appended{}, memory.Errorf(memory.ErrTooLarge, "tiered: %d turns, the limit is %d", len(turns), memory.MaxBatch)
	}
	now := m.st.Now()
	recs := make([]memory.Record, len(turns))
	keyed := len(turns) > 0 && turns[0].ID != ""
	for i, t := range turns {
		recs[i] = memory.NewTurn(id, t.Role, t.Content, now)
		if t.Speaker != "" {
			recs[i].Metadata = map[string]string{memory.SpeakerKey: t.Speaker}
		}
		if (t.ID != "") != keyed {
			return Appended{}, memory.Errorf(memory.ErrInvalidArgument, "tiered: turn %d has an id and turn 0 has not, or the other way round: the turns of an append have ids all or none", i)
		}
		if keyed {
			if i > 0 && t.ID <= turns[i-1].ID {
				return Appended{}, memory.Errorf(memory.ErrInvalidArgument, "tiered: turn %d's id %q does not follow turn %d's %q: the turns of an append share a creation time and are ordered by id", i, t.ID, i-1, turns[i-1].ID)
			}
			recs[i].ID = t.ID
		}
	}
	for i := range recs {
		if err := recs[i].Validate(); err != nil {
			return Appended{}, err
		}
		if strings.TrimSpace(recs[i].Content) == "" {
			return Appended{}, memory.Errorf(memory.ErrInvalidArgument, "tiered: turn %d has no content", i)
		}
	}
	// Counted here, once, so the tally of the session's window knows
	// them; Add keeps a count it is given, and refuses a turn whose role
	// is not a conversation role.
	for i := range recs {
		n, err := m.st.Tokens().CountTokens(ctx, recs[i].Content)
		if err != nil {
			return Appended{}, err
		}
		recs[i].Tokens = max(n, 1)
	}
	if keyed {
		stored, err := m.storedTurns(ctx, id, recs[0].ID)
		if err != nil {
			return Appended{}, m.soft(err, "append turns")
		}
		if stored {
			return Appended{Turns: len(recs), Replayed: true}, nil
		}
	}
	if err := m.st.Add(ctx, id, recs...); err != nil {
		return Appended{}, m.soft(err, "append turns")
	}
	return Appended{Turns: len(recs), Folding: m.appended(ctx, id, recs)}, nil
}

// Appended is what an Append stored and started.
type Appended struct {
	// Turns is how many turns were stored: all of them, or none when
	// the append failed (or, under FailureMode Soft, was not stored).
	Turns int
	// Folding reports that the append queued a fold of the session: its
	// unfolded turns passed Options.Trigger tokens or Options.MaxTurns
	// turns, and the digest and facts of the oldest are being made in
	// the background.
	Folding bool
	// Replayed reports that the append's turns were stored before, by an
	// append with the same turn ids (Turn.ID): this one stored nothing.
	Replayed bool
}
