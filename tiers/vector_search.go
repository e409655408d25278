package tiers

import (
	"context"
	"errors"
	"iter"
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
	// Score is the entry's BM25 score for the query (see Search): greater
	// is better, always above 0.
	Score float64
}

// Search returns the k entries visible to id at the agent level that best
// match query, ranked by BM25, the term-frequency score of search engines
// with inverse document frequency and length normalisation:
//
//   - query and entries are analyzed alike into terms: words (runs of
//     Unicode letters and digits) case-folded, English stopwords ("the",
//     "and", "of", … 33 words) dropped, the rest stemmed with the Porter2
//     English stemmer, so "restarted" matches "restart";
//   - an entry scores, summed over the query's distinct terms it holds,
//     idf · tf · (k1 + 1) / (tf + k1 · (1 − b + b · len / avglen)), with tf
//     how often it holds the term, len its length in terms, k1 = 1.2,
//     b = 0.75, and idf = ln(1 + (N − df + 0.5) / (df + 0.5));
//   - N, df (entries holding the term) and avglen are counted over the
//     entries the index lists in id's agent-level scope, never beyond it,
//     so other agents' or users' entries move no score; entries older than
//     the TTL, or whose file was removed by hand, count there until pruned,
//     but are never returned.
//
// Entries holding no query term are left out; equal scores go to the
// newest entry, then the greater name. The scope is applied before the
// top k are chosen. A query of stopwords only matches nothing.
//
// Every Search first reads the index lines appended since the last one
// (all of them, the first time), so entries written or pruned by other
// processes are seen at once; the index file holds each entry's text, so
// no entry file is opened. Until this Vector has an in-memory inverted
// index (one lexical.Index per writer identity), Search scans the texts
// and starts building that index in the background; once it is built,
// searches read only the postings of the query's terms in the scope's
// partitions. Both ways rank the same, score for score. A match whose
// entry file was removed by hand is dropped and the next best takes its
// place, so every match names a file that can be cited.
//
// k must be between 1 and MaxSearchResults, and query valid UTF-8 of at
// most MaxSearchQueryBytes bytes holding at least one word; otherwise the
// error is memory.ErrInvalidArgument (memory.ErrTooLarge for a long
// query), as CheckSearch reports it.
func (v *Vector) Search(ctx context.Context, id memory.Identity, query string, k int) ([]VectorMatch, error) {
	if err := v.check(ctx); err != nil {
		return nil, err
	}
	q, err := parseQuery(query, k)
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
	if len(q.Terms()) == 0 {
		return nil, nil
	}
	now := v.store.Now()
	keep := func(e *viewEntry) bool { return !e.gone && !v.stale(e.created, now) }
	var top []hit
	if v.search.built() {
		top, err = v.searchIndexed(&q, k, filter, keep)
	} else {
		top, err = v.searchScan(&q, k, filter, keep)
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
	_, err := parseQuery(query, k)
	return err
}

// searchIndexed ranks with the built search index, over the partitions of
// the writers filter matches. An entry whose file was removed by hand is
// marked gone, and the ranking redone. The caller holds v.mu.
func (v *Vector) searchIndexed(q *lexical.Query, k int, filter memory.Filter, keep func(*viewEntry) bool) ([]hit, error) {
	var parts []*lexical.Index[*viewEntry]
	for who, x := range v.search.index.parts {
		if filter.Matches(who) {
			parts = append(parts, x)
		}
	}
	for {
		top, err := lexical.Search(q, parts, lexical.DefaultParams(), newTopK(k), keep)
		if err != nil {
			return nil, err
		}
		gone, err := v.dropGone(top)
		if err != nil || !gone {
			return top, err
		}
	}
}

// dropGone marks gone every entry of top whose file is missing, and
// reports whether there was one. The caller holds v.mu.
func (v *Vector) dropGone(top []hit) (bool, error) {
	gone := false
	for _, h := range top {
		_, err := os.Lstat(filepath.Join(v.dir, h.Ref.name))
		if os.IsNotExist(err) {
			h.Ref.gone = true
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
	index *textIndex
}

// built reports whether the index is in place.
func (s *searchIndex) built() bool { return s.index != nil }

// update applies a view change to a built index. A reset (the index file
// was replaced) discards the index instead: the next Search scans and
// builds it anew in the background.
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
			s.index.add(e)
		}
	}
	for _, e := range ch.removed {
		s.index.remove(e)
	}
}

// textIndex is the search index: one lexical.Index partition per writer
// identity, so that a search over one scope counts BM25's statistics over
// the partitions of that scope only. Each partition drops the postings of
// removed entries by itself once they outnumber its live ones.
type textIndex struct {
	corpus *lexical.Corpus[*viewEntry] // the partitions' terms
	parts  map[memory.Identity]*lexical.Index[*viewEntry]
	n      int // entries indexed
}

func newTextIndex() *textIndex {
	return &textIndex{corpus: lexical.NewCorpus[*viewEntry](), parts: map[memory.Identity]*lexical.Index[*viewEntry]{}}
}

// add indexes e's text in its writer's partition.
func (x *textIndex) add(e *viewEntry) {
	p := x.parts[e.who]
	if p == nil {
		p = x.corpus.NewIndex()
		x.parts[e.who] = p
	}
	if p.Add(e, e.text) {
		x.n++
	}
}

// remove drops e, if indexed, and its partition once empty.
func (x *textIndex) remove(e *viewEntry) {
	p := x.parts[e.who]
	if p == nil || !p.Remove(e) {
		return
	}
	x.n--
	if p.Len() == 0 {
		delete(x.parts, e.who)
	}
}

// has reports whether e is indexed.
func (x *textIndex) has(e *viewEntry) bool {
	p := x.parts[e.who]
	return p != nil && p.Has(e)
}

// Len returns how many entries are indexed.
func (x *textIndex) Len() int { return x.n }

// Refs yields the indexed entries; the caller may remove the one yielded.
func (x *textIndex) Refs() iter.Seq[*viewEntry] {
	return func(yield func(*viewEntry) bool) {
		for _, p := range x.parts {
			for e := range p.Refs() {
				if !yield(e) {
					return
				}
			}
		}
	}
}

// reconcile makes an index built from an earlier view agree with w: it
// drops the entries w no longer holds (or holds as another entry, after
// a reset) and adds w's live entries it lacks.
func reconcile(x *textIndex, w *indexView) {
	var drop []*viewEntry
	for e := range x.Refs() {
		if w.byName[e.name] != e {
			drop = append(drop, e)
		}
	}
	for _, e := range drop {
		x.remove(e)
	}
	for _, e := range w.order {
		if !e.dead && !x.has(e) {
			x.add(e)
		}
	}
}
