// Package foldcheck checks, for tests, what the tiered memory's folds
// left of a session (package tiers/tiered): that its digest versions
// partition its turns in order, and that each folded turn is the source
// of exactly one fact. The tests that use it make every turn say one
// fact, with an extractor that proposes each turn's text as a fact.
package foldcheck

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/tiers/facts"
	"github.com/agentmem/memory/tiers/tiered"
)

// History is what Check found of a session.
type History struct {
	// Turns are the session's turns, oldest first.
	Turns []memory.Record
	// Versions are its digest versions, oldest first.
	Versions []memory.Record
	// Folded counts the turns at or below the latest version's boundary.
	Folded int
}

// Check reads id's session over st and checks that its digest
// versions are contiguous from 1, and that each folded the turns after
// the one before it, through its boundary: every turn below the latest
// boundary was folded once, none twice and none skipped. It checks that
// the session's facts are one per folded turn, each with that turn as
// its only source (every turn of the tests says one fact), so that the
// facts of every fold were stored and no other; and that the turns after
// the boundary hold at most trigger tokens.
func Check(t testing.TB, ctx context.Context, st *backend.Store, id memory.Identity, trigger int) History {
	t.Helper()
	var h History
	var err error
	h.Turns, err = st.List(ctx, id, memory.Query{Level: memory.LevelSession, Kinds: []memory.Kind{memory.KindTurn}})
	if err != nil {
		t.Fatal(err)
	}
	h.Versions, err = st.List(ctx, id, memory.Query{Level: memory.LevelSession, Kinds: []memory.Kind{memory.KindDigest}})
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(h.Turns) // in the order said: by creation, then id
	slices.Reverse(h.Versions)
	for i, d := range h.Versions {
		if d.Key != fmt.Sprintf("%020d", i+1) {
			t.Errorf("session %s: digest version %d of %d has key %q: versions not contiguous from 1", id.Session, i+1, len(h.Versions), d.Key)
			return h
		}
		n, err := strconv.Atoi(d.Metadata[tiered.MetaFoldedTurns])
		if err != nil || n < 1 {
			t.Errorf("session %s: version %d folded %q turns", id.Session, i+1, d.Metadata[tiered.MetaFoldedTurns])
			return h
		}
		through := slices.IndexFunc(h.Turns, func(r memory.Record) bool { return r.ID == d.Metadata[tiered.MetaThroughID] })
		if through != h.Folded+n-1 {
			t.Errorf("session %s: version %d folded %d turns after turn %d, but its boundary is turn %d (of %d): a turn folded twice or skipped",
				id.Session, i+1, n, h.Folded, through+1, len(h.Turns))
			return h
		}
		if created := strconv.FormatInt(h.Turns[through].Created.UnixNano(), 10); d.Metadata[tiered.MetaThroughCreated] != created {
			t.Errorf("session %s: version %d's boundary is stamped %s, its turn %s", id.Session, i+1, d.Metadata[tiered.MetaThroughCreated], created)
		}
		h.Folded += n
	}
	rest := 0
	for _, r := range h.Turns[h.Folded:] {
		rest += r.Tokens
	}
	if rest > trigger {
		t.Errorf("session %s: %d tokens left unfolded after %d versions, over the trigger %d", id.Session, rest, len(h.Versions), trigger)
	}
	fs, err := st.List(ctx, id, memory.Query{Level: memory.LevelSession, Kinds: []memory.Kind{memory.KindFact, memory.KindSuperseded}})
	if err != nil {
		t.Fatal(err)
	}
	position := map[string]int{}
	for i, r := range h.Turns {
		position[r.ID] = i
	}
	said := make([]int, len(h.Turns)) // facts per turn
	for _, f := range fs {
		sources, err := facts.Sources(f)
		if err != nil || len(sources) != 1 {
			t.Errorf("session %s: fact %q has sources %v (%v), want one turn", id.Session, f.Content, sources, err)
			continue
		}
		i, ok := position[sources[0]]
		switch {
		case !ok:
			t.Errorf("session %s: fact %q comes from %s, not a turn of the session", id.Session, f.Content, sources[0])
		case i >= h.Folded:
			t.Errorf("session %s: fact %q comes from turn %d, which is not folded (%d are)", id.Session, f.Content, i+1, h.Folded)
		case f.Content != strings.TrimSpace(h.Turns[i].Content):
			t.Errorf("session %s: fact %q comes from turn %d, which says %q", id.Session, f.Content, i+1, h.Turns[i].Content)
		default:
			said[i]++
		}
	}
	for i, n := range said[:h.Folded] {
		if n != 1 {
			t.Errorf("session %s: folded turn %d (%q) is the source of %d facts, want 1", id.Session, i+1, h.Turns[i].Content, n)
		}
	}
	return h
}
