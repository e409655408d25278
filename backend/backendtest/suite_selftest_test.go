package backendtest

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/inmem"
)

// TestRunMapDriver runs the whole suite against a correct driver: it must
// pass.
func TestRunMapDriver(t *testing.T) {
	Run(t, Config{
		NewDriver:    func(t *testing.T, clock memory.Clock) driver.Driver { return newMapDriver(clock) },
		Sweeper:      true,
		Swapper:      true,
		VectorSearch: ExactVectorSearch,
	})
}

// recorder is a reporter that records failures instead of failing the
// test, so a test can assert that a check fails. It keeps what the check
// logs too.
type recorder struct {
	mu     sync.Mutex
	errors []string
	logs   []string
}

type fatalStop struct{}

func (r *recorder) Helper() {}
func (r *recorder) Logf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}
func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	panic(fatalStop{})
}

// runRecorded runs the named check against cfg and returns what it
// reported.
func runRecorded(t *testing.T, cfg Config, name string) []string {
	t.Helper()
	errs, _ := runLogged(t, cfg, name)
	return errs
}

// runLogged runs the named check against cfg and returns what it
// reported and what it logged.
func runLogged(t *testing.T, cfg Config, name string) (errs, logs []string) {
	t.Helper()
	i := slices.IndexFunc(checks, func(c check) bool { return c.name == name })
	if i < 0 {
		t.Fatalf("no check named %q", name)
	}
	rec := &recorder{}
	func() {
		defer func() {
			if p := recover(); p != nil {
				if _, ok := p.(fatalStop); !ok {
					panic(p)
				}
			}
		}()
		checks[i].fn(rec, &env{cfg: cfg, t: t, seed: 42, name: name})
	}()
	return rec.errors, rec.logs
}

// leaky wraps a correct driver and drops the user condition from every
// filter before passing the query on: the classic isolation bug.
type leaky struct{ driver.Driver }

func (l leaky) List(ctx context.Context, q driver.Query) ([]memory.Record, error) {
	q.Filter.Match &^= memory.FieldUser
	return l.Driver.List(ctx, q)
}

func (l leaky) Delete(ctx context.Context, q driver.Query) (int64, error) {
	q.Filter.Match &^= memory.FieldUser
	return l.Driver.Delete(ctx, q)
}

// TestIsolationCatchesLeakyWrapper runs the isolation check against two
// correct drivers, bare and wrapped in leaky: bare it must pass, wrapped it
// must report leaks.
func TestIsolationCatchesLeakyWrapper(t *testing.T) {
	for name, open := range map[string]func(memory.Clock) driver.Driver{
		"map":   func(c memory.Clock) driver.Driver { return newMapDriver(c) },
		"inmem": func(c memory.Clock) driver.Driver { return inmem.New(inmem.Options{Clock: c}) },
	} {
		t.Run(name, func(t *testing.T) {
			bare := Config{NewDriver: func(_ *testing.T, c memory.Clock) driver.Driver { return open(c) }}
			if errs := runRecorded(t, bare, "Isolation"); len(errs) != 0 {
				t.Fatalf("the isolation check fails on the bare driver: %s", errs[0])
			}
			wrapped := Config{NewDriver: func(_ *testing.T, c memory.Clock) driver.Driver { return leaky{open(c)} }}
			errs := runRecorded(t, wrapped, "Isolation")
			if len(errs) == 0 {
				t.Fatal("the isolation check did not notice a driver that drops the user condition")
			}
			leaks := 0
			for _, e := range errs {
				if strings.Contains(e, "unexpected [") {
					leaks++
				}
			}
			if leaks == 0 {
				t.Errorf("no failure reports a leaked record; first failure: %s", errs[0])
			}
			t.Logf("%d failures reported, %d of them leaks; first: %s", len(errs), leaks, errs[0])
		})
	}
}

// faulty wraps the correct map driver and breaks one rule of the contract
// per option. Its List and Delete reimplement matching so a scope rule can
// be broken precisely.
type faulty struct {
	*mapDriver
	match       func(f memory.Filter, w memory.Identity) bool // nil: exact
	idAscending bool                                          // break ties by ID ascending
	limitFirst  bool                                          // apply Limit before hiding expired records
	ignoreLimit bool
	deleteIDs   bool // Delete ignores IDs
	deleteCap   int  // Delete removes at most this many records
	nonAtomic   bool // Put stores the valid records of a failing batch
	noConflict  bool // Put replaces records of other identities
	globalIDs   bool // Put refuses an id another tenant holds, as ids unique per store would
	noClose     bool // Close does nothing
	ignoreCtx   bool // context is never checked
	alias       bool // List returns the stored metadata maps
	truncate    time.Duration
	unscoped    bool // no CheckQuery
	noVersions  bool // Put leaves every record at version 1
	blindSwap   bool // Swap stores whatever the stored version
	searchFault searchFault
}

// searchFault is a way of getting vector search wrong.
type searchFault int

const (
	searchRight        searchFault = iota
	searchPostFilter               // filter a store-wide top k
	searchIgnoreExpiry             // return expired records
	searchTiesByID                 // break score ties by ascending id
	searchNoScope                  // search the whole tenant
)

func exactMatch(f memory.Filter, w memory.Identity) bool {
	for _, fl := range []memory.Field{memory.FieldTenant, memory.FieldUser, memory.FieldAgent, memory.FieldInstance, memory.FieldSquad, memory.FieldSession} {
		if f.Match.Has(fl) && f.Identity.Get(fl) != w.Get(fl) {
			return false
		}
	}
	return true
}

// matchWith returns a matcher that compares fields with eq.
func matchWith(eq func(field memory.Field, filter, stored string) bool) func(memory.Filter, memory.Identity) bool {
	return func(f memory.Filter, w memory.Identity) bool {
		for _, fl := range []memory.Field{memory.FieldTenant, memory.FieldUser, memory.FieldAgent, memory.FieldInstance, memory.FieldSquad, memory.FieldSession} {
			if f.Match.Has(fl) && !eq(fl, f.Identity.Get(fl), w.Get(fl)) {
				return false
			}
		}
		return true
	}
}

func (d *faulty) matches(q driver.Query, r memory.Record, forDelete bool) bool {
	m := d.match
	if m == nil {
		m = exactMatch
	}
	if !m(q.Filter, r.Identity) {
		return false
	}
	if q.Key != "" && r.Key != q.Key {
		return false
	}
	if len(q.Kinds) > 0 && !slices.Contains(q.Kinds, r.Kind) {
		return false
	}
	if len(q.IDs) > 0 && !(forDelete && d.deleteIDs) && !slices.Contains(q.IDs, r.ID) {
		return false
	}
	return true
}

func (d *faulty) check(ctx context.Context, q *driver.Query) error {
	if !d.ignoreCtx {
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	if q != nil && !d.unscoped {
		if err := driver.CheckQuery(*q); err != nil {
			return err
		}
	}
	if d.closed {
		return memory.Errorf(memory.ErrClosed, "closed")
	}
	return nil
}

func (d *faulty) Put(ctx context.Context, recs []memory.Record) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.check(ctx, nil); err != nil {
		return err
	}
	var failed error
	if err := driver.CheckPut(recs); err != nil {
		if !d.nonAtomic || len(recs) > memory.MaxBatch {
			return err
		}
		failed = err
	}
	dims, err := driver.BatchDims(recs, d.dims)
	if err != nil {
		return err
	}
	d.dims = dims
	if !d.noConflict {
		for _, r := range recs {
			if old, ok := d.recs[keyOf(r)]; ok && old.Identity != r.Identity {
				return driver.HeldByAnother(r.ID)
			}
			if d.globalIDs {
				for k, old := range d.recs {
					if k.id == r.ID && old.Identity != r.Identity {
						return memory.Errorf(memory.ErrConflict, "id %q belongs to another identity", r.ID)
					}
				}
			}
		}
	}
	for _, r := range recs {
		if r.Validate() != nil {
			continue
		}
		if d.truncate > 0 {
			r.Created = r.Created.Truncate(d.truncate)
		}
		if d.noVersions {
			delete(d.recs, keyOf(r))
		}
		d.store(r)
	}
	return failed
}

func (d *faulty) List(ctx context.Context, q driver.Query) ([]memory.Record, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if err := d.check(ctx, &q); err != nil {
		return nil, err
	}
	now := d.clock.Now()
	var out []memory.Record
	for _, r := range d.recs {
		if d.matches(q, r, false) && (d.limitFirst || !r.Expired(now)) {
			if !d.alias {
				r = clone(r)
			}
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b memory.Record) int {
		if c := b.Created.Compare(a.Created); c != 0 {
			return c
		}
		if d.idAscending {
			return strings.Compare(a.ID, b.ID)
		}
		return strings.Compare(b.ID, a.ID)
	})
	if q.Limit > 0 && len(out) > q.Limit && !d.ignoreLimit {
		out = out[:q.Limit]
	}
	if d.limitFirst {
		out = slices.DeleteFunc(out, func(r memory.Record) bool { return r.Expired(now) })
	}
	return out, nil
}

func (d *faulty) Delete(ctx context.Context, q driver.Query) (int64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.check(ctx, &q); err != nil {
		return 0, err
	}
	var n int64
	keys := slices.SortedFunc(maps.Keys(d.recs), func(a, b recKey) int {
		return cmp.Or(strings.Compare(a.tenant, b.tenant), strings.Compare(a.id, b.id))
	})
	for _, k := range keys {
		if d.deleteCap > 0 && n == int64(d.deleteCap) {
			break
		}
		if d.matches(q, d.recs[k], true) {
			delete(d.recs, k)
			n++
		}
	}
	return n, nil
}

func (d *faulty) Swap(ctx context.Context, rec memory.Record, expect int64) (int64, error) {
	if !d.blindSwap {
		return d.mapDriver.Swap(ctx, rec, expect)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.check(ctx, nil); err != nil {
		return 0, err
	}
	if err := driver.CheckSwap(rec, expect); err != nil {
		return 0, err
	}
	return d.store(rec), nil
}

func (d *faulty) Search(ctx context.Context, q driver.Query, vec []float32, k int) ([]driver.Match, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if err := d.check(ctx, &q); err != nil {
		return nil, err
	}
	if err := driver.CheckSearch(q, vec, k); err != nil {
		return nil, err
	}
	if d.dims != 0 && len(vec) != d.dims {
		return nil, driver.DimensionMismatch(len(vec), d.dims)
	}
	now := d.clock.Now()
	var all []memory.Record
	for _, r := range d.recs {
		all = append(all, clone(r))
	}
	switch d.searchFault {
	case searchPostFilter:
		var out []driver.Match
		for _, m := range bruteForce(all, tenantQuery(q.Filter.Identity.Tenant), vec, k, now) {
			if q.Matches(m.Record) {
				out = append(out, m)
			}
		}
		return out, nil
	case searchIgnoreExpiry:
		return bruteForce(all, q, vec, k, time.Time{}), nil
	case searchTiesByID:
		out := bruteForce(all, q, vec, k, now)
		slices.SortStableFunc(out, func(a, b driver.Match) int {
			if a.Score != b.Score {
				if a.Score > b.Score {
					return -1
				}
				return 1
			}
			return strings.Compare(a.Record.ID, b.Record.ID)
		})
		return out, nil
	case searchNoScope:
		return bruteForce(all, tenantQuery(q.Filter.Identity.Tenant), vec, k, now), nil
	}
	return bruteForce(all, q, vec, k, now), nil
}

func (d *faulty) Close() error {
	if !d.noClose {
		return d.mapDriver.Close()
	}
	return nil
}

// TestChecksCatchFaults proves the suite can fail: each faulty driver
// breaks one rule, and the checks named must report it.
func TestChecksCatchFaults(t *testing.T) {
	frozen := func(memory.Clock) memory.Clock { return func() time.Time { return time.Time{} } }
	cases := []struct {
		name   string
		fault  faulty
		clock  func(memory.Clock) memory.Clock // replaces the suite's clock
		sweep  *bool                           // overrides the Sweeper declaration
		checks []string
	}{
		{name: "drops the user condition", fault: faulty{match: func(f memory.Filter, w memory.Identity) bool {
			f.Match &^= memory.FieldUser
			return exactMatch(f, w)
		}}, checks: []string{"Isolation", "ForgetEveryLevel", "ForgetLarge", "ListNarrowing", "DeleteNarrowing"}},
		{name: "drops the session when it matches an instance", fault: faulty{match: func(f memory.Filter, w memory.Identity) bool {
			if f.Match.Has(memory.FieldInstance) {
				f.Match &^= memory.FieldSession
			}
			return exactMatch(f, w)
		}}, checks: []string{"Isolation"}},
		{name: "treats the empty tenant as a wildcard", fault: faulty{match: matchWith(func(fl memory.Field, f, s string) bool {
			return f == s || (fl == memory.FieldTenant && f == "")
		})}, checks: []string{"Isolation", "ForgetLarge"}},
		{name: "matches prefixes", fault: faulty{match: matchWith(func(_ memory.Field, f, s string) bool {
			return strings.HasPrefix(s, f)
		})}, checks: []string{"Isolation", "ForgetEveryLevel"}},
		{name: "folds case", fault: faulty{match: matchWith(func(_ memory.Field, f, s string) bool {
			return strings.EqualFold(f, s)
		})}, checks: []string{"Isolation"}},
		{name: "breaks ties by ascending id", fault: faulty{idAscending: true}, checks: []string{"Ordering"}},
		{name: "ignores Limit", fault: faulty{ignoreLimit: true}, checks: []string{"ListNarrowing", "Ordering"}},
		{name: "applies Limit before expiry", fault: faulty{limitFirst: true}, checks: []string{"Expiry"}},
		{name: "Delete ignores IDs", fault: faulty{deleteIDs: true}, checks: []string{"DeleteNarrowing"}},
		{name: "Delete stops after a page", fault: faulty{deleteCap: memory.MaxBatch}, checks: []string{"ForgetLarge"}},
		{name: "Put is not atomic", fault: faulty{nonAtomic: true}, checks: []string{"BadRecords"}},
		{name: "Put ignores conflicts", fault: faulty{noConflict: true}, checks: []string{"Upsert", "TenantIDs"}},
		{name: "keeps ids unique across tenants", fault: faulty{globalIDs: true}, checks: []string{"TenantIDs"}},
		{name: "Close does nothing", fault: faulty{noClose: true}, checks: []string{"Close"}},
		{name: "ignores the context", fault: faulty{ignoreCtx: true}, checks: []string{"CancelledContext"}},
		{name: "aliases stored metadata", fault: faulty{alias: true}, checks: []string{"RoundTrip"}},
		{name: "keeps microseconds only", fault: faulty{truncate: time.Microsecond}, checks: []string{"RoundTrip", "Ordering"}},
		{name: "accepts unscoped queries", fault: faulty{unscoped: true}, checks: []string{"BadQueries"}},
		{name: "never expires", clock: frozen, checks: []string{"Expiry", "Sweep"}},
		{name: "hides its Sweeper", sweep: new(bool), checks: []string{"Sweep"}},
		{name: "keeps no versions", fault: faulty{noVersions: true}, checks: []string{"Versions", "Swap"}},
		{name: "swaps without comparing versions", fault: faulty{blindSwap: true}, checks: []string{"Swap", "SwapRace"}},
		{name: "filters a store-wide top k", fault: faulty{searchFault: searchPostFilter}, checks: []string{"VectorSearch", "VectorSearchIsolation"}},
		{name: "searches expired records", fault: faulty{searchFault: searchIgnoreExpiry}, checks: []string{"VectorSearch", "VectorSearchIsolation"}},
		{name: "breaks score ties by ascending id", fault: faulty{searchFault: searchTiesByID}, checks: []string{"VectorSearchIsolation"}},
		{name: "searches the whole tenant", fault: faulty{searchFault: searchNoScope}, checks: []string{"VectorSearch", "VectorSearchIsolation"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cfg := Config{
				NewDriver: func(t *testing.T, clock memory.Clock) driver.Driver {
					if c.clock != nil {
						clock = c.clock(clock)
					}
					f := c.fault
					f.mapDriver = newMapDriver(clock)
					return &f
				},
				Sweeper:      true,
				Swapper:      true,
				VectorSearch: ExactVectorSearch,
			}
			if c.sweep != nil {
				cfg.Sweeper = *c.sweep
			}
			for _, name := range c.checks {
				errs := runRecorded(t, cfg, name)
				if len(errs) == 0 {
					t.Errorf("check %s did not notice a driver that %s", name, c.name)
					continue
				}
				t.Logf("check %s: %d failures, first: %s", name, len(errs), errs[0])
			}
		})
	}
}

// textFault is an in-memory driver whose text search is wrong one way.
type textFault struct {
	*inmem.Driver
	fault string
}

func (f *textFault) SearchText(ctx context.Context, q driver.Query, text string, k int) ([]driver.Match, error) {
	wide := q
	wide.Filter = memory.Filter{Match: memory.FieldTenant, Identity: memory.Identity{Tenant: q.Filter.Identity.Tenant}}
	switch f.fault {
	case "post-filter":
		return keepMatching(f.Driver.SearchText(ctx, wide, text, k))(q)
	case "tenant statistics":
		return keepMatching(f.Driver.SearchText(ctx, wide, text, driver.MaxSearchK))(q, k)
	case "ties by ascending id":
		ms, err := f.Driver.SearchText(ctx, q, text, k)
		slices.SortStableFunc(ms, func(a, b driver.Match) int {
			if a.Score != b.Score {
				return 0
			}
			return strings.Compare(a.Record.ID, b.Record.ID)
		})
		return ms, err
	case "writer score of the record alone":
		ms, err := f.Driver.SearchText(ctx, q, text, k)
		for i := range ms {
			ms[i].WriterScore = ms[i].Score
		}
		return ms, err
	}
	return f.Driver.SearchText(ctx, q, text, k)
}

// keepMatching returns a function that keeps, of ms, the matches of q, at
// most the first of limits.
func keepMatching(ms []driver.Match, err error) func(q driver.Query, limits ...int) ([]driver.Match, error) {
	return func(q driver.Query, limits ...int) ([]driver.Match, error) {
		var out []driver.Match
		for _, m := range ms {
			if q.Filter.Matches(m.Record.Identity) && (len(limits) == 0 || len(out) < limits[0]) {
				out = append(out, m)
			}
		}
		return out, err
	}
}

// TestTextSearchCatchesFaults checks that the TextSearch check fails for
// text searches that filter a store-wide top k, score with statistics of
// records outside the filter, break ties against List order, or score a
// record's writer by the record alone.
func TestTextSearchCatchesFaults(t *testing.T) {
	for _, fault := range []string{"post-filter", "tenant statistics", "ties by ascending id", "writer score of the record alone"} {
		t.Run(fault, func(t *testing.T) {
			t.Parallel()
			cfg := Config{
				NewDriver: func(t *testing.T, clock memory.Clock) driver.Driver {
					return &textFault{Driver: inmem.New(inmem.Options{Clock: clock}), fault: fault}
				},
				TextSearch: ExactTextSearch,
			}
			errs := runRecorded(t, cfg, "TextSearch")
			if len(errs) == 0 {
				t.Fatalf("the TextSearch check did not notice a text search that %s", fault)
			}
			t.Logf("%d failures, first: %s", len(errs), errs[0])
		})
	}
}

// TestApproximateTextSearch checks the ApproximateTextSearch declaration:
// a driver that ranks exactly passes it, and so does approxText, which
// ranks with a fixed average length and float32 scores and must fail
// ExactTextSearch; each fault of approxText must fail it with the failure
// that names the fault.
func TestApproximateTextSearch(t *testing.T) {
	approx := func(fault approxFault, mode TextSearch) Config {
		return Config{
			NewDriver: func(t *testing.T, clock memory.Clock) driver.Driver {
				return &approxText{mapDriver: newMapDriver(clock), fault: fault}
			},
			TextSearch: mode,
		}
	}
	recall := func(logs []string) string {
		for _, l := range logs {
			if strings.HasPrefix(l, "recall against the reference") {
				return l
			}
		}
		return "no recall logged"
	}
	t.Run("exact driver", func(t *testing.T) {
		t.Parallel()
		cfg := Config{
			NewDriver: func(t *testing.T, clock memory.Clock) driver.Driver {
				return inmem.New(inmem.Options{Clock: clock})
			},
			TextSearch: ApproximateTextSearch,
		}
		errs, logs := runLogged(t, cfg, "TextSearch")
		if len(errs) != 0 {
			t.Fatalf("the approximate TextSearch check fails on the in-memory driver, which ranks exactly: %d failures, first: %s", len(errs), errs[0])
		}
		t.Log(recall(logs))
	})
	t.Run("fixed average length", func(t *testing.T) {
		t.Parallel()
		errs, logs := runLogged(t, approx(approxRight, ApproximateTextSearch), "TextSearch")
		if len(errs) != 0 {
			t.Fatalf("the approximate TextSearch check fails on a driver ranking with a fixed average length: %d failures, first: %s", len(errs), errs[0])
		}
		t.Log(recall(logs))
		errs = runRecorded(t, approx(approxRight, ExactTextSearch), "TextSearch")
		if len(errs) == 0 {
			t.Fatal("the exact TextSearch check passes a driver ranking with a fixed average length and float32 scores")
		}
		t.Logf("as ExactTextSearch: %d failures, first: %s", len(errs), errs[0])
	})
	for _, c := range []struct {
		name  string
		fault approxFault
		want  string // in a failure message
	}{
		{"returns records outside the filter", approxLeak, "is outside the query: a leak"},
		{"filters a top k of the whole tenant", approxPostFilter, "as many as the reference"},
		{"returns its top k newest first", approxNewestFirst, "scores are not in descending order"},
		{"returns a record sharing no term", approxNoTerm, "shares no term with the text"},
		{"returns the newest candidates", approxByAge, "recall against the reference"},
		{"scores every result 0", approxZeroScores, "want above 0"},
		{"counts every tenant's records", approxStoreStats, "after another tenant wrote"},
		{"counts every record of the tenant", approxTenantStats, "after another user of the tenant wrote"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			errs, logs := runLogged(t, approx(c.fault, ApproximateTextSearch), "TextSearch")
			if len(errs) == 0 {
				t.Fatalf("the approximate TextSearch check did not notice a text search that %s", c.name)
			}
			i := slices.IndexFunc(errs, func(e string) bool { return strings.Contains(e, c.want) })
			if i < 0 {
				t.Fatalf("no failure says %q; %d failures, first: %s", c.want, len(errs), errs[0])
			}
			t.Logf("%d failures; %s; the one expected: %s", len(errs), recall(logs), errs[i])
		})
	}
}
