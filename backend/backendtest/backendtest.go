// Package backendtest is the one conformance suite every storage driver's
// tests run. A driver's whole conformance test is a few lines:
//
//	func TestConformance(t *testing.T) {
//		backendtest.Run(t, backendtest.Config{
//			NewDriver: func(t *testing.T, clock memory.Clock) driver.Driver {
//				return inmem.New(inmem.Options{Clock: clock})
//			},
//			Sweeper: true,
//		})
//	}
//
// Run checks the whole driver.Driver contract: isolation at every level
// against an independent reference model of the scope rules, exact erasure
// with no page cap, expiry under a controllable clock, concurrent use,
// lifecycle (Close, cancelled contexts), input validation, all-or-nothing
// batches, round trips of every Record field, upserts and conflicts.
//
// The subtests, in order: RoundTrip, Upsert, TenantIDs (record ids are
// unique per tenant: another tenant's use of an id neither fails nor
// touches the record), DocumentJSON (a document's
// JSON comes back byte for byte: white space, key order, duplicate keys,
// number spellings and escapes), DeterministicIDs, Ordering,
// Isolation (the model-based check: hundreds of random identities, every
// caller at every level under several postures, compared in order with a
// reference model written from the origin documents), ListNarrowing,
// ForgetEveryLevel, ForgetLarge (more than memory.MaxBatch records in one
// erasure), DeleteNarrowing, Expiry, Sweep, Concurrency, Close,
// CancelledContext, BadRecords, BadBatches and BadQueries. Each states what
// it checks in its failure messages. TextSearch checks a driver that
// declares Config.TextSearch against the lexical engine's reference
// ranking (internal/lexical.Rank): under ExactTextSearch the same
// records, order, scores and writer scores; under ApproximateTextSearch
// results inside the query that share a term with it, as many as the
// reference's, scores positive and descending, and a recall against the
// reference of at least 0.9. Under both, the corpus statistics confined
// to the filter, writes, replacements and deletions seen by the next
// search, and bad arguments refused.
//
// The work queue's subtests (they check a driver that declares
// Config.Claimer): Claim, ClaimLeases, ClaimModel (a long random sequence
// of calls compared with a reference model of the queue), ClaimBadInput,
// ClaimLifecycle, ClaimDeadWorkers (workers cancelled mid-work, a replica
// closed while it holds claims) and ClaimRace (two replicas of eight
// workers each race over 10,240 items on real time; every item is
// completed exactly once, and no claim holds a lock while its worker
// works). A work queue that declares Config.WorkEraser is checked by
// ClaimErase (erasure at each level removes exactly its scope's items of
// one queue, pending and claimed, with exact counts and no page cap;
// their claims go stale and their ids may be enqueued again),
// ClaimEraseModel (random callers erasing at every level, compared with
// the reference scope rules), ClaimEraseLifecycle and ClaimEraseRace
// (erasures racing workers on two replicas: every item is removed exactly
// once, by a Complete or by an erasure).
//
// Optional capabilities are declared in Config. A declaration the driver
// contradicts is a failure, so a driver opts out honestly and never by
// skipping a failing case; the checks of a capability the driver does not
// have are skipped, each saying why, rather than passing having checked
// nothing.
//
// Random data come from a seed that every randomised subtest logs. Set the
// environment variable BACKENDTEST_SEED to that number to replay a run.
package backendtest

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/driver"
)

// SeedEnv is the environment variable that fixes the suite's random seed,
// so that a failure can be replayed exactly.
const SeedEnv = "BACKENDTEST_SEED"

// Config describes the driver under test and the optional capabilities it
// declares.
type Config struct {
	// NewDriver returns a new, empty driver whose expiry uses clock. The
	// suite closes it (and t.Cleanup may too).
	NewDriver func(t *testing.T, clock memory.Clock) driver.Driver
	// Sweeper declares that the driver implements driver.Sweeper. The
	// suite fails if the declaration and the driver disagree (honest
	// opt-out, never a skipped failing case).
	Sweeper bool
	// Swapper declares that the driver implements driver.Swapper.
	Swapper bool
	// VectorSearch declares whether the driver implements
	// driver.VectorSearcher, and whether its search is exact.
	VectorSearch VectorSearch
	// FixedVectorDims declares that the driver's vector dimension is
	// fixed by its configuration when it is opened, rather than by the
	// first vector it stores: NewDriver opens it for vectors of
	// VectorDims dimensions, the only dimension the suite's vectors
	// have, and a search of an empty store with a vector of another
	// dimension is then memory.ErrInvalidArgument, not an empty result.
	FixedVectorDims bool
	// TextSearch declares whether the driver implements
	// driver.TextSearcher, and whether its ranking is exact.
	TextSearch TextSearch
	// Claimer declares that the driver implements driver.Claimer.
	Claimer bool
	// WorkEraser declares that the driver's work queue implements
	// driver.WorkEraser too; it needs Claimer.
	WorkEraser bool
	// PerAgent, when not nil, declares that the driver keeps each agent's
	// records in one object of its own, with the narrowings PerAgent
	// lists; the checks adapt their data to them or skip saying which
	// they break.
	PerAgent *PerAgent
	// Replica returns another independent handle on the storage of d, a
	// driver NewDriver returned: its own connection pool, reading the same
	// clock as d, as a second replica of a program would open. The suite
	// closes it. Nil means the driver has no replicas (it keeps its data
	// in the process), and the checks of racing replicas use d twice.
	Replica func(t *testing.T, d driver.Driver) driver.Driver
}

// VectorSearch is a driver's vector search capability.
type VectorSearch int

const (
	// NoVectorSearch: the driver does not implement driver.VectorSearcher.
	NoVectorSearch VectorSearch = iota
	// ExactVectorSearch: Search returns exactly the brute-force result.
	ExactVectorSearch
	// ApproximateVectorSearch: Search uses an approximate index, whose
	// recall@10 against brute force must be at least 0.95.
	ApproximateVectorSearch
)

// TextSearch is a driver's text search capability.
type TextSearch int

const (
	// NoTextSearch: the driver does not implement driver.TextSearcher.
	NoTextSearch TextSearch = iota
	// ExactTextSearch: SearchText ranks as the lexical engine's
	// reference (internal/lexical.Rank) does: the same records in the
	// same order, with the same scores and writer scores within 1e-9.
	ExactTextSearch
	// ApproximateTextSearch: SearchText ranks close to the reference but
	// not exactly (its length normalisation or its score precision
	// differ, say). Every result lies inside the query and shares a term
	// with the text; there are as many as the reference returns; scores
	// are above 0 and never increase down the list; and the results'
	// recall against the reference's, summed over every search the
	// check compares, is at least 0.9. Writer scores are not compared:
	// such a driver may report 0. Its statistics must still be those of
	// the filter's records alone, and its results deterministic: another
	// tenant's or another user's writes leave a search's ids, scores and
	// writer scores exactly unchanged. A driver.TextRanker's RankText
	// must still return what SearchText does, and its WriterRefs
	// exactly each writer's records.
	ApproximateTextSearch
)

// VectorDims is the dimension of every vector the suite stores (a few
// checks use other dimensions to see them refused).
const VectorDims = 8

// Run runs the conformance suite against the driver c describes, one
// subtest per property.
func Run(t *testing.T, c Config) {
	t.Helper()
	if c.NewDriver == nil {
		t.Fatal("backendtest: Config.NewDriver is nil")
	}
	seed, err := suiteSeed()
	if err != nil {
		t.Fatalf("backendtest: %v", err)
	}
	for _, ch := range checks {
		t.Run(ch.name, func(t *testing.T) {
			ch.fn(t, &env{cfg: c, t: t, seed: seed, name: ch.name})
		})
	}
}

// check is one subtest of the suite.
type check struct {
	name string
	fn   func(r reporter, e *env)
}

// checks lists the subtests in the order Run runs them.
var checks = []check{
	{"RoundTrip", checkRoundTrip},
	{"Upsert", checkUpsert},
	{"TenantIDs", checkTenantIDs},
	{"DocumentJSON", checkDocumentJSON},
	{"DeterministicIDs", checkDeterministicIDs},
	{"Ordering", checkOrdering},
	{"Isolation", checkIsolation},
	{"ListNarrowing", checkListNarrowing},
	{"ForgetEveryLevel", checkForgetLevels},
	{"ForgetLarge", checkForgetLarge},
	{"DeleteNarrowing", checkDeleteNarrowing},
	{"Expiry", checkExpiry},
	{"Sweep", checkSweep},
	{"Concurrency", checkConcurrency},
	{"Close", checkClose},
	{"CancelledContext", checkCancelledContext},
	{"BadRecords", checkBadRecords},
	{"BadBatches", checkBadBatches},
	{"BadQueries", checkBadQueries},
	{"Versions", checkVersions},
	{"Swap", checkSwap},
	{"SwapRace", checkSwapRace},
	{"Vectors", checkVectors},
	{"VectorSearch", checkVectorSearch},
	{"VectorSearchIsolation", checkVectorSearchIsolation},
	{"TextSearch", checkTextSearch},
	{"Claim", checkClaim},
	{"ClaimLeases", checkClaimLeases},
	{"ClaimModel", checkClaimModel},
	{"ClaimBadInput", checkClaimBadInput},
	{"ClaimLifecycle", checkClaimLifecycle},
	{"ClaimDeadWorkers", checkClaimDeadWorkers},
	{"ClaimRace", checkClaimRace},
	{"ClaimErase", checkClaimErase},
	{"ClaimEraseModel", checkClaimEraseModel},
	{"ClaimEraseLifecycle", checkClaimEraseLifecycle},
	{"ClaimEraseRace", checkClaimEraseRace},
}

// reporter is the part of *testing.T the checks use. The suite's own tests
// substitute a recorder to prove that a check fails on a faulty driver.
// Fatalf must not return; it is never called from a goroutine other than
// the check's own.
type reporter interface {
	Helper()
	Logf(format string, args ...any)
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// skip ends a check of a capability the driver does not have, giving the
// reason: under a *testing.T the subtest is reported as skipped, never as
// a pass that checked nothing. A reporter that cannot skip (the suite's
// self-tests record what a check reports) logs the reason, and the check
// returns.
func skip(r reporter, format string, args ...any) {
	r.Helper()
	if s, ok := r.(interface{ Skipf(string, ...any) }); ok {
		s.Skipf(format, args...)
	}
	r.Logf(format, args...)
}

// env is what a check needs besides its reporter: the configuration and
// the *testing.T that owns the drivers it opens.
type env struct {
	cfg  Config
	t    *testing.T
	seed uint64
	name string
}

// t0 is the fake clock's starting time. It has a non-zero nanosecond part
// so drivers that truncate times are caught.
var t0 = time.Date(2025, 3, 14, 15, 9, 26, 535897932, time.UTC)

// open returns a new driver and the fake clock its expiry uses. The driver
// is closed when the test ends.
func (e *env) open(r reporter) (driver.Driver, *fakeClock) {
	r.Helper()
	clk := &fakeClock{now: t0}
	d := e.cfg.NewDriver(e.t, clk.Now)
	if d == nil {
		r.Fatalf("Config.NewDriver returned a nil driver")
	}
	e.t.Cleanup(func() { _ = d.Close() })
	return d, clk
}

// rand returns the check's random source, derived from the suite seed and
// the check's name, and logs how to replay it.
func (e *env) rand(r reporter) *rand.Rand {
	r.Helper()
	h := fnv.New64a()
	h.Write([]byte(e.name))
	r.Logf("random seed %d (set %s=%d to replay)", e.seed, SeedEnv, e.seed)
	return rand.New(rand.NewPCG(e.seed, h.Sum64()))
}

// suiteSeed reads SeedEnv or, when it is unset, picks a fresh seed.
func suiteSeed() (uint64, error) {
	if s := strings.TrimSpace(os.Getenv(SeedEnv)); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s=%q is not an unsigned integer", SeedEnv, s)
		}
		return n, nil
	}
	return uint64(time.Now().UnixNano()), nil
}

// fakeClock is a clock the suite moves by hand. It is safe for concurrent
// use, since drivers may read it from any goroutine.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

// Now returns the clock's current reading.
func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Set moves the clock to t.
func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// Advance moves the clock forward by d.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// sentinels are the classified errors; every non-context error a driver
// returns matches exactly one of them.
var sentinels = []error{
	memory.ErrNotFound, memory.ErrInvalidArgument, memory.ErrIncompleteScope,
	memory.ErrPermissionDenied, memory.ErrConflict, memory.ErrTooLarge,
	memory.ErrUnimplemented, memory.ErrClosed, memory.ErrUnavailable,
}

// wantErr reports whether err matches want, and that it matches no other
// sentinel: a classified error matches exactly one, and a context error,
// which passes through unchanged, none.
func wantErr(r reporter, what string, err, want error) bool {
	r.Helper()
	if err == nil {
		r.Errorf("%s: got no error, want %v", what, want)
		return false
	}
	if !errors.Is(err, want) {
		r.Errorf("%s: got error %q, want one matching %v", what, err, want)
		return false
	}
	for _, s := range sentinels {
		if s != want && errors.Is(err, s) {
			r.Errorf("%s: error %q matches %v besides %v; an error matches exactly one sentinel, a context error none", what, err, s, want)
			return false
		}
	}
	return true
}

// noErr reports a failure when err is not nil.
func noErr(r reporter, what string, err error) bool {
	r.Helper()
	if err != nil {
		r.Errorf("%s: unexpected error: %v", what, err)
		return false
	}
	return true
}

// mustNoErr stops the check when err is not nil.
func mustNoErr(r reporter, what string, err error) {
	r.Helper()
	if err != nil {
		r.Fatalf("%s: unexpected error: %v", what, err)
	}
}

// tenantQuery is the store-level query for one tenant: everything in it.
func tenantQuery(tenant string) driver.Query {
	return driver.Query{Filter: memory.Filter{Match: memory.FieldTenant, Identity: memory.Identity{Tenant: tenant}}}
}

// mustFilter derives a filter for a case the suite knows is valid.
func mustFilter(r reporter, p memory.Posture, id memory.Identity, l memory.Level) memory.Filter {
	r.Helper()
	f, err := p.Filter(id, l)
	if err != nil {
		r.Fatalf("Posture%+v.Filter(%+v, %s): %v", p, id, l, err)
	}
	return f
}

// mustList lists q and stops the check on error. It checks the order of
// the result too.
func mustList(r reporter, d driver.Driver, what string, q driver.Query) []memory.Record {
	r.Helper()
	recs, err := d.List(context.Background(), q)
	if err != nil {
		r.Fatalf("%s: List: %v", what, err)
	}
	checkOrder(r, what, recs)
	return recs
}

// mustPut stores recs and stops the check on error.
func mustPut(r reporter, d driver.Driver, what string, recs []memory.Record) {
	r.Helper()
	if err := d.Put(context.Background(), recs); err != nil {
		r.Fatalf("%s: Put of %d records: %v", what, len(recs), err)
	}
}

// putAll stores recs in batches of at most memory.MaxBatch.
func putAll(r reporter, d driver.Driver, what string, recs []memory.Record) {
	r.Helper()
	for len(recs) > 0 {
		n := min(len(recs), memory.MaxBatch)
		mustPut(r, d, what, recs[:n])
		recs = recs[n:]
	}
}

// newer is the suite's own statement of List order: Created descending,
// then ID descending (byte-wise, as Go compares strings).
func newer(a, b memory.Record) bool {
	if !a.Created.Equal(b.Created) {
		return a.Created.After(b.Created)
	}
	return a.ID > b.ID
}

// sortNewest sorts recs into List order.
func sortNewest(recs []memory.Record) {
	slices.SortFunc(recs, func(a, b memory.Record) int {
		switch {
		case newer(a, b):
			return -1
		case newer(b, a):
			return 1
		}
		return 0
	})
}

// checkOrder reports a List result that is not in List order or that
// holds an id twice.
func checkOrder(r reporter, what string, recs []memory.Record) bool {
	r.Helper()
	seen := make(map[string]bool, len(recs))
	for i, rec := range recs {
		if seen[rec.ID] {
			r.Errorf("%s: id %q returned twice", what, rec.ID)
			return false
		}
		seen[rec.ID] = true
		if i > 0 && !newer(recs[i-1], rec) {
			r.Errorf("%s: result out of order at %d: %q (created %s) before %q (created %s); want Created descending, then ID descending",
				what, i, recs[i-1].ID, recs[i-1].Created.Format(time.RFC3339Nano), rec.ID, rec.Created.Format(time.RFC3339Nano))
			return false
		}
	}
	return true
}

// ids returns the ids of recs in order.
func ids(recs []memory.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.ID
	}
	return out
}

// sameIDs compares the ids of a List result with the expected records, in
// order, and reports leaks, misses and order differences.
func sameIDs(r reporter, what string, got, want []memory.Record) bool {
	r.Helper()
	if slices.Equal(ids(got), ids(want)) {
		return true
	}
	wantSet := make(map[string]bool, len(want))
	for _, w := range want {
		wantSet[w.ID] = true
	}
	gotSet := make(map[string]bool, len(got))
	var leaks, misses []string
	for _, g := range got {
		gotSet[g.ID] = true
		if !wantSet[g.ID] {
			leaks = append(leaks, g.ID)
		}
	}
	for _, w := range want {
		if !gotSet[w.ID] {
			misses = append(misses, w.ID)
		}
	}
	if len(leaks) == 0 && len(misses) == 0 {
		i := 0
		for got[i].ID == want[i].ID {
			i++
		}
		lo, hi := max(0, i-2), min(len(got), i+6)
		r.Errorf("%s: right records in the wrong order from position %d:\n got [%d:%d] %q\nwant [%d:%d] %q",
			what, i, lo, hi, ids(got[lo:hi]), lo, hi, ids(want[lo:hi]))
	} else {
		r.Errorf("%s: got %d records, want %d; unexpected %s; missing %s", what, len(got), len(want), idList(leaks), idList(misses))
	}
	return false
}

// idList quotes at most ten ids for a failure message.
func idList(ids []string) string {
	if len(ids) <= 10 {
		return fmt.Sprintf("%q", ids)
	}
	return fmt.Sprintf("%q and %d more", ids[:10], len(ids)-10)
}

// recordOptions are the suite's rules for comparing records with cmp:
// times compare with Equal (cmp uses time.Time's Equal method), a nil and
// an empty Metadata map are equal, and vectors compare bit for bit (a nil
// vector differs from an empty one, as cmp tells nil slices from empty
// ones).
var recordOptions = cmp.Options{
	cmp.FilterValues(func(a, b map[string]string) bool { return len(a) == 0 && len(b) == 0 },
		cmp.Comparer(func(_, _ map[string]string) bool { return true })),
	cmp.Comparer(func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }),
}

// recordDiff describes how got differs from want, as a cmp.Diff (-want
// +got) under recordOptions; it is empty when they are equal. Stores set
// versions: a want without one accepts any stored version, and a stored
// version below 1 is always a difference. Long contents are compared in
// full but shown only from their first difference.
func recordDiff(got, want memory.Record) string {
	if want.Version == 0 && got.Version >= 1 {
		want.Version = got.Version
	}
	want.Content, got.Content = shownText(want.Content, got.Content)
	d := cmp.Diff(want, got, recordOptions)
	if got.Version < 1 {
		d += fmt.Sprintf("Version: got %d, want a version from 1 (stores set versions)\n", got.Version)
	}
	return d
}

// shownLimit is the longest text a diff shows in full.
const shownLimit = 200

// shownText returns texts a diff can show in place of want and got: the
// texts themselves when both are short, otherwise their lengths and, if
// they differ, each from the first byte where they do. The results are
// equal exactly when want and got are.
func shownText(want, got string) (string, string) {
	if len(want) <= shownLimit && len(got) <= shownLimit {
		return want, got
	}
	if want == got {
		same := fmt.Sprintf("(%d bytes, the same in both)", len(want))
		return same, same
	}
	from := 0
	for from < len(want) && from < len(got) && want[from] == got[from] {
		from++
	}
	// Start at the first byte of the character that differs (the bytes
	// before from are the same in both), at most 3 bytes back.
	midRune := func(s string, i int) bool { return i < len(s) && !utf8.RuneStart(s[i]) }
	for back := 0; back < 3 && from > 0 && (midRune(want, from) || midRune(got, from)); back++ {
		from--
	}
	show := func(s string) string {
		rest := s[from:]
		if len(rest) > 40 {
			cut := 40
			for cut > 37 && !utf8.RuneStart(rest[cut]) {
				cut--
			}
			rest = rest[:cut] + "…"
		}
		return fmt.Sprintf("(%d bytes; from byte %d:) %s", len(s), from, rest)
	}
	return show(want), show(got)
}

// sameVector reports whether a and b hold the same float32 values, bit for
// bit, and are both nil or both not.
func sameVector(a, b []float32) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// sameRecords compares a List result with the expected records field by
// field, in order.
func sameRecords(r reporter, what string, got, want []memory.Record) bool {
	r.Helper()
	if !sameIDs(r, what, got, want) {
		return false
	}
	ok := true
	for i := range got {
		if d := recordDiff(got[i], want[i]); d != "" {
			r.Errorf("%s: record %q differs (-want +got):\n%s", what, got[i].ID, d)
			ok = false
		}
	}
	return ok
}

// fixedCounter is a token counter for the Stores the suite builds; the
// suite never relies on its counts.
type fixedCounter struct{}

// CountTokens returns 1.
func (fixedCounter) CountTokens(context.Context, string) (int, error) { return 1, nil }

// newStore returns a scoped Store over d with posture p.
func newStore(d driver.Driver, p memory.Posture) *backend.Store {
	return backend.NewStore(d, backend.StoreOptions{Posture: p, Tokens: fixedCounter{}, Clock: func() time.Time { return t0 }})
}

// failures caps how many failures a check reports one by one, so a badly
// broken driver yields a readable report. It is not safe for concurrent use.
type failures struct {
	r     reporter
	max   int
	count int
	seed  uint64
}

// Errorf reports one failure, or only counts it past the cap.
func (f *failures) Errorf(format string, args ...any) {
	f.r.Helper()
	f.count++
	if f.count <= f.max {
		f.r.Errorf(format, args...)
	}
}

// enough reports whether so many failures were seen that checking further
// would only slow the report down.
func (f *failures) enough() bool { return f.count >= 10*f.max }

// done reports how many failures were not shown.
func (f *failures) done() {
	f.r.Helper()
	if f.count > f.max {
		f.r.Errorf("... and %d more failures (%d in all); replay with %s=%d", f.count-f.max, f.count, SeedEnv, f.seed)
	} else if f.count > 0 {
		f.r.Errorf("%d failures; replay with %s=%d", f.count, SeedEnv, f.seed)
	}
}

// Helper forwards to the reporter.
func (f *failures) Helper() { f.r.Helper() }

// Logf forwards to the reporter until the cap is reached.
func (f *failures) Logf(format string, args ...any) {
	f.r.Helper()
	if f.count <= f.max {
		f.r.Logf(format, args...)
	}
}

// Fatalf forwards to the reporter.
func (f *failures) Fatalf(format string, args ...any) { f.r.Helper(); f.r.Fatalf(format, args...) }

// capability returns v as a T when the configuration declares it
// (declared, the Config field named field), failing r when the
// declaration and v disagree, and skipping r (what: the checks left out)
// when v is not a T or is not declared one.
func capability[T any](r reporter, v any, declared bool, field, iface, what string) (T, bool) {
	r.Helper()
	t, ok := v.(T)
	if ok != declared {
		r.Errorf("Config.%s is %v but %T implements %s: %v", field, declared, v, iface, ok)
	}
	if !ok || !declared {
		skip(r, "%T does not implement %s (Config.%s is false): %s", v, iface, field, what)
		var zero T
		return zero, false
	}
	return t, true
}
