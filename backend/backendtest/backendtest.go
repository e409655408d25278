// Package backendtest is the one conformance suite every storage driver's
// tests run. A driver's whole conformance test is a few lines:
//
//	func TestConformance(t *testing.T) {
//		backendtest.Run(t, backendtest.Config{
//			NewDriver: func(t *testing.T, clock backend.Clock) backend.Driver {
//				return inmem.New(inmem.Options{Clock: clock})
//			},
//			Sweeper: true,
//		})
//	}
//
// Run checks the whole backend.Driver contract: isolation at every level
// against an independent reference model of the scope rules, exact erasure
// with no page cap, expiry under a controllable clock, concurrent use,
// lifecycle (Close, cancelled contexts), input validation, all-or-nothing
// batches, round trips of every Record field, upserts and conflicts.
//
// The subtests, in order: RoundTrip, Upsert, DocumentJSON (a document's
// JSON comes back byte for byte: white space, key order, duplicate keys,
// number spellings and escapes), DeterministicIDs, Ordering,
// Isolation (the model-based check: hundreds of random identities, every
// caller at every level under several postures, compared in order with a
// reference model written from the origin documents), ListNarrowing,
// ForgetEveryLevel, ForgetLarge (more than memory.MaxBatch records in one
// erasure), DeleteNarrowing, Expiry, Sweep, Concurrency, Close,
// CancelledContext, BadRecords, BadBatches and BadQueries. Each states what
// it checks in its failure messages.
//
// The work queue's subtests (they check a driver that declares
// Config.Claimer): Claim, ClaimLeases, ClaimModel (a long random sequence
// of calls compared with a reference model of the queue), ClaimBadInput,
// ClaimLifecycle, ClaimDeadWorkers (workers cancelled mid-work, a replica
// closed while it holds claims) and ClaimRace (two replicas of eight
// workers each race over 10,240 items on real time; every item is
// completed exactly once, and no claim holds a lock while its worker
// works).
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

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
)

// SeedEnv is the environment variable that fixes the suite's random seed,
// so that a failure can be replayed exactly.
const SeedEnv = "BACKENDTEST_SEED"

// Config describes the driver under test and the optional capabilities it
// declares.
type Config struct {
	// NewDriver returns a new, empty driver whose expiry uses clock. The
	// suite closes it (and t.Cleanup may too).
	NewDriver func(t *testing.T, clock backend.Clock) backend.Driver
	// Sweeper declares that the driver implements backend.Sweeper. The
	// suite fails if the declaration and the driver disagree (honest
	// opt-out, never a skipped failing case).
	Sweeper bool
	// Swapper declares that the driver implements backend.Swapper.
	Swapper bool
	// VectorSearch declares whether the driver implements
	// backend.VectorSearcher, and whether its search is exact.
	VectorSearch VectorSearch
	// Claimer declares that the driver implements backend.Claimer.
	Claimer bool
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
	Replica func(t *testing.T, d backend.Driver) backend.Driver
}

// VectorSearch is a driver's vector search capability.
type VectorSearch int

const (
	// NoVectorSearch: the driver does not implement backend.VectorSearcher.
	NoVectorSearch VectorSearch = iota
	// ExactVectorSearch: Search returns exactly the brute-force result.
	ExactVectorSearch
	// ApproximateVectorSearch: Search uses an approximate index, whose
	// recall@10 against brute force must be at least 0.95.
	ApproximateVectorSearch
)

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
	{"Claim", checkClaim},
	{"ClaimLeases", checkClaimLeases},
	{"ClaimModel", checkClaimModel},
	{"ClaimBadInput", checkClaimBadInput},
	{"ClaimLifecycle", checkClaimLifecycle},
	{"ClaimDeadWorkers", checkClaimDeadWorkers},
	{"ClaimRace", checkClaimRace},
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
func (e *env) open(r reporter) (backend.Driver, *fakeClock) {
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
	memory.ErrUnimplemented, memory.ErrClosed,
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
func tenantQuery(tenant string) backend.Query {
	return backend.Query{Filter: memory.Filter{Match: memory.FieldTenant, Identity: memory.Identity{Tenant: tenant}}}
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
func mustList(r reporter, d backend.Driver, what string, q backend.Query) []memory.Record {
	r.Helper()
	recs, err := d.List(context.Background(), q)
	if err != nil {
		r.Fatalf("%s: List: %v", what, err)
	}
	checkOrder(r, what, recs)
	return recs
}

// mustPut stores recs and stops the check on error.
func mustPut(r reporter, d backend.Driver, what string, recs []memory.Record) {
	r.Helper()
	if err := d.Put(context.Background(), recs); err != nil {
		r.Fatalf("%s: Put of %d records: %v", what, len(recs), err)
	}
}

// putAll stores recs in batches of at most memory.MaxBatch.
func putAll(r reporter, d backend.Driver, what string, recs []memory.Record) {
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

// recordDiff describes how got differs from want, field by field; it is
// empty when they are equal. Times compare with Equal; a nil and an empty
// Metadata map are equal.
func recordDiff(got, want memory.Record) string {
	var d []string
	add := func(field string, g, w any) {
		d = append(d, fmt.Sprintf("%s: got %#v, want %#v", field, g, w))
	}
	if got.ID != want.ID {
		add("ID", got.ID, want.ID)
	}
	if got.Kind != want.Kind {
		add("Kind", got.Kind, want.Kind)
	}
	if got.Identity != want.Identity {
		add("Identity", got.Identity, want.Identity)
	}
	if got.Label != want.Label {
		add("Label", got.Label, want.Label)
	}
	if got.Key != want.Key {
		add("Key", got.Key, want.Key)
	}
	if got.Content != want.Content {
		if len(got.Content) > 200 || len(want.Content) > 200 {
			add("Content (length)", len(got.Content), len(want.Content))
		} else {
			add("Content", got.Content, want.Content)
		}
	}
	if !sameMetadata(got.Metadata, want.Metadata) {
		add("Metadata", got.Metadata, want.Metadata)
	}
	if !got.Created.Equal(want.Created) {
		add("Created", got.Created.Format(time.RFC3339Nano), want.Created.Format(time.RFC3339Nano))
	}
	if !got.Expires.Equal(want.Expires) {
		add("Expires", got.Expires.Format(time.RFC3339Nano), want.Expires.Format(time.RFC3339Nano))
	}
	if got.Tokens != want.Tokens {
		add("Tokens", got.Tokens, want.Tokens)
	}
	// Stores set versions: a want without one accepts any stored version.
	if want.Version != 0 && got.Version != want.Version || got.Version < 1 {
		add("Version", got.Version, want.Version)
	}
	if !sameVector(got.Vector, want.Vector) {
		add("Vector", got.Vector, want.Vector)
	}
	return strings.Join(d, "; ")
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

func sameMetadata(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
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
			r.Errorf("%s: record %q differs: %s", what, got[i].ID, d)
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
func newStore(d backend.Driver, p memory.Posture) *backend.Store {
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
