package inmem

import (
	"context"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/vecindex"
)

var _ driver.VectorRanker = (*Driver)(nil)

// vectorRefs maps the vecindex.Refs of stored vectors to their entries:
// a Ref is an index into entries, and the Refs of removed vectors are
// reused. Each writer keeps its records' vectors in a vecindex.Set of its
// own, so a search reads only the vectors of the writers its filter
// matches.
type vectorRefs struct {
	entries []*entry
	free    []vecindex.Ref
	// expiring counts the entries with vectors that expire: while there
	// are none, a search that names no kinds, key or ids tests no entry.
	expiring int
}

// add gives e a Ref and puts its vector in its writer's Set. The caller
// holds d.mu for writing and has checked the vector's dimension.
func (v *vectorRefs) add(e *entry) {
	var ref vecindex.Ref
	if n := len(v.free); n > 0 {
		ref = v.free[n-1]
		v.free = v.free[:n-1]
		v.entries[ref] = e
	} else {
		ref = vecindex.Ref(len(v.entries))
		v.entries = append(v.entries, e)
	}
	e.Extra = ref
	if e.HasExpires {
		v.expiring++
	}
	w := e.Writer()
	if w.Extra == nil {
		w.Extra = vecindex.NewSet(len(e.Vector))
	}
	w.Extra.Add(ref, e.Vector)
}

// remove takes e's vector out of its writer's Set and frees its Ref.
func (v *vectorRefs) remove(e *entry) {
	e.Writer().Extra.Remove(e.Extra)
	v.entries[e.Extra] = nil
	v.free = append(v.free, e.Extra)
	if e.HasExpires {
		v.expiring--
	}
}

// Search returns the k live records matching q nearest to vec by cosine
// similarity; see driver.VectorSearcher. The search is exact: it scores
// every vector of the writers q's filter matches, and applies kinds, key,
// ids and expiry to each candidate inside the search.
func (d *Driver) Search(ctx context.Context, q driver.Query, vec []float32, k int) ([]driver.Match, error) {
	var out []driver.Match
	err := d.searchVectors(ctx, q, vec, k, func(hits []vecindex.Hit, entries []*entry) {
		out = make([]driver.Match, len(hits))
		for i, h := range hits {
			out[i] = driver.Match{Record: entries[h.Ref].Record(), Score: float64(h.Score)}
		}
	})
	return out, err
}

// RankVector is Search by reference (driver.VectorRanker): the same
// matches, each with its record's driver.Ref, copying no record.
func (d *Driver) RankVector(ctx context.Context, q driver.Query, vec []float32, k int) ([]driver.RefMatch, error) {
	var out []driver.RefMatch
	err := d.searchVectors(ctx, q, vec, k, func(hits []vecindex.Hit, entries []*entry) {
		out = make([]driver.RefMatch, len(hits))
		for i, h := range hits {
			out[i] = driver.RefMatch{Ref: entries[h.Ref].Ref(), Score: float64(h.Score)}
		}
	})
	return out, err
}

// searchVectors runs the search of Search and, when it found anything,
// passes the hits and the entries their Refs index to found, under d.mu.
func (d *Driver) searchVectors(ctx context.Context, q driver.Query, vec []float32, k int, found func([]vecindex.Hit, []*entry)) error {
	now, err := driver.Admit(ctx, driver.CheckSearch(q, vec, k), d.clock)
	if err != nil {
		return err
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return memory.Errorf(memory.ErrClosed, "in-memory driver is closed")
	}
	if d.dims == 0 {
		return nil
	}
	if len(vec) != d.dims {
		return driver.DimensionMismatch(len(vec), d.dims)
	}
	sets := d.vectorSets(q)
	if len(sets) == 0 {
		return nil
	}
	entries := d.vecs.entries
	var accept func(vecindex.Ref) bool // nil: every row
	if rest := q; d.vecs.expiring > 0 || rest.NamesRest() {
		accept = func(ref vecindex.Ref) bool {
			e := entries[ref]
			return !e.Expired(now) && e.MatchesRest(&rest)
		}
	}
	tie := func(a, b vecindex.Ref) int { return entries[a].Compare(entries[b]) }
	hits, err := vecindex.Search(sets, vec, k, accept, tie)
	if err != nil {
		return memory.Wrap(memory.ErrInvalidArgument, err, "in-memory vector search")
	}
	if len(hits) > 0 {
		found(hits, entries)
	}
	return nil
}

// vectorSets returns the vector Sets of the writers q's filter matches.
// The caller holds d.mu.
func (d *Driver) vectorSets(q driver.Query) []*vecindex.Set {
	var sets []*vecindex.Set
	for w := range d.idx.Writers(q) {
		if w.Extra != nil && w.Extra.Len() > 0 {
			sets = append(sets, w.Extra)
		}
	}
	return sets
}
