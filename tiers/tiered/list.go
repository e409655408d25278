package tiered

import (
	"context"

	"github.com/agentmem/memory"
)

// ListOptions say what List returns. The zero value lists every tier.
type ListOptions struct {
	// Level selects the long-term facts listed: memory.LevelSession,
	// LevelAgent, LevelUser or LevelStore, as memory.Level filters them
	// (the window and digest are always the session's). Empty means
	// Options.Level.
	Level memory.Level
	// Budget is the window's token budget, as Window's: zero means
	// Options.Budget, and a larger budget is cut to it.
	Budget int
	// NoWindow, NoDigest and NoFacts leave the window, the digest or the
	// facts out of the listing; a tier left out is not read.
	NoWindow, NoDigest, NoFacts bool
}

// Listing is what List returns: the session's conversational tiers and
// every fact at a level.
type Listing struct {
	// Window is the session's window, oldest first, as Window returns it.
	Window []memory.Record
	// Digest is the session's latest digest version; nil when the session
	// has none.
	Digest *memory.Record
	// Facts are the live facts visible at the level, newest first: all of
	// them (superseded facts are not listed).
	Facts []memory.Record
}

// List returns the complete listing of the long-term facts id may read at
// opt.Level, and the window and latest digest of id's session (the service
// document's /v1/list). Unlike a recall, a listing is strict: a tier that
// cannot be read fails the call. An identity without a session is
// memory.ErrIncompleteScope unless the window and the digest are both left
// out; an identity without what opt.Level needs is refused the same way;
// both are checked before any storage is read.
func (m *Memory) List(ctx context.Context, id memory.Identity, opt ListOptions) (Listing, error) {
	if err := m.enter(ctx); err != nil {
		return Listing{}, err
	}
	defer m.leave()
	if opt.Level == "" {
		opt.Level = m.opt.Level
	}
	if opt.Budget < 0 {
		return Listing{}, memory.Errorf(memory.ErrInvalidArgument, "tiered: list budget is %d; it must not be negative", opt.Budget)
	}
	if opt.Budget == 0 || opt.Budget > m.opt.Budget {
		opt.Budget = m.opt.Budget
	}
	session := !opt.NoWindow || !opt.NoDigest
	if session {
		if _, err := m.st.Filter(id, memory.LevelSession); err != nil {
			return Listing{}, err
		}
	}
	if !opt.NoFacts {
		if _, err := m.st.Filter(id, opt.Level); err != nil {
			return Listing{}, err
		}
	}
	var out Listing
	if session {
		d, err := m.latestDigest(ctx, id)
		if err != nil {
			return Listing{}, err
		}
		if !opt.NoDigest && d.version > 0 {
			out.Digest = &d.rec
		}
		if !opt.NoWindow {
			turns, _, err := m.unfolded(ctx, id, d.through, m.opt.MaxTurns)
			if err != nil {
				return Listing{}, err
			}
			if out.Window, err = m.fit(ctx, turns, opt.Budget); err != nil {
				return Listing{}, err
			}
		}
	}
	if !opt.NoFacts {
		fs, err := m.facts.List(ctx, id, opt.Level, false)
		if err != nil {
			return Listing{}, err
		}
		out.Facts = fs
	}
	return out, nil
}
