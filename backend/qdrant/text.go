package qdrant

import (
	"context"
	"slices"
	"sync"

	qc "github.com/qdrant/go-client/qdrant"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/lexical"
)

// countsInFlight is how many Count requests of one text search run at
// once.
const countsInFlight = 8

// SearchText returns the k unexpired records matching q whose content
// best matches text, by the BM25 the package documentation describes;
// see driver.TextSearcher. WriterScore is always 0.
func (d *Driver) SearchText(ctx context.Context, q driver.Query, text string, k int) ([]driver.Match, error) {
	cands, err := d.searchText(ctx, q, text, k, nil)
	if err != nil || cands == nil {
		return nil, err
	}
	return matches(cands)
}

// RankText is SearchText with each match's driver.Ref in place of its
// record (driver.TextRanker).
func (d *Driver) RankText(ctx context.Context, q driver.Query, text string, k int) ([]driver.RefMatch, error) {
	cands, err := d.searchText(ctx, q, text, k, refFields)
	if err != nil || cands == nil {
		return nil, err
	}
	return refMatches(cands)
}

// searchText runs a text search, reading the payload keys include (nil:
// a record's).
func (d *Driver) searchText(ctx context.Context, q driver.Query, text string, k int, include []string) ([]candidate, error) {
	now, leave, err := d.admit(ctx, driver.CheckSearchText(q, text, k))
	if err != nil {
		return nil, err
	}
	defer leave()
	lq := lexical.NewQuery(text)
	terms, vec, err := d.textQuery(ctx, q.Filter, lq.Terms())
	if err != nil || terms == nil {
		return nil, err
	}
	req := &qc.QueryPoints{
		CollectionName:  d.coll,
		Query:           qc.NewQuerySparse(vec.indices, vec.weights),
		Using:           qc.PtrOf(vText),
		Filter:          textFilter(d.listFilter(q, now), terms),
		WithPayload:     withPayload(include),
		ReadConsistency: readAll(),
	}
	if include == nil {
		req.WithVectors = withRaw()
	}
	return d.rank(ctx, req, k, byQdrant, 0)
}

// sparse is a sparse vector.
type sparse struct {
	indices []uint32
	weights []float32
}

// textQuery returns the terms of a text search that the corpus of filter
// (the records with content of the identities it matches, expired or
// not) holds, and the query's sparse vector: each such term weighed by
// its IDF in that corpus (lexical.IDF), from exact counts of the corpus
// and of its records holding each term — one Count request per term and
// one more, countsInFlight at a time. nil terms: the corpus holds none.
func (d *Driver) textQuery(ctx context.Context, filter memory.Filter, terms []string) ([]string, sparse, error) {
	if len(terms) == 0 {
		return nil, sparse{}, nil
	}
	corpus := append(d.scopeConditions(driver.Query{Filter: filter}), notMarked(), qc.NewMatchBool(fHasText, true))
	counts := make([]uint64, len(terms)+1) // the terms', then the corpus's
	errs := make([]error, len(counts))
	sem := make(chan struct{}, countsInFlight)
	var wg sync.WaitGroup
	for i := range counts {
		f := &qc.Filter{Must: corpus}
		if i < len(terms) {
			f = &qc.Filter{Must: append(corpus[:len(corpus):len(corpus)], holds(terms[i]))}
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			resp, err := d.points().Count(ctx, &qc.CountPoints{
				CollectionName: d.coll, Filter: f, Exact: qc.PtrOf(true), ReadConsistency: readAll(),
			})
			if err != nil {
				errs[i] = classify(ctx, err, "qdrant: counting a text search's corpus")
				return
			}
			counts[i] = resp.GetResult().GetCount()
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, sparse{}, err
		}
	}
	n := int(counts[len(terms)])
	var held []string
	var idf []float64
	for i, t := range terms {
		if df := int(counts[i]); df > 0 {
			held = append(held, t)
			idf = append(idf, lexical.IDF(n, min(df, n)))
		}
	}
	if held == nil {
		return nil, sparse{}, nil
	}
	var v sparse
	v.indices, v.weights = queryVector(held, idf)
	return held, v, nil
}

// textFilter narrows f to the points holding one of terms: the records a
// text search may return. Qdrant's sparse search would find them by the
// terms' dimensions alone; the filter keeps out a record that shares
// only a dimension (termIndex) with the query.
func textFilter(f *qc.Filter, terms []string) *qc.Filter {
	anyOf := make([]*qc.Condition, len(terms))
	for i, t := range terms {
		anyOf[i] = holds(t)
	}
	f.Must = append(f.Must, qc.NewFilterAsCondition(&qc.Filter{Should: anyOf}))
	return f
}

// holds is the condition that a point's content holds the term t: the
// terms payload, every term between spaces, contains " t ". Where the
// field has no full-text index Qdrant matches text as a substring, and
// with the driver's (whitespace tokens, not lowercased) as a token: the
// same points either way, since no term holds a space.
func holds(t string) *qc.Condition { return qc.NewMatchText(fTerms, " "+t+" ") }

// WriterRefs returns, for each writer, the Refs of its unexpired records
// with content that q matches, newest first (driver.TextRanker): one
// Scroll, paged, for all the writers q's filter matches.
func (d *Driver) WriterRefs(ctx context.Context, q driver.Query, writers []memory.Identity) ([][]driver.Ref, error) {
	now, leave, err := d.admit(ctx, driver.CheckWriterRefs(q, writers))
	if err != nil {
		return nil, err
	}
	defer leave()
	out := make([][]driver.Ref, len(writers))
	at := map[memory.Identity]int{}
	var should []*qc.Condition
	for i, w := range writers {
		if _, dup := at[w]; dup || !q.Filter.Matches(w) {
			continue
		}
		at[w] = i
		should = append(should, qc.NewFilterAsCondition(&qc.Filter{Must: identityConditions(w)}))
	}
	if len(should) == 0 {
		return out, nil
	}
	f := d.listFilter(q, now)
	f.Must = append(f.Must, qc.NewMatchBool(fHasText, true))
	f.Should = should
	err = d.scroll(ctx, f, refFields, nil, leanPage, func(pt *qc.RetrievedPoint) error {
		ref, err := readRef(&qc.ScoredPoint{Id: pt.GetId(), Payload: pt.GetPayload()})
		if err != nil {
			return err
		}
		i, ok := at[ref.Identity]
		if !ok {
			return errNotRecord(pointString(pt.GetId()), "identity")
		}
		out[i] = append(out[i], ref)
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i, w := range writers {
		if j, ok := at[w]; ok && j != i {
			out[i] = out[j] // a writer named twice gets its Refs twice
		} else {
			slices.SortFunc(out[i], driver.CompareRefs)
		}
	}
	return out, nil
}
