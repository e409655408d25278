package driver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentmem/memory"
)

// Work is one item of pending work in a named queue: the unit that
// background jobs such as folding turns into digests or extracting facts
// hand out to workers.
type Work struct {
	// Queue names the queue the item belongs to, e.g. "fold".
	Queue string
	// ID identifies the item within its queue. Enqueueing an id that is
	// already pending or claimed in the queue does nothing, so producers
	// may enqueue the same work repeatedly; once completed, the id may be
	// enqueued again.
	ID string
	// Identity is whose work it is.
	Identity memory.Identity
	// Payload is the item's data, opaque to the driver (JSON, say).
	Payload string
	// Created orders the queue: older items are claimed first, then by ID.
	Created time.Time
}

// Lease is a worker's exclusive, time-limited claim on one work item.
type Lease struct {
	Work
	// Token identifies this claim. Every claim of an item gets a new one,
	// and only the current claim's token completes, renews or releases it.
	Token string
	// Expires is when the claim lapses by the driver's clock; from then
	// on the item may be claimed again.
	Expires time.Time
	// Attempt counts the claims of this item, this one included.
	Attempt int
}

// Limits of the work queue.
const (
	// MaxQueueBytes is the longest queue name.
	MaxQueueBytes = 128
	// MaxPayloadBytes is the largest Payload.
	MaxPayloadBytes = memory.MaxContentBytes
	// MinLease and MaxLease bound a lease's duration.
	MinLease = time.Millisecond
	MaxLease = 24 * time.Hour
)

// Claimer is the optional capability of a work queue with exactly-once
// claiming across processes and replicas: while an item's lease runs, no
// other worker can claim it; when a worker dies (its context cancelled,
// its connection dropped, its process killed), the item becomes claimable
// again once the lease lapses; and of all the claims an item ever gets,
// exactly one completes it.
//
// Claims are made and committed inside Claim: no lock and no transaction
// is held while the caller does its work, however slow. Lease times are
// read from the driver's clock, so replicas sharing a database need
// clocks that agree to well within a lease.
//
// A claim only guards the queue. Work whose effects must not happen twice
// when a lease lapses mid-work fences them too: with Swapper, or by
// completing the item before publishing its result.
type Claimer interface {
	// Enqueue adds items, all or nothing, and reports how many of them
	// were new; ids already pending or claimed in their queue are left
	// as they are.
	Enqueue(ctx context.Context, items []Work) (int, error)
	// Claim leases up to n items of queue that are pending or whose lease
	// has lapsed, oldest first, for the given duration, and returns them.
	// It returns no items, not an error, when none is claimable.
	Claim(ctx context.Context, queue string, n int, lease time.Duration) ([]Lease, error)
	// Renew extends a claim that is still current to the given duration
	// from now and returns it with its new expiry. It fails with
	// memory.ErrConflict when the item has been claimed again or
	// completed; a lapsed claim that nobody has taken over can still be
	// renewed.
	Renew(ctx context.Context, l Lease, lease time.Duration) (Lease, error)
	// Complete removes the item if l is still its current claim, lapsed or
	// not, and fails with memory.ErrConflict when the item has been
	// claimed again or completed.
	Complete(ctx context.Context, l Lease) error
	// Release gives the item back unfinished, claimable at once, if l is
	// still its current claim; otherwise it fails with memory.ErrConflict.
	Release(ctx context.Context, l Lease) error
}

// WorkEraser is the optional capability of a work queue (a Claimer) to
// erase the pending work of a scope when the scope's records are erased:
// an item's Identity is its writer's, and its Payload may hold what the
// erased records held. Found by type assertion on a Claimer.
type WorkEraser interface {
	// EraseWork removes, in one call committed before it returns, every
	// item of queue whose Identity f matches, pending or claimed, lapsed
	// or not, with no page cap, and reports how many it removed. f is
	// applied exactly as a record query's filter, with
	// memory.Filter.Matches semantics (every field in f.Match compared
	// byte for byte, an empty value matching only the empty value), and
	// never widened. Like CheckQuery for records, CheckEraseWork refuses
	// a filter that does not match on tenant, Match == 0 among them, with
	// memory.ErrIncompleteScope: erasing a queue across tenants is no
	// derived filter's doing.
	//
	// A claim on an erased item is stale from then on: Renew, Complete
	// and Release of it fail with memory.ErrConflict (StaleLease), as for
	// an item completed by another worker, and its id may be enqueued
	// again as a new item. A worker that holds such a claim may still
	// publish what it computed unless it fences its writes (see Claimer).
	EraseWork(ctx context.Context, queue string, f memory.Filter) (int64, error)
}

// CheckEraseWork validates the arguments of an EraseWork: a valid queue
// name and a filter that matches on tenant, which CheckQuery requires of
// records too; an unscoped filter is memory.ErrIncompleteScope.
func CheckEraseWork(queue string, f memory.Filter) error {
	if err := checkQueue(queue); err != nil {
		return err
	}
	if !f.Match.Has(memory.FieldTenant) {
		return memory.Errorf(memory.ErrIncompleteScope, "unscoped erasure of work: the filter does not match on tenant")
	}
	return nil
}

// CheckEnqueue validates a batch for Enqueue: its size and every item.
func CheckEnqueue(items []Work) error {
	if len(items) > memory.MaxBatch {
		return memory.Errorf(memory.ErrTooLarge, "batch of %d work items, the limit is %d", len(items), memory.MaxBatch)
	}
	for _, w := range items {
		if err := w.Validate(); err != nil {
			return err
		}
	}
	return nil
}

// Validate checks a work item: a valid queue name and id (as record ids),
// a valid identity, a payload of valid UTF-8 without NUL bytes of at most
// MaxPayloadBytes, and a creation time an int64 of unix nanoseconds holds.
func (w Work) Validate() error {
	if err := checkQueue(w.Queue); err != nil {
		return err
	}
	switch {
	case w.ID == "":
		return memory.Errorf(memory.ErrInvalidArgument, "work item id is empty")
	case len(w.ID) > memory.MaxIDBytes:
		return memory.Errorf(memory.ErrTooLarge, "work item id is %d bytes, the limit is %d", len(w.ID), memory.MaxIDBytes)
	case !utf8.ValidString(w.ID) || strings.IndexByte(w.ID, 0) >= 0:
		return memory.Errorf(memory.ErrInvalidArgument, "work item id is not valid UTF-8 or contains a NUL byte")
	case len(w.Payload) > MaxPayloadBytes:
		return memory.Errorf(memory.ErrTooLarge, "work item %s payload is %d bytes, the limit is %d", w.ID, len(w.Payload), MaxPayloadBytes)
	case !utf8.ValidString(w.Payload) || strings.IndexByte(w.Payload, 0) >= 0:
		return memory.Errorf(memory.ErrInvalidArgument, "work item %s payload is not valid UTF-8 or contains a NUL byte", w.ID)
	case w.Created.IsZero():
		return memory.Errorf(memory.ErrInvalidArgument, "work item %s has no creation time", w.ID)
	}
	if _, ok := memory.UnixNanos(w.Created); !ok {
		return memory.Errorf(memory.ErrInvalidArgument, "work item %s has a creation time outside the years 1678 to 2262", w.ID)
	}
	return w.Identity.Validate()
}

// CheckClaim validates the arguments of a Claim: a valid queue name,
// 1 <= n <= memory.MaxBatch, and MinLease <= lease <= MaxLease.
func CheckClaim(queue string, n int, lease time.Duration) error {
	if err := checkQueue(queue); err != nil {
		return err
	}
	if n < 1 || n > memory.MaxBatch {
		return memory.Errorf(memory.ErrInvalidArgument, "claim of %d items; it must be between 1 and %d", n, memory.MaxBatch)
	}
	return checkLease(lease)
}

// CheckLease validates a lease handed back to Renew, Complete or Release:
// its queue and id, and a token.
func CheckLease(l Lease) error {
	if err := checkQueue(l.Queue); err != nil {
		return err
	}
	if l.ID == "" || l.Token == "" {
		return memory.Errorf(memory.ErrInvalidArgument, "lease has no item id or no token")
	}
	return nil
}

// CheckRenew validates the arguments of a Renew.
func CheckRenew(l Lease, lease time.Duration) error {
	if err := CheckLease(l); err != nil {
		return err
	}
	return checkLease(lease)
}

func checkLease(lease time.Duration) error {
	if lease < MinLease || lease > MaxLease {
		return memory.Errorf(memory.ErrInvalidArgument, "lease of %s; it must be between %s and %s", lease, MinLease, MaxLease)
	}
	return nil
}

func checkQueue(q string) error {
	switch {
	case q == "":
		return memory.Errorf(memory.ErrInvalidArgument, "queue name is empty")
	case len(q) > MaxQueueBytes:
		return memory.Errorf(memory.ErrTooLarge, "queue name is %d bytes, the limit is %d", len(q), MaxQueueBytes)
	case !utf8.ValidString(q) || strings.IndexByte(q, 0) >= 0:
		return memory.Errorf(memory.ErrInvalidArgument, "queue name is not valid UTF-8 or contains a NUL byte")
	}
	return nil
}

// StaleLease returns the error of a lease that is no longer its item's
// claim: memory.ErrConflict.
func StaleLease(l Lease) error {
	return memory.Errorf(memory.ErrConflict, "work item %q of queue %q is no longer held by this claim: it was claimed again, released or completed", l.ID, l.Queue)
}

// LeaseEnd reads clock c and returns now and the end of a lease of the
// given duration taken now, both in unix nanoseconds; a lease ending after
// the year 2262 is memory.ErrInvalidArgument.
func LeaseEnd(c memory.Clock, lease time.Duration) (now, until int64, err error) {
	now, err = c.Nanos()
	if err != nil {
		return 0, 0, err
	}
	if now > math.MaxInt64-int64(lease) {
		return 0, 0, memory.Errorf(memory.ErrInvalidArgument, "a lease of %s from %s ends after the year 2262", lease, time.Unix(0, now).UTC())
	}
	return now, now + int64(lease), nil
}

// NewLeaseToken returns a fresh claim token: 128 random bits in hex.
func NewLeaseToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b[:])
}
