package tiers

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/internal/lexical"
	"github.com/agentmem/memory/internal/osfile"
)

// Limits of Search.
const (
	// MaxSearchResults is the most matches one Search returns.
	MaxSearchResults = 100
	// MaxSearchQueryBytes is the longest query Search accepts.
	MaxSearchQueryBytes = 4096
)

// VectorMatch is one entry Search found.
type VectorMatch struct {
	// Entry is the entry's file name in the directory: the source an
	// agent cites.
	Entry string
	// Key is the step the entry came from: "<workflow>/<step>".
	Key string
	// Text is the entry's text, the step's one-line summary.
	Text string
	// Created is when the entry was saved.
	Created time.Time
	// Score is the entry's term-frequency score: the sum, over the distinct
	// query terms, of how often each occurs in Text.
	Score int
}

// Search returns the k entries visible to id at the agent level that best
// match query, scored by term frequency: query and entries are split into
// lower-case words (runs of letters and digits), and an entry scores the
// sum, over the distinct query words, of how often each occurs in it.
// Entries scoring zero or older than the TTL are left out; ties go to the
// newest entry. The scope filter is applied while scoring, before the top
// k are chosen.
//
// Every Search first reads the index lines appended since the last one
// (all of them, the first time), so entries written or pruned by other
// processes are seen at once; the index file holds each entry's text, so
// no entry file is opened. Until this Vector has an in-memory inverted
// index (word -> entries), Search scans the texts for the query's words
// and starts building that index in the background; once it is built,
// searches read only the postings of the query's words. Both ways rank
// the same. A match whose entry file was removed by hand is dropped and
// the next best takes its place, so every match names a file that can be
// cited.
//
// k must be between 1 and MaxSearchResults, and query valid UTF-8 of at
// most MaxSearchQueryBytes bytes holding at least one word; otherwise the
// error is memory.ErrInvalidArgument (memory.ErrTooLarge for a long
// query), as CheckSearch reports it.
func (v *Vector) Search(ctx context.Context, id memory.Identity, query string, k int) ([]VectorMatch, error) {
	if err := v.check(ctx); err != nil {
		return nil, err
	}
	terms, err := queryTerms(query, k)
	if err != nil {
		return nil, err
	}
	filter, err := v.scope(id)
	if err != nil {
		return nil, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := v.refreshSearch(ctx); err != nil {
		return nil, err
	}
	now := v.store.Now()
	keep := func(e *viewEntry) bool {
		return filter.Matches(e.who) && !v.stale(e.created, now)
	}
	var top []hit
	if v.search.built() {
		top, err = v.searchIndexed(terms, k, keep)
	} else {
		top, err = v.searchScan(terms, k, keep)
		v.startBuild()
	}
	if err != nil {
		return nil, err
	}
	out := make([]VectorMatch, len(top))
	for i, h := range top {
		out[i] = VectorMatch{
			Entry:   h.Ref.name,
			Key:     h.Ref.key,
			Text:    h.Ref.text,
			Created: time.Unix(0, h.Ref.created).UTC(),
			Score:   h.Score,
		}
	}
	return out, nil
}

// CheckSearch returns the error Search gives for query and k before it
// reads anything, or nil when Search accepts them: k must be between 1
// and MaxSearchResults, and query valid UTF-8 of at most
// MaxSearchQueryBytes bytes holding at least one word (a run of letters
// or digits). Violations are memory.ErrInvalidArgument, a long query
// memory.ErrTooLarge. The vector-search tool checks a model's arguments
// with it, so a Search it then runs fails only for real failures.
func CheckSearch(query string, k int) error {
	_, err := queryTerms(query, k)
	return err
}

// searchIndexed ranks with the built search index. An entry removed by
// hand leaves the index, and the ranking is redone. The caller holds v.mu.
func (v *Vector) searchIndexed(terms []string, k int, keep func(*viewEntry) bool) ([]hit, error) {
	q := lexical.NewQuery(terms)
	for {
		top := newTopK(k)
		v.search.index.Score(&q, top, keep)
		gone, err := v.dropGone(top.Hits(), v.search.index.Remove)
		if err != nil || !gone {
			return top.Hits(), err
		}
	}
}

// dropGone calls drop with every entry of top whose file is missing, and
// reports whether there was one.
func (v *Vector) dropGone(top []hit, drop func(*viewEntry)) (bool, error) {
	gone := false
	for _, h := range top {
		_, err := os.Lstat(filepath.Join(v.dir, h.Ref.name))
		if os.IsNotExist(err) {
			drop(h.Ref)
			gone = true
		} else if err != nil {
			return false, fsError(err, "checking vector entry "+h.Ref.name)
		}
	}
	return gone, nil
}

// refreshSearch brings the view and, when built, the search index up to
// date, reading the new index lines under the shared lock. The caller
// holds v.mu.
func (v *Vector) refreshSearch(ctx context.Context) error {
	for attempt := 0; ; attempt++ {
		release, err := v.lock(ctx, osfile.Shared)
		if err != nil {
			return err
		}
		ch, err := v.view.refresh(v.dir)
		release()
		if err == nil {
			v.search.update(ch)
			return nil
		}
		if attempt == 1 || !errors.Is(err, memory.ErrNotFound) {
			return err
		}
		if err := v.ensureIndex(ctx); err != nil {
			return err
		}
	}
}

// searchIndex is the in-memory inverted index of the entries' texts that
// Search scores with once it is built (see Vector.startBuild); index is
// nil until then.
type searchIndex struct {
	index *lexical.Index[*viewEntry]
}

// built reports whether the index is in place.
func (s *searchIndex) built() bool { return s.index != nil }

// update applies a view change to a built index. A reset (the index file
// was replaced), or removed entries outnumbering live ones, discards the
// index instead: the next Search scans and builds it anew in the
// background.
func (s *searchIndex) update(ch viewChange) {
	if !s.built() {
		return
	}
	if ch.reset {
		s.index = nil
		return
	}
	for _, e := range ch.added {
		if !e.dead {
			s.index.Add(e, e.text)
		}
	}
	for _, e := range ch.removed {
		s.index.Remove(e)
	}
	if n := s.index.Removed(); n > 1024 && n > s.index.Len() {
		s.index = nil
	}
}

// reconcile makes an index built from an earlier view agree with w: it
// drops the entries w no longer holds (or holds as another entry, after
// a reset) and adds w's live entries it lacks.
func reconcile(x *lexical.Index[*viewEntry], w *indexView) {
	for e := range x.Refs() {
		if w.byName[e.name] != e {
			x.Remove(e)
		}
	}
	for _, e := range w.order {
		if !e.dead && !x.Has(e) {
			x.Add(e, e.text)
		}
	}
}
