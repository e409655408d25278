package recindex

import (
	"slices"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/lexical"
)

// Text search: each writer's records' content is indexed in a
// lexical.Index of its own, keyed by entry and tagged with its kind, all
// in one lexical.Corpus, so that a search reads only the indexes of the
// writers its filter matches and its corpus statistics are theirs alone
// (driver.TextSearcher). The indexes are built by
// StartTexts, from every stored entry, and kept by every Put and Remove
// after it: a driver that is never searched by text pays nothing for them.

// TextsOn reports whether the text indexes are kept.
func (x *Index[E, W]) TextsOn() bool { return x.texts }

// StartTexts builds the text indexes, unless they are kept already. It
// needs the caller's lock held exclusively.
func (x *Index[E, W]) StartTexts() {
	if x.texts {
		return
	}
	x.texts = true
	x.corpus = lexical.NewCorpus[*Entry[E, W]]()
	for e := range x.ids.All() {
		x.indexText(e)
	}
}

// indexText adds e's content to its writer's text index.
func (x *Index[E, W]) indexText(e *Entry[E, W]) {
	if e.Content == "" {
		return
	}
	w := e.writer
	if w.text == nil {
		w.text = x.corpus.NewIndex()
	}
	w.text.AddTagged(e, e.Content, x.kinds.Of(e.Kind))
}

// unindexText takes e's content out of its writer's text index.
func unindexText[E, W any](e *Entry[E, W]) {
	if w := e.writer; w.text != nil {
		w.text.Remove(e)
	}
}

// SearchText ranks the live entries q matches against text, at time now
// (unix nanoseconds), and returns the best k as driver.TextSearcher
// describes: the corpus is the records of the writers q's filter matches;
// kinds, key, ids and expiry choose the candidates among them; ties go in
// List order. The text indexes must be on (StartTexts); the caller has
// checked the arguments.
func (x *Index[E, W]) SearchText(q driver.Query, text string, k int, now int64) ([]driver.Match, error) {
	hits, searched, err := x.rankText(q, text, k, now)
	if !searched || err != nil {
		return nil, err
	}
	out := make([]driver.Match, len(hits))
	for i, h := range hits {
		out[i] = driver.Match{Record: h.Ref.Record(), Score: h.Score, WriterScore: h.Group}
	}
	return out, err
}

// RankText is SearchText answering each match's Ref (Entry.Ref) in place
// of a copy of its record, as driver.TextRanker describes.
func (x *Index[E, W]) RankText(q driver.Query, text string, k int, now int64) ([]driver.RefMatch, error) {
	hits, searched, err := x.rankText(q, text, k, now)
	if !searched || err != nil {
		return nil, err
	}
	out := make([]driver.RefMatch, len(hits))
	for i, h := range hits {
		out[i] = driver.RefMatch{Ref: h.Ref.Ref(), Score: h.Score, WriterScore: h.Group}
	}
	return out, err
}

// rankText returns the hits of SearchText, carrying their writers'
// scores (lexical.SearchGroups), and whether there was a writer to
// search.
func (x *Index[E, W]) rankText(q driver.Query, text string, k int, now int64) (hits []lexical.Hit[*Entry[E, W]], searched bool, err error) {
	var parts []*lexical.Index[*Entry[E, W]]
	for w := range x.Writers(q) {
		if w.text != nil && w.text.Len() > 0 {
			parts = append(parts, w.text)
		}
	}
	if len(parts) == 0 {
		return nil, false, nil
	}
	lq := lexical.NewQuery(text)
	// Kinds are admitted by their tags, which read no entry; keep reads
	// one only for what tags cannot tell.
	kindsTold := true
	if len(q.Kinds) > 0 {
		lq.Tags, kindsTold = x.kinds.Query(q.Kinds)
		if lq.Tags == 0 {
			return nil, true, nil // no entry of those kinds
		}
	}
	var keep func(*Entry[E, W]) bool // nil: every candidate
	if x.expiring > 0 || q.Key != "" || len(q.IDs) > 0 || !kindsTold {
		rest := q
		keep = func(e *Entry[E, W]) bool { return !e.Expired(now) && e.MatchesRest(&rest) }
	}
	top := lexical.NewTopKByScore(k, func(a, b *Entry[E, W]) bool { return a.Compare(b) < 0 })
	hits, err = lexical.SearchGroups(&lq, parts, lexical.DefaultParams(), top, keep)
	return hits, true, err
}

// WriterRefs returns, for each of writers, the Refs of the live entries
// with content that writer stored under exactly that identity and q
// matches, at time now, newest first, as driver.TextRanker describes. The
// text indexes must be on (StartTexts); the caller has checked the
// arguments.
func (x *Index[E, W]) WriterRefs(q driver.Query, writers []memory.Identity, now int64) [][]driver.Ref {
	out := make([][]driver.Ref, len(writers))
	for i, id := range writers {
		w := x.writers[id]
		if w == nil || w.text == nil || !q.Filter.Matches(id) {
			continue
		}
		var refs []driver.Ref
		for e := range w.text.Refs() {
			if !e.Expired(now) && e.MatchesRest(&q) {
				refs = append(refs, e.Ref())
			}
		}
		slices.SortFunc(refs, driver.CompareRefs)
		out[i] = refs
	}
	return out
}
