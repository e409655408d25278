package backendtest

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// searcher returns d as a driver.VectorSearcher when Config.VectorSearch
// declares it, failing when the declaration and the driver disagree.
func searcher(r reporter, e *env, d driver.Driver) (driver.VectorSearcher, bool) {
	r.Helper()
	vs, ok := d.(driver.VectorSearcher)
	if ok != (e.cfg.VectorSearch != NoVectorSearch) {
		r.Errorf("Config.VectorSearch is %v but the driver (%T) implements driver.VectorSearcher: %v", e.cfg.VectorSearch, d, ok)
	}
	if !ok || e.cfg.VectorSearch == NoVectorSearch {
		skip(r, "the driver does not implement driver.VectorSearcher (Config.VectorSearch is NoVectorSearch): vector search is not checked")
		return nil, false
	}
	return vs, true
}

// cosine is the suite's own cosine similarity, in float64; NaN for
// vectors of different lengths, which then match no expected score.
func cosine(a, b []float32) float64 {
	if len(a) != len(b) {
		return math.NaN()
	}
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}

// bruteForce is the reference search: every live record q matches that
// has a vector, by cosine similarity descending, then List order.
func bruteForce(all []memory.Record, q driver.Query, vec []float32, k int, now time.Time) []driver.Match {
	var out []driver.Match
	for _, rec := range all {
		if rec.Vector == nil || len(rec.Vector) != len(vec) || rec.Expired(now) || !q.Matches(rec) {
			continue
		}
		out = append(out, driver.Match{Record: rec, Score: cosine(rec.Vector, vec)})
	}
	slices.SortStableFunc(out, func(a, b driver.Match) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		case newer(a.Record, b.Record):
			return -1
		case newer(b.Record, a.Record):
			return 1
		}
		return 0
	})
	return out[:min(k, len(out))]
}

// randomVector returns a vector of independent normal values.
func randomVector(rnd *rand.Rand, dims int) []float32 {
	v := make([]float32, dims)
	for i := range v {
		v[i] = float32(rnd.NormFloat64())
	}
	return v
}

// checkVectorSearch checks k-nearest search against the brute-force
// reference on random data, under many filters: exactly (same records,
// same order, the same scores within float32 rounding) for an exact
// driver; recall@10 of at least 0.95 for an approximate one, with every
// result inside the filter. Then isolation when every stored vector is
// identical, ties in List order, the filter applied inside the search
// (the nearest records excluded by kind, key or expiry do not shorten the
// result), dimension mismatches, bad arguments, an empty store, a closed
// driver and done contexts.
func checkVectorSearch(r reporter, e *env) {
	d, clk := e.open(r)
	vs, ok := searcher(r, e, d)
	if !ok {
		return
	}
	ctx := context.Background()
	rnd := e.rand(r)

	// An empty store has no dimension yet: nothing matches any query;
	// unless its dimension is fixed by its configuration.
	empty := tenantQuery("vs-a")
	if e.cfg.FixedVectorDims {
		_, err := vs.Search(ctx, empty, []float32{1, 2, 3}, 5)
		wantErr(r, "Search of an empty store of fixed dimension with a vector of another", err, memory.ErrInvalidArgument)
		if got, err := vs.Search(ctx, empty, randomVector(rnd, VectorDims), 5); noErr(r, "Search of an empty store", err) && len(got) != 0 {
			r.Errorf("Search of an empty store returned %d matches", len(got))
		}
	} else if got, err := vs.Search(ctx, empty, []float32{1, 2, 3}, 5); noErr(r, "Search of an empty store", err) && len(got) != 0 {
		r.Errorf("Search of an empty store returned %d matches", len(got))
	}

	const dims = VectorDims
	all := randomRecords(rnd, 1500, "vs", []memory.Kind{memory.KindFact, memory.KindDocument, memory.KindTurn}, 300, func(rec *memory.Record, i int) {
		// Some ask, some nearly do, some name a speaker: what a
		// driver.Ref holds besides the record's place (RankVector).
		ending := []string{"", "", "", "?", " ？ ”’)] \t\r\n'", "? x", "?)."}[rnd.IntN(7)]
		rec.Content = contentFor(rec.Kind, fmt.Sprintf("record %d", i)+ending)
		if rnd.IntN(3) == 0 {
			rec.Metadata = map[string]string{memory.SpeakerKey: []string{"Ann", "Bo Li", ""}[rnd.IntN(3)]}
		}
		if rnd.IntN(10) > 0 { // a tenth carry no vector
			rec.Vector = randomVector(rnd, dims)
		}
	})
	putAll(r, d, "random vectors", all)
	clk.Advance(time.Minute) // some records have expired
	now := clk.Now()

	filters := searchFilters(r, rnd, all)
	const queries, k = 12, 10
	var hits, wanted int
	for qi := range queries {
		caller := all[rnd.IntN(len(all))].Identity
		vec := randomVector(rnd, dims)
		for _, f := range filters {
			q := f.q(caller)
			what := fmt.Sprintf("query %d, filter %s", qi, f.what)
			got, err := vs.Search(ctx, q, vec, k)
			if !noErr(r, what, err) {
				continue
			}
			want := bruteForce(all, q, vec, k, now)
			if vr, ok := vs.(driver.VectorRanker); ok {
				checkRankVector(r, what, vr, q, vec, k, got)
			}
			for i, m := range got {
				if !q.Matches(m.Record) || m.Record.Expired(now) || m.Record.Vector == nil {
					r.Errorf("%s: result %d (%s of %+v) is outside the query: a leak", what, i, m.Record.ID, m.Record.Identity)
				}
				if ref := cosine(m.Record.Vector, vec); !(math.Abs(ref-m.Score) <= 1e-4) {
					r.Errorf("%s: %s has score %v, its cosine similarity is %v", what, m.Record.ID, m.Score, ref)
				}
				if i > 0 && m.Score > got[i-1].Score+1e-6 {
					r.Errorf("%s: results are not in descending score order at %d", what, i)
				}
			}
			if e.cfg.VectorSearch == ExactVectorSearch {
				sameMatches(r, what, got, want)
				continue
			}
			if len(got) != len(want) {
				r.Errorf("%s: %d results, want %d (the filter must be applied inside the search)", what, len(got), len(want))
			}
			wantIDs := map[string]bool{}
			for _, m := range want {
				wantIDs[m.Record.ID] = true
			}
			for _, m := range got {
				if wantIDs[m.Record.ID] {
					hits++
				}
			}
			wanted += len(want)
		}
	}
	if _, ok := vs.(driver.VectorRanker); !ok {
		r.Logf("the driver does not implement driver.VectorRanker: RankVector is not checked")
	}
	if e.cfg.VectorSearch == ApproximateVectorSearch {
		recall := float64(hits) / float64(max(wanted, 1))
		r.Logf("recall@%d over %d searches: %.3f", k, queries*len(filters), recall)
		if recall < 0.95 {
			r.Errorf("recall@%d is %.3f, want at least 0.95", k, recall)
		}
	}

	// Results are whole records.
	one := all[0]
	for _, rec := range all {
		if rec.Vector != nil && !rec.Expired(now) {
			one = rec
			break
		}
	}
	q := tenantQuery(one.Identity.Tenant)
	q.IDs = []string{one.ID}
	if got, err := vs.Search(ctx, q, one.Vector, 1); noErr(r, "Search for one record by its own vector", err) {
		if len(got) != 1 {
			r.Errorf("Search for one record by its own vector returned %d matches, want 1", len(got))
		} else {
			sameRecords(r, "the record a Search returns", []memory.Record{got[0].Record}, []memory.Record{one})
			if math.Abs(got[0].Score-1) > 1e-5 {
				r.Errorf("a vector's similarity to itself is %v, want 1", got[0].Score)
			}
		}
	}

	// A record replaced after the searches above, which loaded whatever
	// copy of the vectors a driver keeps, has its new Ref in RankVector.
	if vr, ok := vs.(driver.VectorRanker); ok {
		again := one
		again.Content = contentFor(again.Kind, "replaced after the searches ?")
		again.Metadata = map[string]string{memory.SpeakerKey: "Cy"}
		putAll(r, d, "a record replaced after the searches", []memory.Record{again})
		if got, err := vr.RankVector(ctx, q, again.Vector, 1); noErr(r, "RankVector of a record replaced after the searches", err) {
			if len(got) != 1 || !sameRef(got[0].Ref, driver.RefOf(again)) {
				r.Errorf("RankVector of a record replaced after the searches = %+v, want its Ref %+v", got, driver.RefOf(again))
			}
		}
	}

	checkSearchErrors(r, e, d, vs, dims)
}

// sameMatches compares an exact driver's result with the reference: the
// same records in the same order, except that records whose reference
// scores differ by less than 1e-5 may trade places (float32 rounding).
func sameMatches(r reporter, what string, got, want []driver.Match) {
	r.Helper()
	if len(got) != len(want) {
		r.Errorf("%s: %d results, want %d: got %s, want %s", what, len(got), len(want), matchIDs(got), matchIDs(want))
		return
	}
	for i := range got {
		if got[i].Record.ID == want[i].Record.ID {
			continue
		}
		j := slices.IndexFunc(want, func(m driver.Match) bool { return m.Record.ID == got[i].Record.ID })
		if j < 0 || math.Abs(want[j].Score-want[i].Score) > 1e-5 {
			r.Errorf("%s: result %d is %s, want %s: got %s, want %s", what, i, got[i].Record.ID, want[i].Record.ID, matchIDs(got), matchIDs(want))
			return
		}
	}
}

func matchIDList(ms []driver.Match) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Record.ID
	}
	return out
}

func matchIDs(ms []driver.Match) string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = fmt.Sprintf("%s(%.6f)", m.Record.ID, m.Score)
	}
	return fmt.Sprint(out)
}

// checkSearchErrors covers the failures of Search on a driver holding
// vectors of dims dimensions, closing it at the end.
func checkSearchErrors(r reporter, e *env, d driver.Driver, vs driver.VectorSearcher, dims int) {
	ctx := context.Background()
	q := tenantQuery("vs-a")
	good := make([]float32, dims)
	good[0] = 1
	for _, c := range []struct {
		what string
		q    driver.Query
		vec  []float32
		k    int
		kind error
	}{
		{"a query vector of another dimension", q, []float32{1, 2}, 5, memory.ErrInvalidArgument},
		{"k = 0", q, good, 0, memory.ErrInvalidArgument},
		{"k above the limit", q, good, driver.MaxSearchK + 1, memory.ErrInvalidArgument},
		{"a NaN in the query vector", q, append([]float32{float32(math.NaN())}, good[1:]...), 5, memory.ErrInvalidArgument},
		{"an all-zero query vector", q, make([]float32, dims), 5, memory.ErrInvalidArgument},
		{"an unscoped query", driver.Query{}, good, 5, memory.ErrIncompleteScope},
	} {
		_, err := vs.Search(ctx, c.q, c.vec, c.k)
		wantErr(r, "Search with "+c.what, err, c.kind)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := vs.Search(cancelled, q, good, 5); err != context.Canceled {
		r.Errorf("Search with a cancelled context: got %v, want context.Canceled unchanged", err)
	}
	noErr(r, "Close", d.Close())
	_, err := vs.Search(ctx, q, good, 5)
	wantErr(r, "Search after Close", err, memory.ErrClosed)
}

// checkVectorSearchIsolation stores records whose vectors are all the
// same in several tenants and sessions, so that only the scope filter
// separates them, and checks that every search returns k records of the
// caller's scope only — for an exact driver, in List order, since every
// score ties — and that the nearest records, when excluded by kind, key
// or expiry, are passed over rather than shortening the result.
func checkVectorSearchIsolation(r reporter, e *env) {
	d, clk := e.open(r)
	vs, ok := searcher(r, e, d)
	if !ok {
		return
	}
	ctx := context.Background()
	same := []float32{0.25, -1, 0.5, 2, 0, 1, -0.75, 0.125}
	var all []memory.Record
	for _, tenant := range []string{"iso-a", "iso-ab", "iso-b", ""} {
		for _, session := range []string{"s1", "s2"} {
			for i := range 30 {
				id := memory.Identity{Tenant: tenant, User: "u", Session: session}
				all = append(all, memory.Record{
					ID: fmt.Sprintf("iso-%s-%s-%02d", tenant, session, i), Kind: memory.KindFact, Identity: id,
					Content: "same", Created: t0.Add(time.Duration(i%7) * time.Second), Vector: same,
				})
			}
		}
	}
	mustPut(r, d, "identical vectors", all)
	for _, tenant := range []string{"iso-a", "iso-ab", "iso-b", ""} {
		for _, level := range []memory.Level{memory.LevelSession, memory.LevelUser} {
			caller := memory.Identity{Tenant: tenant, User: "u", Session: "s2"}
			q := driver.Query{Filter: mustFilter(r, memory.Posture{}, caller, level)}
			what := fmt.Sprintf("identical vectors, tenant %q at level %s", tenant, level)
			got, err := vs.Search(ctx, q, same, 10)
			if !noErr(r, what, err) {
				continue
			}
			if len(got) != 10 {
				r.Errorf("%s: %d results, want 10", what, len(got))
			}
			for _, m := range got {
				if !q.Matches(m.Record) {
					r.Errorf("%s: %s of %+v leaked into the result", what, m.Record.ID, m.Record.Identity)
				}
			}
			if want := bruteForce(all, q, same, 10, clk.Now()); e.cfg.VectorSearch == ExactVectorSearch && !slices.Equal(matchIDList(got), matchIDList(want)) {
				// Every score ties: the order is List order, exactly.
				r.Errorf("%s: got %s, want %s (equal scores rank in List order: Created descending, then ID descending)", what, matchIDs(got), matchIDs(want))
			}
		}
	}

	// The records nearest the query are excluded by kind, key or expiry;
	// the search still returns k records that pass.
	id := memory.Identity{Tenant: "near", User: "u", Session: "s"}
	query := []float32{1, 0, 0, 0, 0, 0, 0, 0}
	var recs []memory.Record
	for i := range 40 {
		rec := memory.Record{ID: fmt.Sprintf("near-%02d", i), Kind: memory.KindTurn, Identity: id, Key: "other",
			Content: "near", Created: t0, Vector: []float32{1, 0.001 * float32(i), 0, 0, 0, 0, 0, 0.5}}
		switch i % 3 {
		case 0:
			rec.Kind = memory.KindFact // excluded by kind
		case 1:
			rec.Key = "k" // matches the key but expires
			rec.Kind = memory.KindFact
			rec.Expires = t0.Add(time.Second)
		}
		recs = append(recs, rec)
	}
	for i := range 20 {
		recs = append(recs, memory.Record{ID: fmt.Sprintf("far-%02d", i), Kind: memory.KindFact, Identity: id, Key: "k",
			Content: "far", Created: t0, Vector: []float32{0.1, 1, float32(i), 0, 0, 0, 0, 0}})
	}
	mustPut(r, d, "near and far records", recs)
	clk.Advance(time.Minute)
	q := driver.Query{Filter: mustFilter(r, memory.Posture{}, id, memory.LevelSession), Kinds: []memory.Kind{memory.KindFact}, Key: "k"}
	got, err := vs.Search(ctx, q, query, 10)
	if noErr(r, "Search whose nearest records are filtered out", err) {
		if len(got) != 10 {
			r.Errorf("Search whose nearest records are filtered out returned %d results, want 10: the filter must apply inside the search", len(got))
		}
		for _, m := range got {
			if m.Record.Content != "far" {
				r.Errorf("Search returned %s, which its kind, key or expiry excludes", m.Record.ID)
			}
		}
	}
}

// checkRankVector checks that RankVector returns what Search returned
// (got), by reference (see sameRanking); a vector search has no writer
// scores.
func checkRankVector(r reporter, what string, vr driver.VectorRanker, q driver.Query, vec []float32, k int, got []driver.Match) {
	r.Helper()
	ranked, err := vr.RankVector(context.Background(), q, vec, k)
	if noErr(r, what+": RankVector", err) {
		sameRanking(r, what, "RankVector", "Search", ranked, got)
	}
}
