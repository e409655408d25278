// Package driver is the storage driver contract: the small interface every
// driver implements (Driver), the optional capabilities a driver may add
// (Sweeper, Swapper, VectorSearcher, TextSearcher, TextRanker, Claimer,
// WorkEraser), and the checks and errors every driver applies alike, so
// that drivers agree on what they accept and how they refuse it.
//
// The contract is deliberately smaller than the user API, as
// database/sql/driver is smaller than database/sql: drivers see queries
// whose filter backend.Store has already derived from the caller's
// identity, and never an unscoped request. Optional capabilities are
// separate interfaces found by type assertion. backend/backendtest holds
// the one conformance suite every driver's tests run. Drivers import this
// package and memory only, not backend, so a program that uses a driver
// directly links neither Store nor its token counter.
package driver

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/agentmem/memory"
)

// Query selects records for List and Delete. Filter is always applied; the
// other fields narrow it further.
type Query struct {
	// Filter is the scope condition derived by memory.Posture.Filter. A
	// driver applies it exactly and never widens it.
	Filter memory.Filter
	// Kinds restricts to these kinds; empty means all.
	Kinds []memory.Kind
	// Key restricts to one key; empty means any.
	Key string
	// IDs restricts to these ids; empty means any.
	IDs []string
	// Limit keeps only the newest Limit records (List only); zero means all.
	Limit int
}

// Driver stores records. Implementations must be safe for concurrent use.
//
// Every method returns context errors unchanged when ctx is done, and
// memory.ErrClosed after Close. Other failures are classified with the
// memory.Err* sentinels and wrap the native error.
type Driver interface {
	// Put stores a batch of records, all or nothing. Each record is checked
	// with Validate first; a batch over memory.MaxBatch is ErrTooLarge and
	// an empty batch does nothing.
	//
	// Record ids are unique per tenant (Identity.Tenant), not per store:
	// records of two tenants under one id are two records, and nothing one
	// tenant writes, replaces or deletes under an id fails because of,
	// reveals or touches another tenant's record. A record whose id its
	// tenant already holds (expired or not) replaces the stored one only
	// when both carry the same identity; otherwise Put fails with
	// HeldByAnother's ErrPermissionDenied and stores nothing. When one id
	// appears twice in a batch for one tenant, the later record wins.
	Put(ctx context.Context, recs []memory.Record) error
	// List returns the records matching q that have not expired, newest
	// first: by Created descending, then ID descending.
	List(ctx context.Context, q Query) ([]memory.Record, error)
	// Delete removes every record matching q, expired or not, ignoring
	// Limit, and reports how many it removed. There is no page cap.
	Delete(ctx context.Context, q Query) (int64, error)
	// Close releases the driver's resources. It is idempotent.
	Close() error
}

// Sweeper is the optional capability of deleting expired records in bulk.
// Drivers without it still never return expired records.
type Sweeper interface {
	// Sweep deletes every record that has expired at the driver's clock
	// and reports how many it removed.
	Sweep(ctx context.Context) (int64, error)
}

// ErrIDHeld is the cause of HeldByAnother's errors, so callers can tell
// that refusal from other permission errors with errors.Is.
var ErrIDHeld = errors.New("the record id is held by another identity of its tenant")

// HeldByAnother returns the error of a write under an id that its tenant
// already holds with another identity: memory.ErrPermissionDenied, since
// the id belongs to that identity and retrying cannot help, caused by
// ErrIDHeld.
func HeldByAnother(id string) error {
	return &memory.Error{Kind: memory.ErrPermissionDenied, Msg: "record " + strconv.Quote(id), Err: ErrIDHeld}
}

// CheckPut validates a batch for a driver's Put: size and every record.
func CheckPut(recs []memory.Record) error {
	if len(recs) > memory.MaxBatch {
		return memory.Errorf(memory.ErrTooLarge, "batch of %d records, the limit is %d", len(recs), memory.MaxBatch)
	}
	for _, r := range recs {
		if err := r.Validate(); err != nil {
			return err
		}
	}
	return nil
}

// Matches reports whether r passes q's filter, kinds, key and ids. It does
// not look at expiry or Limit. Drivers that filter in Go use it.
func (q Query) Matches(r memory.Record) bool {
	return q.Filter.Matches(r.Identity) && q.MatchesRest(r.ID, r.Kind, r.Key)
}

// NamesRest reports whether q names kinds, a key or ids: whether
// MatchesRest can refuse a record.
func (q *Query) NamesRest() bool { return len(q.Kinds) > 0 || q.Key != "" || len(q.IDs) > 0 }

// MatchesRest reports whether a record with this id, kind and key passes
// q's ids, kinds and key: Matches less the filter, for drivers that
// decide the filter once per writer identity rather than per record.
func (q *Query) MatchesRest(id string, kind memory.Kind, key string) bool {
	switch {
	case q.Key != "" && key != q.Key:
		return false
	case len(q.Kinds) > 0 && !slices.Contains(q.Kinds, kind):
		return false
	}
	return len(q.IDs) == 0 || slices.Contains(q.IDs, id)
}

// CheckQuery rejects a query no derived filter produces: one that does not
// match on tenant (an unscoped query), a negative limit, or too many ids.
// Drivers call it before touching storage.
func CheckQuery(q Query) error {
	if !q.Filter.Match.Has(memory.FieldTenant) {
		return memory.Errorf(memory.ErrIncompleteScope, "unscoped query: the filter does not match on tenant")
	}
	if q.Limit < 0 {
		return memory.Errorf(memory.ErrInvalidArgument, "negative limit %d", q.Limit)
	}
	if len(q.IDs) > memory.MaxBatch {
		return memory.Errorf(memory.ErrTooLarge, "query names %d ids, the limit is %d", len(q.IDs), memory.MaxBatch)
	}
	return nil
}

// Newer reports whether a sorts before b in List order: Created
// descending, then ID descending.
func Newer(a, b memory.Record) bool { return CompareRecords(a, b) < 0 }

// CompareRecords compares a and b in List order (Newer), for
// slices.SortFunc: negative when a sorts first.
func CompareRecords(a, b memory.Record) int {
	if c := b.Created.Compare(a.Created); c != 0 {
		return c
	}
	return strings.Compare(b.ID, a.ID)
}

// Admit is how a call of the contract starts in a driver that reads the
// clock: it fails with ctx.Err() when ctx is done, then with invalid (the
// call's argument check, such as CheckQuery's error; nil for none), and
// otherwise returns the reading of clock c in unix nanoseconds.
func Admit(ctx context.Context, invalid error, c memory.Clock) (now int64, err error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if invalid != nil {
		return 0, invalid
	}
	return c.Nanos()
}
