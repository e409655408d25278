package tiers

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agentmem/memory"
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
// The first Search builds an in-memory inverted index (word -> entries)
// from the index file, which holds each entry's text; later ones read
// only the index lines appended since, so entries written or pruned by
// other processes are seen at once. A match whose entry file was removed
// by hand is dropped and the next best takes its place, so every match
// names a file that can be cited.
//
// k must be between 1 and MaxSearchResults, and query valid UTF-8 of at
// most MaxSearchQueryBytes bytes holding at least one word; otherwise the
// error is memory.ErrInvalidArgument (memory.ErrTooLarge for a long
// query).
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
	now := v.clock.Now()
	keep := func(d *searchDoc) bool {
		return filter.Matches(d.entry.who) && !v.stale(d.entry.created, now)
	}
	top, err := v.search.score(terms, k, keep), error(nil)
	// Every match must name an entry that is there to cite: one removed by
	// hand leaves the search index, and the ranking is redone.
	for gone := true; gone; {
		gone = false
		for _, h := range top {
			_, err = os.Lstat(filepath.Join(v.dir, h.doc.entry.name))
			if os.IsNotExist(err) {
				v.search.drop(h.doc.entry.name)
				gone = true
			} else if err != nil {
				return nil, fsError(err, "checking vector entry "+h.doc.entry.name)
			}
		}
		if gone {
			top = v.search.score(terms, k, keep)
		}
	}
	out := make([]VectorMatch, len(top))
	for i, h := range top {
		out[i] = VectorMatch{
			Entry:   h.doc.entry.name,
			Key:     h.doc.entry.key,
			Text:    h.doc.entry.text,
			Created: time.Unix(0, h.doc.entry.created).UTC(),
			Score:   h.score,
		}
	}
	return out, nil
}

// queryTerms checks a query and k and returns the query's distinct words.
func queryTerms(query string, k int) ([]string, error) {
	switch {
	case k < 1 || k > MaxSearchResults:
		return nil, memory.Errorf(memory.ErrInvalidArgument, "search k is %d; it must be between 1 and %d", k, MaxSearchResults)
	case len(query) > MaxSearchQueryBytes:
		return nil, memory.Errorf(memory.ErrTooLarge, "search query is %d bytes, the limit is %d", len(query), MaxSearchQueryBytes)
	case !utf8.ValidString(query):
		return nil, memory.Errorf(memory.ErrInvalidArgument, "search query is not valid UTF-8")
	}
	var terms []string
	forEachWord(query, func(w string) {
		if !slices.Contains(terms, w) {
			terms = append(terms, w)
		}
	})
	if len(terms) == 0 {
		return nil, memory.Errorf(memory.ErrInvalidArgument, "search query %q has no words", query)
	}
	return terms, nil
}

// forEachWord calls fn with each word of text, lower-cased: a word is a
// run of letters and digits.
func forEachWord(text string, fn func(word string)) {
	start := -1
	for i, r := range text {
		word := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case word && start < 0:
			start = i
		case !word && start >= 0:
			fn(strings.ToLower(text[start:i]))
			start = -1
		}
	}
	if start >= 0 {
		fn(strings.ToLower(text[start:]))
	}
}

// searchIndex is the in-memory inverted index Search scores with.
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

// hit is a scored document.
type hit struct {
	doc   *searchDoc
	score int
}

// before reports whether a ranks before b: higher score, then newer.
func (a hit) before(b hit) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	if a.doc.entry.created != b.doc.entry.created {
		return a.doc.entry.created > b.doc.entry.created
	}
	return a.doc.entry.name > b.doc.entry.name
}

// score sums the postings of terms per document and returns the best k
// documents that keep admits, best first. keep is asked once per document
// with a score, so the scope filter is applied before the top k are
// chosen.
func (s *searchIndex) score(terms []string, k int, keep func(*searchDoc) bool) []hit {
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
	top := make([]hit, 0, k+1)
	for _, id := range touched {
		h := hit{doc: s.list[id], score: s.scores[id]}
		s.scores[id] = 0
		if len(top) == k && !h.before(top[k-1]) || !keep(h.doc) {
			continue
		}
		i, _ := slices.BinarySearchFunc(top, h, func(a, b hit) int {
			if a.before(b) {
				return -1
			}
			return 1
		})
		top = slices.Insert(top, i, h)
		if len(top) > k {
			top = top[:k]
		}
	}
	s.touched = touched
	return top
}

// posting says how often a word occurs in a document.
type posting struct {
	doc   *searchDoc
	count int
}

// refreshSearch brings the view and the search index up to date, reading
// the new index lines under the shared lock. The caller holds v.mu.
func (v *Vector) refreshSearch(ctx context.Context) error {
	for attempt := 0; ; attempt++ {
		release, err := v.lock(ctx, lockShared)
		if err != nil {
			return err
		}
		ch, err := v.view.refresh(v.dir)
		release()
		if err == nil {
			v.search.update(ch, v.view.live)
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

// update applies a view change; a reset, or the first update, rebuilds the
// index from the live entries. Texts come from the index lines, so no
// entry file is opened.
func (s *searchIndex) update(ch viewChange, live func() []*viewEntry) {
	if ch.reset || !s.built {
		s.reset()
		for _, e := range live() {
			s.add(e)
		}
		s.built = true
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
		docs := s.list
		s.reset()
		for _, d := range docs {
			if !d.removed {
				s.add(d.entry)
			}
		}
		s.built = true
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
