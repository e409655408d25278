package backendtest

import (
	"context"
	"maps"
	"slices"
	"sync"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/lexical"
)

// mapDriver is a small, correct driver kept here so the suite can be
// tested on its own: the whole suite must pass against it, and each
// faulty wrapper in suite_selftest_test.go must make a check fail.
type mapDriver struct {
	clock  memory.Clock
	mu     sync.RWMutex
	recs   map[recKey]memory.Record
	dims   int
	closed bool
}

var (
	_ driver.Driver         = (*mapDriver)(nil)
	_ driver.Sweeper        = (*mapDriver)(nil)
	_ driver.Swapper        = (*mapDriver)(nil)
	_ driver.VectorSearcher = (*mapDriver)(nil)
)

// recKey is what a record is stored under: ids are unique per tenant.
type recKey struct{ tenant, id string }

func keyOf(r memory.Record) recKey { return recKey{r.Identity.Tenant, r.ID} }

func newMapDriver(clock memory.Clock) *mapDriver {
	return &mapDriver{clock: clock, recs: make(map[recKey]memory.Record)}
}

func clone(r memory.Record) memory.Record {
	if r.Metadata != nil {
		r.Metadata = maps.Clone(r.Metadata)
	}
	r.Vector = slices.Clone(r.Vector)
	return r
}

func (d *mapDriver) Put(ctx context.Context, recs []memory.Record) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := driver.CheckPut(recs); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return memory.Errorf(memory.ErrClosed, "driver closed")
	}
	dims, err := driver.BatchDims(recs, d.dims)
	if err != nil {
		return err
	}
	for _, r := range recs {
		if old, ok := d.recs[keyOf(r)]; ok && old.Identity != r.Identity {
			return driver.HeldByAnother(r.ID)
		}
	}
	d.dims = dims
	for _, r := range recs {
		d.store(r)
	}
	return nil
}

// store puts r at the stored version plus one. The caller holds d.mu.
func (d *mapDriver) store(r memory.Record) int64 {
	r = clone(r)
	r.Version = d.recs[keyOf(r)].Version + 1
	d.recs[keyOf(r)] = r
	return r.Version
}

func (d *mapDriver) Swap(ctx context.Context, rec memory.Record, expect int64) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := driver.CheckSwap(rec, expect); err != nil {
		return 0, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return 0, memory.Errorf(memory.ErrClosed, "driver closed")
	}
	dims, err := driver.BatchDims([]memory.Record{rec}, d.dims)
	if err != nil {
		return 0, err
	}
	old, ok := d.recs[keyOf(rec)]
	if ok && old.Identity != rec.Identity {
		return 0, driver.HeldByAnother(rec.ID)
	}
	var current int64
	if ok && !old.Expired(d.clock.Now()) {
		current = old.Version
	}
	if current != expect {
		return 0, driver.VersionConflict(rec.ID, expect, current)
	}
	d.dims = dims
	return d.store(rec), nil
}

// read starts a call that reads: it refuses a done context and invalid
// input (invalid, when not nil), then holds d.mu for reading, failing
// with memory.ErrClosed after Close, until unlock runs.
func (d *mapDriver) read(ctx context.Context, invalid error) (unlock func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if invalid != nil {
		return nil, invalid
	}
	d.mu.RLock()
	if d.closed {
		d.mu.RUnlock()
		return nil, memory.Errorf(memory.ErrClosed, "driver closed")
	}
	return d.mu.RUnlock, nil
}

// Search is brute force, in float64, as the suite's reference is.
func (d *mapDriver) Search(ctx context.Context, q driver.Query, vec []float32, k int) ([]driver.Match, error) {
	unlock, err := d.read(ctx, driver.CheckSearch(q, vec, k))
	if err != nil {
		return nil, err
	}
	defer unlock()
	if d.dims == 0 {
		return nil, nil
	}
	if len(vec) != d.dims {
		return nil, driver.DimensionMismatch(len(vec), d.dims)
	}
	all := make([]memory.Record, 0, len(d.recs))
	for _, r := range d.recs {
		all = append(all, clone(r))
	}
	return bruteForce(all, q, vec, k, d.clock.Now()), nil
}

func (d *mapDriver) List(ctx context.Context, q driver.Query) ([]memory.Record, error) {
	unlock, err := d.read(ctx, driver.CheckQuery(q))
	if err != nil {
		return nil, err
	}
	defer unlock()
	now := d.clock.Now()
	var out []memory.Record
	for _, r := range d.recs {
		if q.Matches(r) && !r.Expired(now) {
			out = append(out, clone(r))
		}
	}
	slices.SortFunc(out, func(a, b memory.Record) int {
		if driver.Newer(a, b) {
			return -1
		}
		if driver.Newer(b, a) {
			return 1
		}
		return 0
	})
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, nil
}

func (d *mapDriver) Delete(ctx context.Context, q driver.Query) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := driver.CheckQuery(q); err != nil {
		return 0, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return 0, memory.Errorf(memory.ErrClosed, "driver closed")
	}
	var n int64
	for id, r := range d.recs {
		if q.Matches(r) {
			delete(d.recs, id)
			n++
		}
	}
	return n, nil
}

func (d *mapDriver) Sweep(ctx context.Context) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return 0, memory.Errorf(memory.ErrClosed, "driver closed")
	}
	now := d.clock.Now()
	var n int64
	for id, r := range d.recs {
		if r.Expired(now) {
			delete(d.recs, id)
			n++
		}
	}
	return n, nil
}

func (d *mapDriver) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	return nil
}

// approxText is the map driver with an approximate text search, ranking
// as a search engine outside the process might: BM25 with the statistics
// of the filter's records, but every corpus taken to have an average
// length of approxAvgLength terms, scores rounded to float32, and no
// writer scores. It must pass ApproximateTextSearch and fail
// ExactTextSearch. Its fault, unless approxRight, gets it wrong one way.
type approxText struct {
	*mapDriver
	fault approxFault
}

var _ driver.TextRanker = (*approxText)(nil)

// approxFault is a way of getting approximate text search wrong.
type approxFault int

const (
	approxRight       approxFault = iota
	approxLeak                    // candidates from the whole tenant, whatever else the filter names
	approxPostFilter              // filter a top k of the whole tenant
	approxNewestFirst             // return the top k newest first
	approxNoTerm                  // replace the last result by a record sharing no term
	approxByAge                   // return the k newest candidates, with made-up descending scores
	approxZeroScores              // score every result 0
	approxStoreStats              // statistics of every record of the store
	approxTenantStats             // statistics of every record of the filter's tenant
)

// approxAvgLength is the average length, in terms, approxText takes every
// corpus to have.
const approxAvgLength = 10

func (d *approxText) SearchText(ctx context.Context, q driver.Query, text string, k int) ([]driver.Match, error) {
	unlock, err := d.read(ctx, driver.CheckSearchText(q, text, k))
	if err != nil {
		return nil, err
	}
	defer unlock()
	terms := lexical.Terms(text)
	now := d.clock.Now()
	tenant := memory.Filter{Match: memory.FieldTenant, Identity: memory.Identity{Tenant: q.Filter.Identity.Tenant}}
	counted := q.Filter.Matches
	switch d.fault {
	case approxStoreStats:
		counted = func(memory.Identity) bool { return true }
	case approxTenantStats:
		counted = tenant.Matches
	}
	candidates := q
	if d.fault == approxLeak || d.fault == approxPostFilter {
		candidates.Filter = tenant
	}
	st := lexical.Stats{DF: make([]int, len(terms))}
	type doc struct {
		rec memory.Record
		dl  int
		tf  []int
	}
	var docs []doc
	for _, rec := range d.recs {
		if rec.Content == "" {
			continue
		}
		c := doc{rec: rec, tf: make([]int, len(terms))}
		for t := range lexical.Analyze(rec.Content) {
			c.dl++
			if i := slices.Index(terms, t); i >= 0 {
				c.tf[i]++
			}
		}
		if counted(rec.Identity) {
			st.AddDoc(c.dl, c.tf)
		}
		if !rec.Expired(now) && candidates.Matches(rec) {
			docs = append(docs, c)
		}
	}
	st.Length = st.Docs * approxAvgLength
	sc := lexical.NewScorer(st, lexical.DefaultParams())
	var out, none []driver.Match
	for _, c := range docs {
		m := driver.Match{Record: clone(c.rec), Score: float64(float32(sc.Score(c.dl, c.tf)))}
		if m.Score > 0 {
			out = append(out, m)
		} else {
			none = append(none, m)
		}
	}
	slices.SortFunc(out, func(a, b driver.Match) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return newestFirst(a, b)
	})
	if d.fault == approxByAge {
		slices.SortFunc(out, newestFirst)
	}
	out = out[:min(k, len(out))]
	switch d.fault {
	case approxPostFilter:
		out = slices.DeleteFunc(out, func(m driver.Match) bool { return !q.Matches(m.Record) })
	case approxNewestFirst:
		slices.SortFunc(out, newestFirst)
	case approxNoTerm:
		if len(out) > 0 && len(none) > 0 {
			n := slices.MinFunc(none, newestFirst)
			n.Score = out[len(out)-1].Score
			out[len(out)-1] = n
		}
	case approxByAge:
		for i := range out {
			out[i].Score = float64(len(out) - i)
		}
	case approxZeroScores:
		for i := range out {
			out[i].Score = 0
		}
	}
	return out, nil
}

// newestFirst orders matches by their records' List order.
func newestFirst(a, b driver.Match) int {
	switch {
	case driver.Newer(a.Record, b.Record):
		return -1
	case driver.Newer(b.Record, a.Record):
		return 1
	}
	return 0
}

func (d *approxText) RankText(ctx context.Context, q driver.Query, text string, k int) ([]driver.RefMatch, error) {
	ms, err := d.SearchText(ctx, q, text, k)
	if err != nil {
		return nil, err
	}
	out := make([]driver.RefMatch, len(ms))
	for i, m := range ms {
		out[i] = driver.RefMatch{Ref: driver.RefOf(m.Record), Score: m.Score, WriterScore: m.WriterScore}
	}
	return out, nil
}

func (d *approxText) WriterRefs(ctx context.Context, q driver.Query, writers []memory.Identity) ([][]driver.Ref, error) {
	unlock, err := d.read(ctx, driver.CheckWriterRefs(q, writers))
	if err != nil {
		return nil, err
	}
	defer unlock()
	now := d.clock.Now()
	out := make([][]driver.Ref, len(writers))
	for i, w := range writers {
		for _, rec := range d.recs {
			if rec.Identity == w && rec.Content != "" && !rec.Expired(now) && q.Matches(rec) {
				out[i] = append(out[i], driver.RefOf(rec))
			}
		}
		slices.SortFunc(out[i], driver.CompareRefs)
	}
	return out, nil
}
