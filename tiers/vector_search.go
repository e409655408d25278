package tiers

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/agentmem/memory"
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
	if v.search.built {
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
			Entry:   h.entry.name,
			Key:     h.entry.key,
			Text:    h.entry.text,
			Created: time.Unix(0, h.entry.created).UTC(),
			Score:   h.score,
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
	for {
		top := v.search.score(terms, k, keep)
		gone, err := v.dropGone(top, v.search.drop)
		if err != nil || !gone {
			return top, err
		}
	}
}

// dropGone calls drop with the name of every entry of top whose file is
// missing, and reports whether there was one.
func (v *Vector) dropGone(top []hit, drop func(name string)) (bool, error) {
	gone := false
	for _, h := range top {
		_, err := os.Lstat(filepath.Join(v.dir, h.entry.name))
		if os.IsNotExist(err) {
			drop(h.entry.name)
			gone = true
		} else if err != nil {
			return false, fsError(err, "checking vector entry "+h.entry.name)
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

// searchIndex is the in-memory inverted index Search scores with once it
// is built (see Vector.startBuild).
type searchIndex struct {
	built    bool
	docs     map[string]*searchDoc // live documents by entry name
	list     []*searchDoc          // every document in postings, by id
	postings map[string][]posting  // word -> documents holding it
	removed  int                   // removed documents still in postings
	scores   []int                 // scratch: score by document id, kept zeroed
	touched  []int                 // scratch: ids with a score
	counts   map[string]int        // scratch: word counts of one entry
}

// searchDoc is one indexed entry.
type searchDoc struct {
	id      int // index in searchIndex.list
	entry   *viewEntry
	removed bool
}

// posting says how often a word occurs in a document.
type posting struct {
	doc   *searchDoc
	count int
}

// score sums the postings of terms per document and returns the best k
// entries that keep admits, best first. keep is asked once per document
// with a score, so the scope filter is applied before the top k are
// chosen.
func (s *searchIndex) score(terms []string, k int, keep func(*viewEntry) bool) []hit {
	if len(s.scores) < len(s.list) {
		s.scores = make([]int, len(s.list))
	}
	touched := s.touched[:0]
	for _, t := range terms {
		for _, p := range s.postings[t] {
			if p.doc.removed {
				continue
			}
			if s.scores[p.doc.id] == 0 {
				touched = append(touched, p.doc.id)
			}
			s.scores[p.doc.id] += p.count
		}
	}
	top := newTopK(k)
	for _, id := range touched {
		h := hit{entry: s.list[id].entry, score: s.scores[id]}
		s.scores[id] = 0
		if top.wants(h) && keep(h.entry) {
			top.insert(h)
		}
	}
	s.touched = touched
	return top.hits
}

// update applies a view change to a built index. A reset (the index file
// was replaced), or removed documents outnumbering live ones, discards
// the index instead: the next Search scans and builds it anew in the
// background.
func (s *searchIndex) update(ch viewChange) {
	if !s.built {
		return
	}
	if ch.reset {
		*s = searchIndex{}
		return
	}
	for _, e := range ch.added {
		if !e.dead {
			s.add(e)
		}
	}
	for _, e := range ch.removed {
		s.drop(e.name)
	}
	if s.removed > 1024 && s.removed > len(s.docs) {
		*s = searchIndex{}
	}
}

// reconcile makes an index built from an earlier view agree with w: it
// drops the documents w no longer holds (or holds as another entry, after
// a reset) and adds w's live entries it lacks.
func (s *searchIndex) reconcile(w *indexView) {
	for name, d := range s.docs {
		if w.byName[name] != d.entry {
			s.drop(name)
		}
	}
	for _, e := range w.order {
		if !e.dead && s.docs[e.name] == nil {
			s.add(e)
		}
	}
}

// drop removes the document of entry name, if indexed.
func (s *searchIndex) drop(name string) {
	if d := s.docs[name]; d != nil {
		d.removed = true
		delete(s.docs, name)
		s.removed++
	}
}

// reset empties the index.
func (s *searchIndex) reset() {
	*s = searchIndex{docs: map[string]*searchDoc{}, postings: map[string][]posting{}}
}

// add indexes e.
func (s *searchIndex) add(e *viewEntry) {
	if s.docs[e.name] != nil {
		return
	}
	d := &searchDoc{id: len(s.list), entry: e}
	s.list = append(s.list, d)
	s.docs[e.name] = d
	if s.counts == nil {
		s.counts = map[string]int{}
	}
	forEachWord(e.text, func(w string) { s.counts[w]++ })
	for w, n := range s.counts {
		s.postings[w] = append(s.postings[w], posting{doc: d, count: n})
	}
	clear(s.counts)
}
