package recall

import (
	"context"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// source is where a recall reads its candidates: their text ranking by
// reference, the turns of their sessions, and at the end the records of
// the few it returns. A recall scores hundreds of candidates to keep ten;
// over a driver.TextRanker it reads only the ten records.
type source interface {
	// rank is driver.TextRanker's RankText.
	rank(ctx context.Context, dq driver.Query, text string, n int) ([]driver.RefMatch, error)
	// writerRefs is driver.TextRanker's WriterRefs.
	writerRefs(ctx context.Context, dq driver.Query, writers []memory.Identity) ([][]driver.Ref, error)
	// read returns the records dq matches under ids (at most
	// memory.MaxBatch), by id; a record gone since is missing.
	read(ctx context.Context, dq driver.Query, ids []string) (map[string]memory.Record, error)
}

// newSource returns the source of one recall over d, which has text
// search: d itself when it ranks by reference, else one that keeps the
// records its text search and lists return, so that nothing is read
// twice.
func newSource(d driver.Driver) source {
	if tr, ok := d.(driver.TextRanker); ok {
		return rankerSource{d, tr}
	}
	return &searchSource{d: d, ts: d.(driver.TextSearcher)}
}

// rankerSource is the source of a driver.TextRanker.
type rankerSource struct {
	d  driver.Driver
	tr driver.TextRanker
}

func (s rankerSource) rank(ctx context.Context, dq driver.Query, text string, n int) ([]driver.RefMatch, error) {
	return s.tr.RankText(ctx, dq, text, n)
}

func (s rankerSource) writerRefs(ctx context.Context, dq driver.Query, writers []memory.Identity) ([][]driver.Ref, error) {
	return s.tr.WriterRefs(ctx, dq, writers)
}

func (s rankerSource) read(ctx context.Context, dq driver.Query, ids []string) (map[string]memory.Record, error) {
	return listByID(ctx, s.d, dq, ids)
}

// listByID lists the records dq matches under ids, by id.
func listByID(ctx context.Context, d driver.Driver, dq driver.Query, ids []string) (map[string]memory.Record, error) {
	out := make(map[string]memory.Record, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	dq.IDs = ids
	recs, err := d.List(ctx, dq)
	if err != nil {
		return nil, err
	}
	for _, rec := range recs {
		out[rec.ID] = rec
	}
	return out, nil
}

// searchSource is the source of a driver with text search alone: its
// SearchText returns whole records, and the turns of a session are one
// List each. It keeps every record it was given, and finds them by id
// only when read asks: a recall reads ten of hundreds.
type searchSource struct {
	d  driver.Driver
	ts driver.TextSearcher
	// matches and recs are the records given, as they came, in the
	// matches of a search and a List's records: copying hundreds of
	// records costs a recall more than its search.
	matches [][]driver.Match
	recs    [][]memory.Record
	at      map[string]*memory.Record // the records by id, built by read
}

func (s *searchSource) rank(ctx context.Context, dq driver.Query, text string, n int) ([]driver.RefMatch, error) {
	matches, err := s.ts.SearchText(ctx, dq, text, n)
	if err != nil {
		return nil, err
	}
	out := make([]driver.RefMatch, len(matches))
	for i := range matches {
		m := &matches[i]
		out[i] = driver.RefMatch{Ref: driver.RefOf(m.Record), Score: m.Score, WriterScore: m.WriterScore}
	}
	s.matches, s.at = append(s.matches, matches), nil
	return out, nil
}

func (s *searchSource) writerRefs(ctx context.Context, dq driver.Query, writers []memory.Identity) ([][]driver.Ref, error) {
	if err := driver.CheckWriterRefs(dq, writers); err != nil {
		return nil, err
	}
	out := make([][]driver.Ref, len(writers))
	for i, w := range writers {
		if !dq.Filter.Matches(w) {
			continue
		}
		wq := dq // the query, narrowed to exactly the writer
		wq.Filter = memory.Filter{Match: memory.AllFields, Identity: w}
		recs, err := s.d.List(ctx, wq)
		if err != nil {
			return nil, err
		}
		refs := make([]driver.Ref, 0, len(recs))
		for _, rec := range recs {
			if rec.Content != "" {
				refs = append(refs, driver.RefOf(rec))
			}
		}
		out[i] = refs
		s.recs, s.at = append(s.recs, recs), nil
	}
	return out, nil
}

func (s *searchSource) read(ctx context.Context, dq driver.Query, ids []string) (map[string]memory.Record, error) {
	if s.at == nil {
		s.at = map[string]*memory.Record{}
		for _, ms := range s.matches {
			for i := range ms {
				s.at[ms[i].Record.ID] = &ms[i].Record
			}
		}
		for _, recs := range s.recs {
			for i := range recs {
				s.at[recs[i].ID] = &recs[i]
			}
		}
	}
	out := make(map[string]memory.Record, len(ids))
	var missing []string
	for _, id := range ids {
		if rec, ok := s.at[id]; ok {
			out[id] = *rec
		} else {
			missing = append(missing, id)
		}
	}
	more, err := listByID(ctx, s.d, dq, missing)
	for id, rec := range more {
		out[id] = rec
	}
	return out, err
}
